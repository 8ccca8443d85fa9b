/**
 * The SQLite drivers the tests run against on this runtime: `node:sqlite` from Node.js 22.13, and
 * `@photostructure/sqlite` (a devDependency, N-API: every Node line). Under `CI=true` a driver this
 * runtime should have fails the run instead of being skipped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  loadSqliteDriver,
  type SqliteDriver,
  type SqliteDriverName,
} from '../../src/storage/sqlite/driver.js';

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
