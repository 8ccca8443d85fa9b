/**
 * The errors of the SQLite layer, and the classification of driver errors it needs: every driver
 * reports SQLite's result code, in one of two shapes (node:sqlite and @photostructure/sqlite:
 * `errcode` 5, `code` 'ERR_SQLITE_ERROR'; better-sqlite3 and libsql: `code` 'SQLITE_BUSY').
 *
 * This is the one place SQLite's transient failures are recognised: the database wrapper passes
 * every driver error through {@link sqliteFileFailure}, which turns them into the library's
 * `StorageUnavailableError` (answered `503 temporarily_unavailable` with `Retry-After` by the same
 * mapping as PostgreSQL's outages), and a file it cannot use into a {@link SqliteUnavailableError}
 * that names the file; the generic `classifyStorageFailure` needs no SQLite knowledge.
 * @module
 */
import { StorageUnavailableError, type StorageUnavailableReason } from '../unavailable.js';

/** SQLite's primary result codes we act on (https://sqlite.org/rescode.html). */
export const SQLITE_BUSY = 5;
const SQLITE_PERM = 3;
const SQLITE_LOCKED = 6;
const SQLITE_READONLY = 8;
const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const SQLITE_PROTOCOL = 15;
const SQLITE_CONSTRAINT = 19;
const SQLITE_NOTADB = 26;

/**
 * The codes we act on as the drivers report them: `name`, the string shape of better-sqlite3 and
 * libsql (extended names start with it: `SQLITE_BUSY_SNAPSHOT`), and `words`, SQLite's own message
 * for the code (`sqlite3_errstr`), for the driver errors that carry no code at all:
 * @photostructure/sqlite's `all()` and `iterate()` throw `ERR_SQLITE_ERROR` with the message alone
 * (1.2: its `get()`, `run()` and `exec()` set `errcode`). A message ends with the words ("Failed to
 * open database: unable to open database file"). A constraint's message names the constraint, so
 * it has no fixed words.
 */
const KNOWN: readonly { readonly code: number; readonly name: string; readonly words?: string }[] = [
  { code: SQLITE_BUSY, name: 'SQLITE_BUSY', words: 'database is locked' },
  { code: SQLITE_PERM, name: 'SQLITE_PERM', words: 'access permission denied' },
  { code: SQLITE_LOCKED, name: 'SQLITE_LOCKED', words: 'database table is locked' },
  { code: SQLITE_READONLY, name: 'SQLITE_READONLY', words: 'attempt to write a readonly database' },
  { code: SQLITE_CORRUPT, name: 'SQLITE_CORRUPT', words: 'database disk image is malformed' },
  { code: SQLITE_FULL, name: 'SQLITE_FULL', words: 'database or disk is full' },
  { code: SQLITE_CANTOPEN, name: 'SQLITE_CANTOPEN', words: 'unable to open database file' },
  { code: SQLITE_PROTOCOL, name: 'SQLITE_PROTOCOL', words: 'locking protocol' },
  { code: SQLITE_CONSTRAINT, name: 'SQLITE_CONSTRAINT' },
  { code: SQLITE_NOTADB, name: 'SQLITE_NOTADB', words: 'file is not a database' },
];

/**
 * The primary result code of a driver error, `-1` for a SQLite error whose code is not one we
 * know, or `undefined` when `error` is not a SQLite error.
 */
export function sqliteResultCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { errcode, code, message } = error as { errcode?: unknown; code?: unknown; message?: unknown };
  // Extended codes keep the primary code in their low byte (SQLITE_BUSY_SNAPSHOT = 517 = 5 | 2 << 8).
  if (typeof errcode === 'number') return errcode & 0xff;
  if (typeof code === 'string' && code.startsWith('SQLITE_')) {
    return KNOWN.find(({ name }) => code === name || code.startsWith(`${name}_`))?.code ?? -1;
  }
  if (code === 'ERR_SQLITE_ERROR') {
    if (typeof message !== 'string') return -1;
    return KNOWN.find(({ words }) => words !== undefined && message.endsWith(words))?.code ?? -1;
  }
  return undefined;
}

/**
 * The transient failures, and why: each rolled back what it was doing, so nothing was written.
 * - BUSY: another connection (another process on the file) held the lock past the busy timeout;
 * - LOCKED: a conflict inside this connection's own process (a table another statement holds);
 * - PROTOCOL: a lock race on the WAL index that SQLite gave up retrying;
 * - FULL: the disk (or the file's size limit) is full, as PostgreSQL's `disk_full`.
 * Not transient: I/O errors (SQLITE_IOERR: a failing disk or file system is the operator's to
 * see, at `error`, not a client's to retry), a corrupt file, constraint violations (bugs).
 */
const TRANSIENT: Readonly<Record<number, StorageUnavailableReason>> = {
  [SQLITE_BUSY]: 'timeout',
  [SQLITE_LOCKED]: 'conflict',
  [SQLITE_PROTOCOL]: 'conflict',
  [SQLITE_FULL]: 'overloaded',
};

/**
 * What a driver error means for the caller: a `StorageUnavailableError` for a transient failure
 * (see {@link TRANSIENT}), else the error itself.
 *
 * @param error - what the driver threw
 * @param busyTimeoutMs - the connection's busy timeout, for the message
 * @returns the error to throw
 */
export function sqliteFailure(error: unknown, busyTimeoutMs: number): unknown {
  const code = sqliteResultCode(error);
  const reason = code === undefined ? undefined : TRANSIENT[code];
  if (reason === undefined) return error;
  const detail =
    code === SQLITE_BUSY
      ? `the SQLite database stayed locked by another connection for more than ${busyTimeoutMs} ms`
      : `SQLite refused the statement (${error instanceof Error ? error.message : `result code ${code}`})`;
  return new StorageUnavailableError(reason, `the storage is unavailable (${reason}: ${detail})`, {
    mayHaveApplied: false,
    cause: error,
  });
}

/**
 * What to do when opening or using a file fails with one of these codes: each is a problem with
 * the file or its directory that the operator must fix (retrying cannot help), and the drivers'
 * messages ("unable to open database file", "file is not a database") do not say which file.
 */
const FILE_ADVICE: Readonly<Record<number, string>> = {
  [SQLITE_CANTOPEN]:
    'it must be a file, or not exist yet, in a directory this process can write to (a directory in its place, a missing parent or a read-only file system cannot be opened)',
  [SQLITE_PERM]: 'this process may not open it: check its permissions and those of its directory',
  [SQLITE_READONLY]:
    'this process cannot write it: the file, its -wal and -shm files and their directory must be writable (not a read-only file system)',
  [SQLITE_NOTADB]:
    'it is not a SQLite database (another kind of file, or an encrypted one): give the storage another path, or move this file aside',
  [SQLITE_CORRUPT]:
    'the file is damaged: restore it from a backup (https://sqlite.org/recovery.html); do not delete its -wal file, which may hold the last commits',
};

/**
 * What a driver error on `file` means: {@link sqliteFailure} for a transient one, a
 * {@link SqliteUnavailableError} naming the file and what to do when the file itself cannot be
 * used (see {@link FILE_ADVICE}: at open, or later, such as a file system remounted read-only or a
 * damaged page found by a query), else the error itself.
 *
 * @param error - what the driver threw while opening `file`, applying its pragmas or running a
 *   statement on it
 * @param file - the database file
 * @param busyTimeoutMs - the connection's busy timeout, for the message
 * @returns the error to throw
 */
export function sqliteFileFailure(error: unknown, file: string, busyTimeoutMs: number): unknown {
  const code = sqliteResultCode(error);
  const advice = code === undefined ? undefined : FILE_ADVICE[code];
  if (advice === undefined) return sqliteFailure(error, busyTimeoutMs);
  const detail = error instanceof Error ? error.message : `result code ${code}`;
  return new SqliteUnavailableError(`SQLite cannot use ${file} (${detail}): ${advice}`, {
    cause: error,
  });
}

/** Whether `error` is a constraint violation (a duplicate primary key, a failed CHECK, ...). */
export function isSqliteConstraint(error: unknown): boolean {
  return sqliteResultCode(error) === SQLITE_CONSTRAINT;
}

/**
 * No SQLite driver can be used on this runtime, or the database cannot run as the storage needs
 * (not in WAL mode, a driver that does not load, a file that is not a database or cannot be
 * written, a data directory that cannot be created). The message names the file and says what to
 * install or change; `cause` holds the driver's own error.
 *
 * @example
 * ```ts
 * import { openSqliteDatabase, SqliteUnavailableError } from 'portcullis/sqlite';
 *
 * try {
 *   await openSqliteDatabase({ dataDir: './.data' });
 * } catch (error) {
 *   if (error instanceof SqliteUnavailableError) console.error(error.message); // e.g. npm install @photostructure/sqlite
 *   throw error;
 * }
 * ```
 * @see docs/storage.md, "SQLite"
 * @group Storage
 */
export class SqliteUnavailableError extends Error {
  /** Stable code for logs and checks: `sqlite_unavailable`. */
  readonly code = 'sqlite_unavailable' as const;

  /**
   * @param message - what is missing and what to do
   * @param options - the underlying error, as `cause`
   */
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'SqliteUnavailableError';
  }
}
