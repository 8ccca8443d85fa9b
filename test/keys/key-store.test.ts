import { createLocalJWKSet, decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/context.js';
import { secureRandom } from '../../src/core/crypto.js';
import { DEFAULTS } from '../../src/defaults.js';
import { JWKS_MAX_AGE_SECONDS, KeyStore } from '../../src/keys/key-store.js';
import { InvalidOptionsError } from '../../src/options.js';
import { createAuthorizationServer } from '../../src/server.js';
import { memoryStorage } from '../../src/storage/memory.js';
import type { Storage } from '../../src/storage/types.js';
import { Harness, ISSUER, json } from '../helpers/harness.js';

const harnesses: Harness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});

async function jwks(h: Harness) {
  return json(await h.send({ method: 'GET', url: '/.well-known/jwks.json' })) as {
    keys: Record<string, unknown>[];
  };
}

describe('signing keys', () => {
  it('generates one RS256 and one ES256 key on first start, persists them, and reuses them on restart', async () => {
    const h = await Harness.start();
    harnesses.push(h);
    const first = await jwks(h);
    expect(first.keys.map((k) => k.alg).sort()).toEqual(['ES256', 'RS256']);
    for (const key of first.keys)
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key[member]).toBeUndefined();
    const second = await Harness.start({ storage: h.storage });
    harnesses.push(second);
    expect((await jwks(second)).keys.map((k) => k.kid).sort()).toEqual(first.keys.map((k) => k.kid).sort());
  });

  it('ABU-10 rotation: new keys are published first and sign only once every JWKS cache has seen them', async () => {
    const h = await Harness.start();
    harnesses.push(h);
    const oldKids = (await jwks(h)).keys.map((k) => k.kid);
    await h.server.rotateSigningKeys();
    // Published at once, beside the current keys...
    const published = (await jwks(h)).keys;
    expect(published).toHaveLength(4);
    const newKids = published.map((k) => k.kid).filter((kid) => !oldKids.includes(kid));
    // ...but the current keys sign for the JWKS cache lifetime (max-age) plus the refresh interval.
    const response = await h.send({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(response.headers['cache-control']).toBe(`public, max-age=${JWKS_MAX_AGE_SECONDS}`);
    const lead = JWKS_MAX_AGE_SECONDS + DEFAULTS.keys.refreshIntervalSeconds;
    h.clock.advance(lead - 1);
    const during = await h.tokens();
    expect(oldKids).toContain(decodeProtectedHeader(during.body.access_token as string).kid);
    expect(oldKids).toContain(decodeProtectedHeader(during.body.id_token as string).kid);
    h.clock.advance(1);
    const after = await h.tokens();
    expect(newKids).toContain(decodeProtectedHeader(after.body.access_token as string).kid);
    expect(newKids).toContain(decodeProtectedHeader(after.body.id_token as string).kid);
  });

  it('an immediate rotation (a leaked key) signs with the new keys at once', async () => {
    const h = await Harness.start();
    harnesses.push(h);
    const oldKids = (await jwks(h)).keys.map((k) => k.kid);
    await h.server.rotateSigningKeys({ immediate: true });
    const after = await h.tokens();
    expect(oldKids).not.toContain(decodeProtectedHeader(after.body.access_token as string).kid);
  });

  it('rotation: old keys stay published so earlier tokens still verify, then leave', async () => {
    const h = await Harness.start();
    harnesses.push(h);
    const before = await h.tokens();
    const oldKids = (await jwks(h)).keys.map((k) => k.kid);
    await h.server.rotateSigningKeys({ immediate: true });
    const after = await h.tokens();
    const published = (await jwks(h)).keys;
    expect(published).toHaveLength(4);
    const keySet = createLocalJWKSet({ keys: published as never });
    for (const body of [before.body, after.body]) {
      await expect(
        jwtVerify(body.access_token as string, keySet, {
          issuer: ISSUER,
          currentDate: new Date(h.clock.ms()),
        }),
      ).resolves.toBeDefined();
    }
    expect(oldKids).toContain(decodeProtectedHeader(before.body.access_token as string).kid);
    expect(oldKids).not.toContain(decodeProtectedHeader(after.body.access_token as string).kid);
    // Once everything the old keys signed has expired, they leave the JWKS.
    h.clock.advance(3600 + 300 + 120);
    const later = await createAuthorizationServer({
      issuer: ISSUER,
      storage: h.storage,
      clock: h.clock.ms,
      housekeepingIntervalSeconds: 0,
    });
    const response = await later.handle({ method: 'GET', url: '/.well-known/jwks.json', headers: {} });
    const kids = (JSON.parse(response!.body!) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
    expect(kids).toHaveLength(2);
    for (const kid of oldKids) expect(kids).not.toContain(kid);
  });

  it('a second instance on the same storage picks up a rotation made by the first', async () => {
    const storage = memoryStorage();
    const a = await Harness.start({ storage });
    const b = await Harness.start({ storage });
    harnesses.push(a, b);
    await jwks(a);
    await jwks(b);
    await a.server.rotateSigningKeys();
    const token = (await a.tokens()).body.access_token as string;
    // b verifies a's token through its storage verifier and publishes the new key after a kid miss or refresh.
    expect(await b.server.verifier.verify(token)).not.toBeNull();
    b.clock.advance(61);
    const kid = decodeProtectedHeader(token).kid;
    expect((await jwks(b)).keys.map((k) => k.kid)).toContain(kid);
  });

  it('signs with private JWKs from options and never touches storage keys', async () => {
    const rs = await generateKeyPair('RS256', { extractable: true });
    const es = await generateKeyPair('ES256', { extractable: true });
    const privateJwks = [
      { ...(await exportJWK(rs.privateKey)), alg: 'RS256', kid: 'rs-1' },
      { ...(await exportJWK(es.privateKey)), alg: 'ES256', kid: 'es-1' },
    ];
    const h = await Harness.start({ options: { keys: { privateJwks } } });
    harnesses.push(h);
    expect((await jwks(h)).keys.map((k) => k.kid).sort()).toEqual(['es-1', 'rs-1']);
    expect(await h.storage.keys.list()).toHaveLength(0);
    const { body } = await h.tokens();
    expect(decodeProtectedHeader(body.id_token as string).kid).toBe('rs-1');
    expect(decodeProtectedHeader(body.access_token as string).kid).toBe('es-1');
    await expect(h.server.rotateSigningKeys()).rejects.toThrow(/privateJwks/);
  });

  it('refuses public keys in privateJwks, naming the option', async () => {
    const rs = await generateKeyPair('RS256', { extractable: true });
    const starting = createAuthorizationServer({
      issuer: ISSUER,
      storage: memoryStorage(),
      keys: { privateJwks: [{ ...(await exportJWK(rs.publicKey)), alg: 'RS256' }], accessTokenAlg: 'RS256' },
    });
    await expect(starting).rejects.toThrow(InvalidOptionsError);
    await expect(starting).rejects.toThrow(/options\.keys\.privateJwks\.0\.d: every key must be private/);
  });
});

describe('instances starting at once on one empty storage (docs/storage.md)', () => {
  const runtime = { clock: Date.now, random: secureRandom, logger: silentLogger };
  const options = {
    algs: ['RS256', 'ES256'] as const,
    privateJwks: undefined,
    refreshIntervalSeconds: 60,
    retentionSeconds: 3600,
  };

  async function signingKids(store: KeyStore): Promise<string[]> {
    return [(await store.signingKey('RS256')).kid, (await store.signingKey('ES256')).kid];
  }

  it('store one key per algorithm, and both publish and sign with them', async () => {
    const storage = memoryStorage();
    const [a, b] = [new KeyStore(storage, runtime, options), new KeyStore(storage, runtime, options)];
    // Both read the empty key table, then generate; the later one finds the earlier one's key.
    await Promise.all([a.init(), b.init()]);
    expect((await storage.keys.list()).map((k) => k.alg).sort()).toEqual(['ES256', 'RS256']);
    expect(await a.jwks()).toBe(await b.jwks());
    expect(await signingKids(a)).toEqual(await signingKids(b));
  });

  it('converge on first use when both stored a key and the first read before the second stored', async () => {
    const storage = memoryStorage();
    let aDone!: () => void;
    const aFinished = new Promise<void>((resolve) => {
      aDone = resolve;
    });
    let bChecked!: () => void;
    const bCheckedAgain = new Promise<void>((resolve) => {
      bChecked = resolve;
    });
    let bLists = 0;
    // A stores its key only after B's check before storing (both saw none); B stores only after A finished.
    const forA: Storage = {
      ...storage,
      keys: {
        ...storage.keys,
        add: async (key) => {
          await bCheckedAgain;
          await storage.keys.add(key);
        },
      },
    };
    const forB: Storage = {
      ...storage,
      keys: {
        ...storage.keys,
        list: async () => {
          const keys = await storage.keys.list();
          if (++bLists === 2) bChecked();
          return keys;
        },
        add: async (key) => {
          await aFinished;
          await storage.keys.add(key);
        },
      },
    };
    const single = { ...options, algs: ['ES256'] as const };
    const [a, b] = [new KeyStore(forA, runtime, single), new KeyStore(forB, runtime, single)];
    await Promise.all([a.init().then(aDone), b.init()]);
    expect(await storage.keys.list()).toHaveLength(2);
    const [kidA, kidB] = [(await a.signingKey('ES256')).kid, (await b.signingKey('ES256')).kid];
    expect(kidA).toBe(kidB);
    expect(await a.jwks()).toBe(await b.jwks());
  });
});
