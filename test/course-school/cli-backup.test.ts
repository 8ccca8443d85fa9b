/**
 * The reference server's `backup` command (FLT-04, durability of the embedded default, as an
 * operator keeps it): a consistent copy of the SQLite database, taken while the server runs under a
 * load of refreshes, that a server started on it serves from (the account, the signing keys, every
 * token acknowledged before the copy). The copy is its account's only; it never overwrites a file,
 * never creates a database where there is none, and points elsewhere where the data is not in the
 * SQLite file.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteDatabase } from '../../src/storage/sqlite.js';
import { tokenKey } from '../../src/tokens/token-key.js';
import { type Chain, newChain, refresh, signIn, userinfo } from '../faults/load.js';
import { ADA } from '../helpers/school-flow.js';
import {
  assertCompiledServerFresh,
  freePort,
  runCli,
  startServerProcess,
  stopAllServerProcesses,
  unexpectedStderr,
} from '../helpers/server-process.js';

const root = mkdtempSync(join(tmpdir(), 'portcullis-cli-backup-'));

afterAll(async () => {
  await stopAllServerProcesses();
  rmSync(root, { recursive: true, force: true });
});

describe('cli.js backup', () => {
  const dataDir = join(root, 'data');
  const backups = join(root, 'backups');
  let env: Record<string, string>;

  beforeAll(() => {
    assertCompiledServerFresh();
    mkdirSync(backups);
  });

  /** Runs `backup <file>`: checks it succeeded quietly and wrote a file for this account only. */
  async function backUp(file: string): Promise<void> {
    const run = await runCli({ DATA_DIR: dataDir }, ['backup', file]);
    expect(unexpectedStderr(run.stderr)).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`to ${file}`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  }

  /** Starts a server on a new DATA_DIR holding `file` as portcullis.sqlite, as the README restores. */
  async function restore(file: string) {
    const restored = mkdtempSync(join(root, 'restored-'));
    copyFileSync(file, join(restored, 'portcullis.sqlite'));
    return startServerProcess({ ...env, DATA_DIR: restored });
  }

  it('copies what the server committed, the last commits included, and the server on the copy serves them', async () => {
    // The same port for every server: the issuer, and so every token's iss and aud, derive from it.
    env = { PORT: String(await freePort()), DATA_DIR: dataDir, RATE_LIMIT: 'off' };
    const server = await startServerProcess(env);
    const cookie = await signIn(server, ADA.email, ADA.password);
    const kept: Chain = await newChain(server, cookie);

    // Everything so far (the keys, the account, the client, its tokens) is still in the -wal
    // file, far from the 1,000 pages of a checkpoint: a copy of portcullis.sqlite alone has none
    // of it, and a server started on that copy would make new keys and find no token.
    const quiet = join(backups, 'quiet.sqlite');
    await backUp(quiet);
    await server.stop();
    const again = await restore(quiet);
    expect(await userinfo(again, kept.accessToken)).toBe(200);
    expect((await refresh(again, kept.clientId, kept.refreshToken)).status).toBe(200);
    expect(await signIn(again, ADA.email, ADA.password)).not.toBe('');
    await again.stop();
  }, 60_000);

  it('copies a consistent database while refreshes commit, with every token acknowledged before it', async () => {
    const server = await startServerProcess(env);
    const cookie = await signIn(server, ADA.email, ADA.password);
    const busy = [await newChain(server, cookie), await newChain(server, cookie)];
    let stop = false;
    let refreshed = 0;
    const load = Promise.all(
      busy.map(async (chain) => {
        while (!stop) {
          const answer = await refresh(server, chain.clientId, chain.refreshToken);
          expect(answer.status).toBe(200);
          chain.refreshToken = answer.body.refresh_token!;
          refreshed++;
        }
      }),
    );
    while (refreshed < 20) await new Promise((resolve) => setImmediate(resolve));
    const acknowledged = busy.map((chain) => chain.refreshToken);
    const before = refreshed;
    const file = join(backups, 'busy.sqlite');
    await backUp(file);
    const during = refreshed - before;
    stop = true;
    await load;
    await server.stop();

    expect(during).toBeGreaterThan(0);
    const copy = await openSqliteDatabase({ path: file });
    try {
      expect(copy.get<{ integrity_check: string }>('PRAGMA integrity_check')?.integrity_check).toBe('ok');
      expect(copy.all('PRAGMA foreign_key_check')).toEqual([]);
      for (const token of acknowledged) {
        const found = copy.get(
          'SELECT 1 AS found FROM portcullis_refresh_tokens WHERE token_hash = ?',
          await tokenKey(token),
        );
        expect(found).toEqual({ found: 1 });
      }
    } finally {
      copy.close();
    }
    const again = await restore(file);
    expect(await signIn(again, ADA.email, ADA.password)).not.toBe('');
    await again.stop();
  }, 60_000);

  it('never writes over an existing file', async () => {
    const existing = join(backups, 'existing.sqlite');
    writeFileSync(existing, 'yesterday');
    const run = await runCli({ DATA_DIR: dataDir }, ['backup', existing]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${existing} exists already`);
    expect(readFileSync(existing, 'utf8')).toBe('yesterday');
  });

  it('creates no database where there is none, and no backup file', async () => {
    const empty = join(root, 'empty');
    const file = join(backups, 'nothing.sqlite');
    const run = await runCli({ DATA_DIR: empty }, ['backup', file]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`there is no database at ${join(empty, 'portcullis.sqlite')}`);
    expect(() => statSync(empty)).toThrow(/ENOENT/);
    expect(() => statSync(file)).toThrow(/ENOENT/);
  });

  it('points elsewhere where the data is not in the SQLite file, and needs exactly one file', async () => {
    const file = join(backups, 'elsewhere.sqlite');
    const postgres = await runCli({ DATABASE_URL: 'postgres://school@127.0.0.1:1/school' }, ['backup', file]);
    expect(postgres.code).toBe(1);
    expect(postgres.stderr).toContain('pg_dump');
    const pglite = await runCli({ STORAGE: 'pglite', DATA_DIR: join(root, 'pglite') }, ['backup', file]);
    expect(pglite.stderr).toContain('stop the server, then copy DATA_DIR');
    const memory = await runCli({ STORAGE: 'memory' }, ['backup', file]);
    expect(memory.stderr).toContain('keeps nothing to back up');
    expect(() => statSync(file)).toThrow(/ENOENT/);

    for (const args of [['backup'], ['backup', file, file], ['backup', '']]) {
      const run = await runCli({ DATA_DIR: dataDir }, args);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('backup takes one argument: the new file');
    }
  });
});
