import { describe, expect, it } from 'vitest';
import {
  loadSqliteDriver,
  sqliteVersionAtLeast,
  WAL_RESET_FIX_VERSION,
} from '../../src/storage/sqlite/driver.js';
import { isSqliteBusy, isSqliteConstraint, SqliteUnavailableError } from '../../src/storage/sqlite/errors.js';

const builtinSqlite = process.versions['sqlite'];
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 13);

describe('loadSqliteDriver', () => {
  it('picks node:sqlite when its SQLite has the WAL-reset fix, else the prebuilt addon', async () => {
    const driver = await loadSqliteDriver();
    const builtinIsSafe =
      hasNodeSqlite &&
      builtinSqlite !== undefined &&
      sqliteVersionAtLeast(builtinSqlite, WAL_RESET_FIX_VERSION);
    expect(driver.name).toBe(builtinIsSafe ? 'node:sqlite' : '@photostructure/sqlite');
    expect(sqliteVersionAtLeast(driver.sqliteVersion, WAL_RESET_FIX_VERSION)).toBe(true);
  });

  it.runIf(!hasNodeSqlite)(
    'says which Node.js node:sqlite needs when asked for it on an older runtime',
    async () => {
      await expect(loadSqliteDriver({ driver: 'node:sqlite' })).rejects.toThrow(SqliteUnavailableError);
      await expect(loadSqliteDriver({ driver: 'node:sqlite' })).rejects.toThrow(/22\.13/);
    },
  );
});

describe('sqliteVersionAtLeast', () => {
  it('compares versions numerically, part by part', () => {
    expect(sqliteVersionAtLeast('3.51.3', '3.51.3')).toBe(true);
    expect(sqliteVersionAtLeast('3.51.2', '3.51.3')).toBe(false);
    expect(sqliteVersionAtLeast('3.53.0', '3.51.3')).toBe(true);
    expect(sqliteVersionAtLeast('3.9.0', '3.51.3')).toBe(false);
    expect(sqliteVersionAtLeast('4.0.0', '3.51.3')).toBe(true);
  });
});

describe('driver error classification', () => {
  it('recognises SQLITE_BUSY in both driver shapes, extended codes included', () => {
    expect(isSqliteBusy({ code: 'ERR_SQLITE_ERROR', errcode: 5 })).toBe(true);
    expect(isSqliteBusy({ code: 'ERR_SQLITE_ERROR', errcode: 517 })).toBe(true); // BUSY_SNAPSHOT
    expect(isSqliteBusy({ code: 'SQLITE_BUSY' })).toBe(true);
    expect(isSqliteBusy({ code: 'SQLITE_BUSY_SNAPSHOT' })).toBe(true);
    expect(isSqliteBusy({ code: 'ERR_SQLITE_ERROR', errcode: 1555 })).toBe(false);
    expect(isSqliteBusy(new Error('database is locked'))).toBe(false);
    expect(isSqliteBusy(undefined)).toBe(false);
  });

  it('recognises constraint violations in both driver shapes', () => {
    expect(isSqliteConstraint({ code: 'ERR_SQLITE_ERROR', errcode: 1555 })).toBe(true);
    expect(isSqliteConstraint({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' })).toBe(true);
    expect(isSqliteConstraint({ code: 'SQLITE_BUSY' })).toBe(false);
  });
});
