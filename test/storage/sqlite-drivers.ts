/**
 * The SQLite drivers the tests run against on this runtime: `node:sqlite` from Node.js 22.13, and
 * `@photostructure/sqlite` (a devDependency, N-API: every Node line). Under `CI=true` a driver this
 * runtime should have fails the run instead of being skipped. Also the SQLite tests' shared helpers:
 * scratch directories, two connections to one file, a database with some methods replaced.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  loadSqliteDriver,
  type SqliteDriver,
  type SqliteDriverName,
} from '../../src/storage/sqlite/driver.js';
import { openSqliteDatabase, type SqliteDatabase } from '../../src/storage/sqlite.js';

export const TESTED_DRIVERS: readonly SqliteDriverName[] = ['node:sqlite', '@photostructure/sqlite'];

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
/** node:sqlite is unflagged from 22.13. */
export const hasNodeSqlite = major > 22 || (major === 22 && minor >= 13);

export async function availableDrivers(): Promise<Map<SqliteDriverName, SqliteDriver>> {
  const found = new Map<SqliteDriverName, SqliteDriver>();
  for (const name of TESTED_DRIVERS) {
    try {
      found.set(name, await loadSqliteDriver({ driver: name }));
    } catch (error) {
      if (process.env['CI'] === 'true' && (name !== 'node:sqlite' || hasNodeSqlite)) throw error;
    }
  }
  return found;
}

/** A fresh directory for one test's database files, and its removal. */
export function scratchDir(): { dir: string; file: (name?: string) => string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-sqlite-test-'));
  return {
    dir,
    file: (name = 'db.sqlite') => join(dir, name),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

type Overridable = Pick<SqliteDatabase, 'run' | 'get' | 'all' | 'exec' | 'transaction'>;

/** `db` with some of its methods replaced (to count or log statements, or to inject a failure). */
export function wrapDatabase(db: SqliteDatabase, overrides: Partial<Overridable>): SqliteDatabase {
  return {
    get file() {
      return db.file;
    },
    get driver() {
      return db.driver;
    },
    get sqliteVersion() {
      return db.sqliteVersion;
    },
    get inTransaction() {
      return db.inTransaction;
    },
    run: (sql, ...params) => db.run(sql, ...params),
    get: (sql, ...params) => db.get(sql, ...params),
    all: (sql, ...params) => db.all(sql, ...params),
    exec: (sql) => db.exec(sql),
    transaction: (fn) => db.transaction(fn),
    close: () => db.close(),
    ...overrides,
  };
}

/**
 * Two connections to `file`, with a `notes (id, body)` table; `closers` gets their closing.
 */
export async function twoConnections(
  file: string,
  closers: Array<() => unknown>,
): Promise<{ a: SqliteDatabase; b: SqliteDatabase }> {
  const a = await openSqliteDatabase({ path: file });
  const b = await openSqliteDatabase({ path: file });
  closers.push(
    () => a.close(),
    () => b.close(),
  );
  a.exec('CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  return { a, b };
}
