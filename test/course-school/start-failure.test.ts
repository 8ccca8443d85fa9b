/**
 * A start that fails says why in one line and exits with code 1, for the operator reading the
 * service's log: the library's `StartupError` (here a schema it cannot migrate) with its code and
 * the database's words, a database that cannot be reached at all, and a `DATA_DIR` whose SQLite
 * file or directory cannot be used (named, with what to do, and left as it was).
 *
 * The first needs PostgreSQL (`DATABASE_URL`, default postgres://postgres@127.0.0.1:5432/test):
 * skipped without it, FAILS without it when `CI=true`. It creates `pc_e2e_<random>` and drops it.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertCompiledServerFresh, freePort, MAIN, ROOT } from '../helpers/server-process.js';
import { requirePostgres } from '../helpers/services.js';

const postgres = await requirePostgres('the reference server failing to migrate its PostgreSQL schema');

/** Runs the compiled server with only `env` (and PATH) until it exits. */
async function runToExit(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

/** The lines of `text`, without empty ones. */
const linesOf = (text: string) => text.split('\n').filter((line) => line !== '');

beforeAll(() => {
  assertCompiledServerFresh();
});

describe('a start that fails', { timeout: 60_000 }, () => {
  it('with the database unreachable: exit code 1 and one line naming the connection failure', async () => {
    const closed = await freePort();
    const result = await runToExit({ DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/school` });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(linesOf(result.stderr)).toEqual([
      expect.stringMatching(/^course-school: could not start: .*ECONNREFUSED/),
    ]);
  });

  describe('with a DATA_DIR the SQLite default cannot use', () => {
    let scratch: string;
    beforeAll(() => {
      scratch = mkdtempSync(join(tmpdir(), 'course-school-start-failure-'));
    });
    afterAll(() => {
      rmSync(scratch, { recursive: true, force: true });
    });

    it('a file that is not a SQLite database: one line naming it and what to do; the file is left as it was', async () => {
      const dataDir = join(scratch, 'not-sqlite');
      const file = join(dataDir, 'portcullis.sqlite');
      const bytes = randomBytes(8192);
      mkdirSync(dataDir);
      writeFileSync(file, bytes);
      const result = await runToExit({ DATA_DIR: dataDir });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(linesOf(result.stderr)).toEqual([
        `course-school: could not start: SQLite cannot use ${file} (file is not a database): it is not a SQLite database (another kind of file, or an encrypted one): give the storage another path, or move this file aside`,
      ]);
      expect(readFileSync(file).equals(bytes)).toBe(true);
    });

    it('a file where the data directory should be: one line naming that path; the file is left as it was', async () => {
      const dataDir = join(scratch, 'a-file');
      writeFileSync(dataDir, 'not a directory\n');
      const result = await runToExit({ DATA_DIR: dataDir });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      const lines = linesOf(result.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(
        `course-school: could not start: the SQLite data directory ${dataDir} cannot be created (EEXIST`,
      );
      expect(lines[0]).toMatch(
        /: dataDir must name a directory, or a path where this process can create one$/,
      );
      expect(readFileSync(dataDir, 'utf8')).toBe('not a directory\n');
    });
  });
});

describe.skipIf(postgres === undefined)(
  'a start the library refuses (StartupError)',
  { timeout: 60_000 },
  () => {
    const name = `pc_e2e_${randomBytes(8).toString('hex')}`;
    const admin = async (sql: string, database?: string) => {
      const url = new URL(postgres!.url);
      if (database !== undefined) url.pathname = `/${database}`;
      const client = new pg.Client({ connectionString: url.href });
      await client.connect();
      try {
        await client.query(sql);
      } finally {
        await client.end();
      }
    };
    afterAll(async () => {
      await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    });

    it('with a storage schema it cannot migrate: exit code 1 and one line with the code and the database’s words', async () => {
      await admin(`CREATE DATABASE "${name}"`);
      // Someone else's table where the library keeps its schema version.
      await admin(
        'CREATE SCHEMA portcullis; CREATE TABLE portcullis.portcullis_migrations (note text)',
        name,
      );
      const url = new URL(postgres!.url);
      url.pathname = `/${name}`;
      const result = await runToExit({ DATABASE_URL: url.href });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      const lines = linesOf(result.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^course-school: the authorization server did not start: .*column "version" does not exist.*\(storage_migration_failed\)$/,
      );
    });
  },
);
