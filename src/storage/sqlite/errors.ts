/**
 * The errors of the SQLite layer, and the classification of driver errors it needs: every driver
 * reports SQLite's result code, in one of two shapes (node:sqlite and @photostructure/sqlite:
 * `errcode` 5, `code` 'ERR_SQLITE_ERROR'; better-sqlite3 and libsql: `code` 'SQLITE_BUSY').
 *
 * This is the one place SQLite's transient failures are recognised: the database wrapper passes
 * every driver error through {@link sqliteFailure}, which turns them into the library's
 * `StorageUnavailableError` (answered `503 temporarily_unavailable` with `Retry-After` by the same
 * mapping as PostgreSQL's outages); the generic `classifyStorageFailure` needs no SQLite knowledge.
 * @module
 */
import { StorageUnavailableError, type StorageUnavailableReason } from '../unavailable.js';

/** SQLite's primary result codes we act on (https://sqlite.org/rescode.html). */
export const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_FULL = 13;
const SQLITE_PROTOCOL = 15;
const SQLITE_CONSTRAINT = 19;

/** Primary codes of the drivers' string shape, by name (extended names start with them). */
const NAMED: readonly (readonly [string, number])[] = [
  ['SQLITE_BUSY', SQLITE_BUSY],
  ['SQLITE_LOCKED', SQLITE_LOCKED],
  ['SQLITE_FULL', SQLITE_FULL],
  ['SQLITE_PROTOCOL', SQLITE_PROTOCOL],
  ['SQLITE_CONSTRAINT', SQLITE_CONSTRAINT],
];

/** The primary result code of a driver error, or `undefined` when `error` is not one. */
export function sqliteResultCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { errcode, code } = error as { errcode?: unknown; code?: unknown };
  // Extended codes keep the primary code in their low byte (SQLITE_BUSY_SNAPSHOT = 517 = 5 | 2 << 8).
  if (typeof errcode === 'number') return errcode & 0xff;
  if (typeof code === 'string' && code.startsWith('SQLITE_')) {
    return NAMED.find(([name]) => code === name || code.startsWith(`${name}_`))?.[1] ?? -1;
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

/** Whether `error` is a constraint violation (a duplicate primary key, a failed CHECK, ...). */
export function isSqliteConstraint(error: unknown): boolean {
  return sqliteResultCode(error) === SQLITE_CONSTRAINT;
}

/**
 * No SQLite driver can be used on this runtime, or the database cannot run as the storage needs
 * (not in WAL mode, a driver that does not load). The message says what to install or change.
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
