/**
 * The reference server's `KEY_WRAPPING_SECRET` (security.md, "Key custody": storage holds the
 * private signing keys wrapped): with it, no private key is in the database or in a backup of it as
 * text; the server starts only with the secret the keys were wrapped with, and says so in one line
 * otherwise; a database whose keys were stored in clear keeps working with it, and `rotate-keys`
 * with the secret stores their successors wrapped. A malformed secret is refused naming it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteDatabase } from '../../src/storage/sqlite.js';
import { type Chain, newChain, signIn, userinfo } from '../faults/load.js';
import { ADA } from '../helpers/school-flow.js';
import {
  assertCompiledServerFresh,
  freePort,
  runCli,
  startServerProcess,
  stopAllServerProcesses,
  unexpectedStderr,
} from '../helpers/server-process.js';

const root = mkdtempSync(join(tmpdir(), 'portcullis-key-wrapping-'));
const secret = randomBytes(32).toString('base64');

beforeAll(() => assertCompiledServerFresh());
afterAll(async () => {
  await stopAllServerProcesses();
  rmSync(root, { recursive: true, force: true });
});

/** The stored private keys of a data directory: kid and whether the stored text is a clear JWK. */
async function storedKeys(dataDir: string): Promise<{ kid: string; clear: boolean }[]> {
  const db = await openSqliteDatabase({ dataDir });
  try {
    return db
      .all<{ kid: string; private_jwk: string }>('SELECT kid, private_jwk FROM portcullis_signing_keys')
      .map(({ kid, private_jwk }) => ({ kid, clear: private_jwk.includes('"d"') }));
  } finally {
    db.close();
  }
}

/** Starts the server expecting it to refuse: its one line on stderr. */
async function refusal(env: Record<string, string>): Promise<string> {
  const failure = await startServerProcess(env).then(
    () => 'it started',
    (error: unknown) => String(error),
  );
  const lines = failure.split('\n').filter((line) => line.startsWith('course-school:'));
  expect(lines, failure).toHaveLength(1);
  return lines[0]!;
}

describe('KEY_WRAPPING_SECRET', () => {
  it('stores the signing keys wrapped, out of the database and its backups as text, and starts only with that secret', async () => {
    const dataDir = join(root, 'wrapped');
    const env = {
      PORT: String(await freePort()),
      DATA_DIR: dataDir,
      RATE_LIMIT: 'off',
      KEY_WRAPPING_SECRET: secret,
    };
    let server = await startServerProcess(env);
    const chain: Chain = await newChain(server, await signIn(server, ADA.email, ADA.password));
    expect(await userinfo(server, chain.accessToken)).toBe(200);
    const backup = join(root, 'wrapped-backup.sqlite');
    const backedUp = await runCli({ DATA_DIR: dataDir }, ['backup', backup]);
    expect(backedUp.code).toBe(0);
    await server.stop();

    const keys = await storedKeys(dataDir);
    expect(keys.length).toBeGreaterThanOrEqual(2);
    expect(keys.filter((key) => key.clear)).toEqual([]);
    // No private key parameter anywhere in the backup's bytes (a clear EC or RSA JWK has "d").
    expect(readFileSync(backup).includes('"d":"')).toBe(false);

    const { KEY_WRAPPING_SECRET: _unset, ...withoutSecret } = env;
    const without = await refusal(withoutSecret);
    expect(without).toContain('signing_keys_unavailable');
    expect(without).toContain('KEY_WRAPPING_SECRET must be the secret the keys were stored with');
    const another = await refusal({ ...env, KEY_WRAPPING_SECRET: randomBytes(32).toString('base64url') });
    expect(another).toContain('KEY_WRAPPING_SECRET does not open this signing key');

    server = await startServerProcess(env);
    expect(await userinfo(server, chain.accessToken)).toBe(200);
    await server.stop();
  }, 60_000);

  it('keeps a database whose keys were stored in clear working, and rotate-keys stores their successors wrapped', async () => {
    const dataDir = join(root, 'clear');
    const env = { PORT: String(await freePort()), DATA_DIR: dataDir, RATE_LIMIT: 'off' };
    let server = await startServerProcess(env);
    const chain: Chain = await newChain(server, await signIn(server, ADA.email, ADA.password));
    await server.stop();
    const clear = await storedKeys(dataDir);
    expect(clear.every((key) => key.clear)).toBe(true);

    server = await startServerProcess({ ...env, KEY_WRAPPING_SECRET: secret });
    expect(await userinfo(server, chain.accessToken)).toBe(200);
    expect(server.stderr()).toContain('a signing key is stored unwrapped: rotate the keys');
    const rotated = await runCli({ DATA_DIR: dataDir, KEY_WRAPPING_SECRET: secret }, [
      'rotate-keys',
      '--immediate',
    ]);
    expect(unexpectedStderr(rotated.stderr).filter((line) => !line.includes('stored unwrapped'))).toEqual([]);
    expect(rotated.code).toBe(0);
    await server.stop();

    const after = await storedKeys(dataDir);
    const added = after.filter((key) => !clear.some((old) => old.kid === key.kid));
    expect(added).toHaveLength(2);
    expect(added.every((key) => !key.clear)).toBe(true);
    server = await startServerProcess({ ...env, KEY_WRAPPING_SECRET: secret });
    expect(await userinfo(server, chain.accessToken)).toBe(200);
    await server.stop();
  }, 60_000);

  it('refuses a secret that is not 32 bytes of base64, naming the variable', async () => {
    for (const value of ['', 'short', randomBytes(31).toString('base64'), `${secret.slice(0, 42)}!=`]) {
      const line = await refusal({ PORT: '0', DATA_DIR: join(root, 'refused'), KEY_WRAPPING_SECRET: value });
      expect(line).toBe(
        'course-school: invalid environment: KEY_WRAPPING_SECRET: must be 32 bytes in base64 (e.g. `openssl rand -base64 32`)',
      );
    }
  });
});
