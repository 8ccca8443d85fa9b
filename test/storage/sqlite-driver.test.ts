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
  sqliteFileFailure,
  sqliteResultCode,
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

  it('reads the code from SQLite’s own words when the error carries none (@photostructure/sqlite’s all() and iterate())', () => {
    const wordsOnly = (message: string) => Object.assign(new Error(message), { code: 'ERR_SQLITE_ERROR' });
    expect(reasonOf(wordsOnly('database is locked'))).toBe('timeout');
    expect(reasonOf(wordsOnly('database table is locked'))).toBe('conflict');
    expect(reasonOf(wordsOnly('database or disk is full'))).toBe('overloaded');
    expect(reasonOf(wordsOnly('locking protocol'))).toBe('conflict');
    expect(sqliteResultCode(wordsOnly('database disk image is malformed'))).toBe(11);
    expect(sqliteResultCode(wordsOnly('Failed to open database: unable to open database file'))).toBe(14);
    // Other words: a SQLite error of no code we act on, passed on as it is.
    const other = wordsOnly('no such table: codes');
    expect(sqliteResultCode(other)).toBe(-1);
    expect(sqliteFailure(other, 5000)).toBe(other);
    // The same words without the driver's code are not a SQLite error.
    expect(sqliteResultCode(new Error('database is locked'))).toBeUndefined();
  });

  it('recognises constraint violations in both driver shapes', () => {
    expect(isSqliteConstraint({ code: 'ERR_SQLITE_ERROR', errcode: 1555 })).toBe(true);
    expect(isSqliteConstraint({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' })).toBe(true);
    expect(isSqliteConstraint({ code: 'SQLITE_BUSY' })).toBe(false);
  });
});

describe('errors on the database file (at open or from a later statement)', () => {
  const FILE = '/srv/school/.data/portcullis.sqlite';
  const refusal = (error: unknown) => {
    const failure = sqliteFileFailure(error, FILE, 5000);
    expect(failure).toBeInstanceOf(SqliteUnavailableError);
    expect((failure as Error).message).toContain(`SQLite cannot use ${FILE} (`);
    expect((failure as Error).cause).toBe(error);
    return (failure as Error).message;
  };

  it('names the file and what to do for each problem of the file or its directory, in both driver shapes', () => {
    const shaped = (errcode: number, code: string, message: string) => [
      Object.assign(new Error(message), { code: 'ERR_SQLITE_ERROR', errcode }),
      Object.assign(new Error(message), { code }),
    ];
    for (const error of shaped(14, 'SQLITE_CANTOPEN', 'unable to open database file')) {
      expect(refusal(error)).toContain(
        'it must be a file, or not exist yet, in a directory this process can write to',
      );
    }
    for (const error of shaped(1038, 'SQLITE_CANTOPEN_ISDIR', 'unable to open database file')) {
      expect(refusal(error)).toContain('it must be a file');
    }
    for (const error of shaped(8, 'SQLITE_READONLY', 'attempt to write a readonly database')) {
      expect(refusal(error)).toContain(
        '(attempt to write a readonly database): this process cannot write it',
      );
    }
    for (const error of shaped(3, 'SQLITE_PERM', 'access permission denied')) {
      expect(refusal(error)).toContain('check its permissions');
    }
    for (const error of shaped(26, 'SQLITE_NOTADB', 'file is not a database')) {
      expect(refusal(error)).toContain('it is not a SQLite database');
    }
    for (const error of shaped(11, 'SQLITE_CORRUPT', 'database disk image is malformed')) {
      expect(refusal(error)).toContain('restore it from a backup');
    }
  });

  it('still answers a lock held past the busy timeout as unavailable, and leaves other errors as they are', () => {
    const busy = { code: 'ERR_SQLITE_ERROR', errcode: 5 };
    expect(sqliteFileFailure(busy, FILE, 5000)).toBeInstanceOf(StorageUnavailableError);
    for (const error of [
      { code: 'ERR_SQLITE_ERROR', errcode: 10 },
      new TypeError('not a driver error'),
      undefined,
    ]) {
      expect(sqliteFileFailure(error, FILE, 5000)).toBe(error);
    }
  });
});
