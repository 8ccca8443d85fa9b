/**
 * ABU-10, `keys.wrapping`: with a wrapping hook, the private signing keys the server generates and
 * rotates are stored wrapped, on every backend (memory, SQLite, PostgreSQL store what they are
 * given); a server with the same hook reads them back and signs with them; one whose unwrap fails,
 * or one without the hook, does not start (`signing_keys_unavailable`).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/context.js';
import type { KeyWrapping } from '../../src/keys/key-store.js';
import { InvalidOptionsError } from '../../src/options.js';
import { createAuthorizationServer } from '../../src/server.js';
import { StartupError } from '../../src/startup.js';
import { memoryStorage } from '../../src/storage/memory.js';
import { postgresStorage } from '../../src/storage/postgres.js';
import { sqliteStorage } from '../../src/storage/sqlite.js';
import type { Storage } from '../../src/storage/types.js';
import { Harness, ISSUER, json } from '../helpers/harness.js';
import { randomSchemaName, requirePostgres } from '../helpers/services.js';

/** AES-256-GCM with `secret`: what an environment secret or a KMS would do. */
function aesWrapping(secret: Buffer): KeyWrapping & { unwrapped: number } {
  const wrapping = {
    unwrapped: 0,
    wrap(privateJwk: string) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', secret, iv);
      const sealed = Buffer.concat([cipher.update(privateJwk, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `v1.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
    },
    unwrap(wrapped: string) {
      const [, iv = '', sealed = ''] = wrapped.split('.');
      const bytes = Buffer.from(sealed, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', secret, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      wrapping.unwrapped++;
      return Buffer.concat([
        decipher.update(bytes.subarray(0, bytes.length - 16)),
        decipher.final(),
      ]).toString('utf8');
    },
  };
  return wrapping;
}

const SECRET = randomBytes(32);

async function expectWrappedStorage(storage: Storage): Promise<void> {
  const wrapping = aesWrapping(SECRET);
  const first = await Harness.start({ storage, options: { keys: { wrapping }, logger: silentLogger } });
  try {
    const stored = await storage.keys.list();
    expect(stored.length).toBeGreaterThanOrEqual(2);
    for (const record of stored) {
      expect(record.privateJwk.startsWith('v1.')).toBe(true);
      expect(record.privateJwk).not.toContain('"d"');
      expect(() => JSON.parse(record.privateJwk)).toThrow();
    }
    const { body } = await first.tokens();
    // A second server with the same hook reads the keys back: same key set, and it signs with them.
    const again = aesWrapping(SECRET);
    const second = await Harness.start({
      storage,
      options: { keys: { wrapping: again }, logger: silentLogger },
    });
    try {
      expect(again.unwrapped).toBeGreaterThanOrEqual(2);
      const keys = json(await second.send({ method: 'GET', url: '/.well-known/jwks.json' })).keys as never[];
      await expect(
        jwtVerify(String(body.access_token), createLocalJWKSet({ keys }), {
          issuer: ISSUER,
          currentDate: new Date(first.clock.ms()),
        }),
      ).resolves.toBeDefined();
      const fromSecond = (await second.tokens()).body.access_token as string;
      expect(decodeProtectedHeader(fromSecond).kid).toBe(
        decodeProtectedHeader(String(body.access_token)).kid,
      );
      // Rotated keys are stored wrapped too.
      await second.server.rotateSigningKeys();
      for (const record of await storage.keys.list()) expect(record.privateJwk.startsWith('v1.')).toBe(true);
    } finally {
      await second.close();
    }
  } finally {
    await first.close();
  }
}

describe('keys.wrapping', () => {
  it('memory: stores private keys wrapped, and a server with the same hook reads them back', async () => {
    await expectWrappedStorage(memoryStorage());
  });

  it('SQLite: the same', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pc-wrap-'));
    const storage = sqliteStorage({ path: join(dir, 'auth.db') });
    try {
      await expectWrappedStorage(storage);
    } finally {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a wrong unwrap fails the start with StartupError signing_keys_unavailable', async () => {
    const storage = memoryStorage();
    const first = await createAuthorizationServer({
      issuer: ISSUER,
      storage,
      keys: { wrapping: aesWrapping(SECRET) },
      logger: silentLogger,
    });
    await first.close();
    const failure = await createAuthorizationServer({
      issuer: ISSUER,
      storage,
      keys: { wrapping: aesWrapping(randomBytes(32)) },
      logger: silentLogger,
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StartupError);
    expect((failure as StartupError).code).toBe('signing_keys_unavailable');
    // The message names no key material.
    expect((failure as StartupError).message).not.toMatch(/"d"|v1\./);
    // Without the hook, wrapped keys are not usable either.
    const unhooked = await createAuthorizationServer({ issuer: ISSUER, storage, logger: silentLogger }).catch(
      (error: unknown) => error,
    );
    expect((unhooked as StartupError).code).toBe('signing_keys_unavailable');
  });

  it('keys stored in the clear before wrapping was configured still load, with a warning to rotate', async () => {
    const storage = memoryStorage();
    await (await createAuthorizationServer({ issuer: ISSUER, storage, logger: silentLogger })).close();
    const warnings: string[] = [];
    const server = await createAuthorizationServer({
      issuer: ISSUER,
      storage,
      keys: { wrapping: aesWrapping(SECRET) },
      logger: { ...silentLogger, warn: (message) => void warnings.push(message) },
    });
    expect(warnings).toContain('a signing key is stored unwrapped: rotate the keys to store them wrapped');
    await server.rotateSigningKeys({ immediate: true });
    const fresh = (await storage.keys.list()).filter((record) => record.retiresAt === undefined);
    for (const record of fresh) expect(record.privateJwk.startsWith('v1.')).toBe(true);
    await server.close();
  });

  it('is refused beside privateJwks, which are never stored', async () => {
    await expect(
      createAuthorizationServer({
        issuer: ISSUER,
        storage: memoryStorage(),
        keys: { privateJwks: [{ kty: 'EC', alg: 'ES256', d: 'x' } as never], wrapping: aesWrapping(SECRET) },
      }),
    ).rejects.toThrow(InvalidOptionsError);
  });
});

const postgres = await requirePostgres('key wrapping on PostgreSQL');

describe.skipIf(postgres === undefined)('keys.wrapping on PostgreSQL', () => {
  const schema = randomSchemaName();
  afterAll(async () => {
    await postgres?.dropSchema(schema);
  });

  it('stores private keys wrapped, and a server with the same hook reads them back', async () => {
    const storage = postgresStorage({ connectionString: postgres!.url }, { schema });
    try {
      await expectWrappedStorage(storage);
    } finally {
      await storage.close();
    }
  });
});
