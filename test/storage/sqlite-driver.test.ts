import { describe, expect, it } from 'vitest';
import {
  loadSqliteDriver,
  sqliteVersionAtLeast,
  WAL_RESET_FIX_VERSION,
} from '../../src/storage/sqlite/driver.js';
import {
  isSqliteConstraint,
  SqliteUnavailableError,
  sqliteFailure,
} from '../../src/storage/sqlite/errors.js';
import { classifyStorageFailure, StorageUnavailableError } from '../../src/storage/unavailable.js';

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
  const reasonOf = (error: unknown) => {
    const failure = sqliteFailure(error, 5000);
    return failure instanceof StorageUnavailableError ? failure.reason : undefined;
  };

  it('turns SQLITE_BUSY, in both driver shapes and extended codes included, into StorageUnavailableError (timeout, nothing applied)', () => {
    const busy = Object.assign(new Error('database is locked'), { code: 'ERR_SQLITE_ERROR', errcode: 5 });
    const failure = sqliteFailure(busy, 5000);
    expect(failure).toBeInstanceOf(StorageUnavailableError);
    expect(failure).toMatchObject({ reason: 'timeout', mayHaveApplied: false, cause: busy });
    expect((failure as Error).message).toContain('more than 5000 ms');
    // The server's one mapping (503 temporarily_unavailable) sees it as it is.
    expect(classifyStorageFailure(failure)).toBe(failure);
    expect(reasonOf({ code: 'ERR_SQLITE_ERROR', errcode: 517 })).toBe('timeout'); // BUSY_SNAPSHOT
    expect(reasonOf({ code: 'SQLITE_BUSY' })).toBe('timeout');
    expect(reasonOf({ code: 'SQLITE_BUSY_SNAPSHOT' })).toBe('timeout');
  });

  it('turns SQLITE_LOCKED and SQLITE_PROTOCOL into conflicts and SQLITE_FULL into overloaded', () => {
    expect(reasonOf({ code: 'ERR_SQLITE_ERROR', errcode: 6 })).toBe('conflict');
    expect(reasonOf({ code: 'SQLITE_LOCKED_SHAREDCACHE' })).toBe('conflict');
    expect(reasonOf({ code: 'ERR_SQLITE_ERROR', errcode: 15 })).toBe('conflict');
    expect(reasonOf({ code: 'ERR_SQLITE_ERROR', errcode: 13 })).toBe('overloaded');
    expect(reasonOf({ code: 'SQLITE_FULL' })).toBe('overloaded');
  });

  it('leaves I/O errors, corruption, constraint violations and other errors as they are (500, logged at error)', () => {
    for (const error of [
      { code: 'ERR_SQLITE_ERROR', errcode: 10 }, // IOERR
      { code: 'ERR_SQLITE_ERROR', errcode: 3338 }, // IOERR_FSYNC
      { code: 'SQLITE_IOERR_WRITE' },
      { code: 'ERR_SQLITE_ERROR', errcode: 11 }, // CORRUPT
      { code: 'ERR_SQLITE_ERROR', errcode: 1555 }, // CONSTRAINT_PRIMARYKEY
      { code: 'SQLITE_BUSYNESS' }, // not a SQLite code, though it starts like one
      new Error('database is locked'),
      undefined,
    ]) {
      expect(sqliteFailure(error, 5000)).toBe(error);
    }
  });

  it('recognises constraint violations in both driver shapes', () => {
    expect(isSqliteConstraint({ code: 'ERR_SQLITE_ERROR', errcode: 1555 })).toBe(true);
    expect(isSqliteConstraint({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' })).toBe(true);
    expect(isSqliteConstraint({ code: 'SQLITE_BUSY' })).toBe(false);
  });
});
