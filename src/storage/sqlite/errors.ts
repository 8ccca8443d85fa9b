/**
 * The errors of the SQLite layer, and the classification of driver errors it needs: every driver
 * reports SQLite's result code, in one of two shapes (node:sqlite and @photostructure/sqlite:
 * `errcode` 5, `code` 'ERR_SQLITE_ERROR'; better-sqlite3 and libsql: `code` 'SQLITE_BUSY').
 * @module
 */

/** SQLite's primary result codes we act on (https://sqlite.org/rescode.html). */
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_CONSTRAINT = 19;

/** The primary result code of a driver error, or `undefined` when `error` is not one. */
export function sqliteResultCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { errcode, code } = error as { errcode?: unknown; code?: unknown };
  // Extended codes keep the primary code in their low byte (SQLITE_BUSY_SNAPSHOT = 517 = 5 | 2 << 8).
  if (typeof errcode === 'number') return errcode & 0xff;
  if (typeof code === 'string' && code.startsWith('SQLITE_')) {
    if (code.startsWith('SQLITE_BUSY')) return SQLITE_BUSY;
    if (code.startsWith('SQLITE_LOCKED')) return SQLITE_LOCKED;
    if (code.startsWith('SQLITE_CONSTRAINT')) return SQLITE_CONSTRAINT;
    return -1;
  }
  return undefined;
}

/** Whether `error` says another connection held the lock for longer than the busy timeout. */
export function isSqliteBusy(error: unknown): boolean {
  const code = sqliteResultCode(error);
  return code === SQLITE_BUSY || code === SQLITE_LOCKED;
}

/** Whether `error` is a constraint violation (a duplicate primary key, a failed CHECK, ...). */
export function isSqliteConstraint(error: unknown): boolean {
  return sqliteResultCode(error) === SQLITE_CONSTRAINT;
}

/**
 * The database stayed locked by another connection (another process on the same file) for longer
 * than the busy timeout. Transient, and nothing was written: the storage turns it into
 * `temporarily_unavailable` (503 with `Retry-After`), never a 500.
 *
 * @example
 * ```ts
 * import { openSqliteDatabase, SqliteBusyError } from 'portcullis/sqlite';
 *
 * const db = await openSqliteDatabase({ path: './.data/portcullis.sqlite' });
 * try {
 *   db.transaction(() => db.run('DELETE FROM cs_sessions WHERE expires_at <= ?', Date.now()));
 * } catch (error) {
 *   if (error instanceof SqliteBusyError) console.warn('another process holds the database; try later');
 *   else throw error;
 * }
 * ```
 * @see https://sqlite.org/rescode.html#busy
 * @group Storage
 */
export class SqliteBusyError extends Error {
  /** Stable code for logs and checks: `sqlite_busy`. */
  readonly code = 'sqlite_busy' as const;

  /**
   * @param busyTimeoutMs - how long the statement waited for the lock
   * @param options - the driver's error, as `cause`
   */
  constructor(busyTimeoutMs: number, options: { cause: unknown }) {
    super(
      `the SQLite database stayed locked by another connection for more than ${busyTimeoutMs} ms`,
      options,
    );
    this.name = 'SqliteBusyError';
  }
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
