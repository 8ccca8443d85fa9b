/**
 * One SQLite database file opened the way the storage needs it: WAL, a busy timeout for the other
 * processes on the same file, prepared statements kept and reused, and a synchronous
 * `transaction(fn)` that takes the write lock up front (`BEGIN IMMEDIATE`), so that the atomic steps
 * of the storage (redeem a code, rotate a refresh token) have exactly one winner across processes.
 *
 * Why these pragmas (https://sqlite.org/pragma.html, https://sqlite.org/wal.html):
 * - `busy_timeout` first: every later statement, the switch to WAL included, waits for a lock held by
 *   another process instead of failing at once with SQLITE_BUSY. The wait blocks this thread (the
 *   drivers are synchronous), so it is bounded and short transactions keep waits short.
 * - `journal_mode = WAL`: readers never block the writer nor the writer readers; one write lock per
 *   file, shared by every process on the host through SQLite's own file locks. Checked: a file system
 *   without shared memory (a network share) refuses WAL, and the open fails rather than run without.
 * - `synchronous = NORMAL` (default): in WAL, a commit is durable across a crash of the process
 *   (`kill -9`), and the database is never corrupted; only an OS crash or power loss can take back the
 *   last commits. `FULL` also survives those, at one fsync per commit.
 * - `foreign_keys = ON`, `trusted_schema = OFF` (SQLite's advice for applications), and
 *   `journal_size_limit` so the WAL file shrinks back after a checkpoint.
 * @module
 */
import { builtinModule } from '../../core/builtins.js';
import {
  createPrivateFile,
  directoryWritableByOthers,
  openToOthers,
  PRIVATE_DIRECTORY_MODE,
} from '../file-access.js';
import {
  loadSqliteDriver,
  type SqliteConnection,
  type SqliteDriver,
  type SqliteDriverName,
  type SqliteRunResult,
  type SqliteStatement,
  type SqliteValue,
  sqliteVersionAtLeast,
  WAL_RESET_FIX_VERSION,
} from './driver.js';
import { SQLITE_BUSY, SqliteUnavailableError, sqliteFileFailure, sqliteResultCode } from './errors.js';

/** The file a data directory holds (plus its `-wal` and `-shm` companions). */
export const SQLITE_FILE_NAME = 'portcullis.sqlite';

/**
 * Where the database is: a data directory (created with its parents when missing, mode `0700`; the
 * file is `portcullis.sqlite` in it, plus SQLite's `-wal` and `-shm` files), or the path of the file
 * itself (`:memory:` for a private in-memory database: tests). A file the storage creates is `0600`.
 *
 * @example
 * ```ts
 * import type { SqliteLocation } from 'portcullis/sqlite';
 *
 * const inDirectory: SqliteLocation = { dataDir: './.data' }; // ./.data/portcullis.sqlite
 * const file: SqliteLocation = { path: '/var/lib/auth/oauth.sqlite' };
 * ```
 * @see docs/storage.md, "SQLite"
 * @group Storage
 */
export type SqliteLocation = { readonly dataDir: string } | { readonly path: string };

/**
 * How to open the database. Every field is optional.
 *
 * @example
 * ```ts
 * import { openSqliteDatabase, type SqliteDatabaseOptions } from 'portcullis/sqlite';
 *
 * // Durable across power loss too, at one fsync per commit.
 * const options: SqliteDatabaseOptions = { synchronous: 'full', busyTimeoutMs: 2000 };
 * const db = await openSqliteDatabase({ dataDir: './.data', ...options });
 * ```
 * @see https://sqlite.org/pragma.html#pragma_synchronous, docs/storage.md "Durability"
 * @group Storage
 */
export interface SqliteDatabaseOptions {
  /** The driver; default: `node:sqlite` when its SQLite is recent enough, else `@photostructure/sqlite`. */
  readonly driver?: SqliteDriverName;
  /**
   * `normal` (default): a committed write survives a crash of the process (`kill -9`, an
   * out-of-memory kill); an OS crash or power loss may take back the last commits, never corrupt
   * the file. `full`: one fsync per commit, durable across power loss too.
   */
  readonly synchronous?: 'normal' | 'full';
  /**
   * How long a statement waits for a lock another process holds, in ms (default 5000, 0..60000).
   * The wait blocks the thread: keep other processes' transactions short.
   */
  readonly busyTimeoutMs?: number;
  /** Prepared statements kept per connection (default 200). */
  readonly statementCacheSize?: number;
  /**
   * Called when the database runs in a way the host should know about: an old SQLite, a file (or
   * its `-wal`, `-shm`) that group or others can open, or a directory they can write. Default:
   * `console.warn`.
   */
  readonly onWarning?: (message: string) => void;
}

/**
 * An open SQLite database, as {@link openSqliteDatabase} returns it: share it between the
 * storage (`sqliteStorage({ database })`) and your own tables. Every method is synchronous and
 * reuses one prepared statement per SQL text.
 *
 * @example
 * ```ts
 * import { openSqliteDatabase, sqliteStorage } from 'portcullis/sqlite';
 *
 * const db = await openSqliteDatabase({ dataDir: './.data' });
 * db.exec('CREATE TABLE IF NOT EXISTS app_notes (id TEXT PRIMARY KEY, body TEXT NOT NULL) STRICT');
 * db.run('INSERT INTO app_notes (id, body) VALUES (?, ?) ON CONFLICT DO NOTHING', 'welcome', 'Hello');
 * const note = db.get<{ body: string }>('SELECT body FROM app_notes WHERE id = ?', 'welcome');
 * const storage = sqliteStorage({ database: db });
 * ```
 * @see https://sqlite.org/lang_transaction.html (BEGIN IMMEDIATE)
 * @group Storage
 */
export interface SqliteDatabase {
  /** The database file (`:memory:` for an in-memory one). */
  readonly file: string;
  /** The driver that runs it. */
  readonly driver: SqliteDriverName;
  /** The SQLite library version, e.g. `3.53.4`. */
  readonly sqliteVersion: string;
  /** Whether a {@link SqliteDatabase.transaction} callback is running. */
  readonly inTransaction: boolean;
  /**
   * Runs a write statement.
   * @throws StorageUnavailableError (from `portcullis`) when the write lock stayed taken longer
   *   than the busy timeout, or on another transient failure (nothing written)
   */
  run(sql: string, ...params: SqliteValue[]): SqliteRunResult;
  /** The first row of a query, typed by the caller (the SQL decides its shape), or `undefined`. */
  get<Row>(sql: string, ...params: SqliteValue[]): Row | undefined;
  /** Every row of a query. */
  all<Row>(sql: string, ...params: SqliteValue[]): Row[];
  /** Runs statements without parameters (schema, migrations). */
  exec(sql: string): void;
  /**
   * Runs `fn` in one transaction holding the write lock from its first statement (`BEGIN
   * IMMEDIATE`): committed when `fn` returns, rolled back when it throws. `fn` must be synchronous
   * (a promise is refused: the transaction would commit before it settles) and must not nest.
   *
   * @throws StorageUnavailableError (from `portcullis`) when another connection kept the write
   *   lock past the busy timeout (nothing written)
   * @throws TypeError when `fn` returns a promise, or when called inside a transaction
   */
  transaction<T>(fn: () => T): T;
  /** Closes the connection (rolling back a transaction left open). Idempotent. */
  close(): void;
}

const DEFAULT_BUSY_TIMEOUT_MS = 5000;
const MAX_BUSY_TIMEOUT_MS = 60_000;
const DEFAULT_STATEMENT_CACHE_SIZE = 200;
/** The WAL file is truncated back to this after a checkpoint (bytes). */
const JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024;
/**
 * Pages the write-ahead log may hold before a commit copies it into the database file: SQLite's
 * default, 1,000 (about 4 MB), set explicitly. The copy runs in the committing connection, on the
 * server's thread, and takes time in proportion to the log, so the interval bounds how long one
 * commit can hold every request: on the benchmark host a checkpoint of 10,000 pages took 170–190 ms
 * and raised the refresh p99 from 28 to 84 ms, for about 9 % less CPU per refresh (a longer log
 * copies the hot last pages of the token tables fewer times).
 */
export const WAL_AUTOCHECKPOINT_PAGES = 1000;

/** Whether `value` is a promise or another thenable (a transaction callback must not return one). */
export function isThenable(value: unknown): boolean {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** The implementation; `statement()` is for the storage and the tests, not the public interface. */
export class SqliteDatabaseImpl implements SqliteDatabase {
  readonly file: string;
  readonly driver: SqliteDriverName;
  readonly sqliteVersion: string;
  readonly #connection: SqliteConnection;
  readonly #busyTimeoutMs: number;
  readonly #cacheSize: number;
  readonly #statements = new Map<string, SqliteStatement>();
  readonly #begin: SqliteStatement;
  readonly #commit: SqliteStatement;
  readonly #rollback: SqliteStatement;
  #inTransaction = false;
  #closed = false;

  constructor(
    driver: SqliteDriver,
    file: string,
    connection: SqliteConnection,
    options: SqliteDatabaseOptions,
  ) {
    this.file = file;
    this.driver = driver.name;
    this.sqliteVersion = driver.sqliteVersion;
    this.#connection = connection;
    this.#busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    this.#cacheSize = options.statementCacheSize ?? DEFAULT_STATEMENT_CACHE_SIZE;
    this.#begin = connection.prepare('BEGIN IMMEDIATE');
    this.#commit = connection.prepare('COMMIT');
    this.#rollback = connection.prepare('ROLLBACK');
  }

  get inTransaction(): boolean {
    return this.#inTransaction;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The prepared statement for `sql`, prepared once and reused. */
  statement(sql: string): SqliteStatement {
    const cached = this.#statements.get(sql);
    if (cached !== undefined) return cached;
    if (this.#closed) throw new Error('the SQLite database is closed');
    const prepared = this.#connection.prepare(sql);
    // The storage has a fixed set of statements; the bound only protects against dynamic SQL.
    if (this.#statements.size >= this.#cacheSize) {
      const oldest = this.#statements.keys().next().value;
      if (oldest !== undefined) this.#statements.delete(oldest);
    }
    this.#statements.set(sql, prepared);
    return prepared;
  }

  run(sql: string, ...params: SqliteValue[]): SqliteRunResult {
    try {
      const statement = this.statement(sql);
      return statement.run(...params);
    } catch (error) {
      throw this.#translate(error);
    }
  }

  get<Row>(sql: string, ...params: SqliteValue[]): Row | undefined {
    try {
      const statement = this.statement(sql);
      return statement.get(...params) as Row | undefined;
    } catch (error) {
      throw this.#translate(error);
    }
  }

  all<Row>(sql: string, ...params: SqliteValue[]): Row[] {
    try {
      const statement = this.statement(sql);
      return statement.all(...params) as Row[];
    } catch (error) {
      throw this.#translate(error);
    }
  }

  exec(sql: string): void {
    try {
      this.#connection.exec(sql);
    } catch (error) {
      throw this.#translate(error);
    }
  }

  transaction<T>(fn: () => T): T {
    if (this.#inTransaction) throw new TypeError('SqliteDatabase.transaction() does not nest');
    try {
      this.#begin.run();
    } catch (error) {
      throw this.#translate(error);
    }
    this.#inTransaction = true;
    try {
      const result = fn();
      if (isThenable(result)) {
        throw new TypeError(
          'the SqliteDatabase.transaction() callback returned a promise: it must be synchronous ' +
            '(do the asynchronous work, such as signing tokens, before the transaction)',
        );
      }
      this.#commit.run();
      return result;
    } catch (error) {
      this.#rollbackQuietly();
      throw this.#translate(error);
    } finally {
      this.#inTransaction = false;
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#inTransaction) this.#rollbackQuietly();
    // Copy what the write-ahead log holds into the database file, without waiting for other
    // processes: after a clean stop the file alone is complete. (@photostructure/sqlite keeps a
    // connection with unfinalized statements open until they are garbage-collected, so the last
    // close cannot always do it.)
    try {
      this.#connection.exec('PRAGMA wal_checkpoint(PASSIVE)');
    } catch {
      // Best effort: the log is replayed by the next open anyway.
    }
    this.#statements.clear();
    this.#connection.close();
  }

  #rollbackQuietly(): void {
    try {
      this.#rollback.run();
    } catch {
      // SQLite already rolled back (some errors end the transaction themselves): nothing to undo.
    }
  }

  #translate(error: unknown): unknown {
    return sqliteFileFailure(error, this.file, this.#busyTimeoutMs);
  }
}

/**
 * Checks the options' bounds.
 * @throws RangeError naming the option out of bounds
 */
export function validateDatabaseOptions(options: SqliteDatabaseOptions): void {
  const { busyTimeoutMs, statementCacheSize, synchronous } = options;
  if (
    busyTimeoutMs !== undefined &&
    (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0 || busyTimeoutMs > MAX_BUSY_TIMEOUT_MS)
  ) {
    throw new RangeError(
      `busyTimeoutMs must be an integer from 0 to ${MAX_BUSY_TIMEOUT_MS}, not ${busyTimeoutMs}`,
    );
  }
  if (statementCacheSize !== undefined && (!Number.isInteger(statementCacheSize) || statementCacheSize < 1)) {
    throw new RangeError(`statementCacheSize must be a positive integer, not ${statementCacheSize}`);
  }
  if (synchronous !== undefined && synchronous !== 'normal' && synchronous !== 'full') {
    throw new RangeError(`synchronous must be 'normal' or 'full', not ${String(synchronous)}`);
  }
}

/** How long the switch to WAL waits between two tries while another process has the lock, in ms. */
const WAL_SWITCH_RETRY_MS = 5;

/** Blocks the thread for `ms` (the drivers are synchronous, and so is opening a database). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * `PRAGMA journal_mode = WAL`, tried again while another process holds the lock, until the busy
 * timeout; returns the journal mode the file is in. On a new file, two processes switching it at
 * the same moment both take a shared lock and want the exclusive one, and SQLite answers the
 * second `SQLITE_BUSY` at once rather than call the busy handler (waiting there could deadlock):
 * two servers started together on an empty data directory failed a few times in a hundred. By
 * the next try the first has put the file in WAL mode, which the pragma then only reads.
 */
function switchToWal(connection: SqliteConnection, busyTimeoutMs: number): string {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      const mode = connection.prepare('PRAGMA journal_mode = WAL').get() as
        | { journal_mode?: unknown }
        | undefined;
      return String(mode?.journal_mode);
    } catch (error) {
      if (sqliteResultCode(error) !== SQLITE_BUSY || Date.now() >= deadline) throw error;
      sleepSync(WAL_SWITCH_RETRY_MS);
    }
  }
}

/**
 * Opens `file` with an already loaded driver (see {@link openSqliteDatabase}); synchronous, for
 * worker processes and tests.
 *
 * @param driver - a driver from `loadSqliteDriver`
 * @param file - the database file (created `0600` when missing; its directory must exist), or `:memory:`
 * @param options - {@link SqliteDatabaseOptions} (`driver` is ignored)
 * @returns the open database
 * @throws SqliteUnavailableError when the file cannot be put in WAL mode, or cannot be used (not a
 *   database, damaged, not writable: the message names it and what to do)
 * @throws StorageUnavailableError (from `portcullis`) when another process kept the file locked past
 *   the busy timeout
 */
export function openSqliteDatabaseWith(
  driver: SqliteDriver,
  file: string,
  options: SqliteDatabaseOptions = {},
): SqliteDatabaseImpl {
  validateDatabaseOptions(options);
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const onDisk = file !== ':memory:' && file !== '' && !file.startsWith('file:');
  // Before SQLite creates it with the umask's mode (0644 by default: readable by every account).
  if (onDisk) createPrivateFile(file);
  let connection: SqliteConnection;
  try {
    connection = driver.open(file);
  } catch (error) {
    throw sqliteFileFailure(error, file, busyTimeoutMs);
  }
  try {
    connection.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    const journalMode = switchToWal(connection, busyTimeoutMs);
    if (journalMode !== 'wal' && !(file === ':memory:' && journalMode === 'memory')) {
      throw new SqliteUnavailableError(
        `SQLite could not put ${file} in WAL mode (journal_mode is ${journalMode}): ` +
          'use a local file system (WAL needs shared memory between the processes on one host)',
      );
    }
    connection.exec(`PRAGMA synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    connection.exec('PRAGMA foreign_keys = ON');
    connection.exec('PRAGMA trusted_schema = OFF');
    connection.exec(`PRAGMA journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
    connection.exec(`PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  } catch (error) {
    connection.close();
    throw sqliteFileFailure(error, file, busyTimeoutMs);
  }
  if (!sqliteVersionAtLeast(driver.sqliteVersion, WAL_RESET_FIX_VERSION)) {
    (options.onWarning ?? console.warn)(
      `portcullis: SQLite ${driver.sqliteVersion} (${driver.name}) predates ${WAL_RESET_FIX_VERSION}: with several ` +
        'processes on one database file, a rare race can corrupt it (https://sqlite.org/wal.html#walresetbug). ' +
        'Upgrade Node.js (22.23+, 24.15+) or install @photostructure/sqlite.',
    );
  }
  if (onDisk) warnAboutOtherAccounts(file, options.onWarning ?? console.warn);
  return new SqliteDatabaseImpl(driver, file, connection, options);
}

/**
 * Warns when the database or its `-wal`/`-shm` files grant group or others access, or when they
 * may write its directory (see `file-access.ts`).
 */
function warnAboutOtherAccounts(file: string, warn: (message: string) => void): void {
  const open = openToOthers([file, `${file}-wal`, `${file}-shm`]);
  if (open.length > 0) {
    warn(
      `portcullis: the SQLite database ${open.map((o) => `${o.path} (mode ${o.mode})`).join(', ')} can be ` +
        'opened by other accounts on this host; it holds the private signing keys (unless keys.wrapping ' +
        'is set) and a hash of every token. Unless that is intended: ' +
        `chmod 600 ${open.map((o) => o.path).join(' ')}`,
    );
  }
  const writable = directoryWritableByOthers(file);
  if (writable !== undefined) {
    warn(
      `portcullis: the directory of the SQLite database ${file}, ${writable.path} (mode ${writable.mode}), ` +
        'can be written by other accounts on this host: they could replace the database, or put a log ' +
        `file beside it that SQLite would read. Unless that is intended: chmod go-w ${writable.path}, or ` +
        'give the database a directory of its own',
    );
  }
}

type FsModule = {
  mkdirSync(path: string, options: { recursive: true; mode: number }): unknown;
  existsSync(path: string): boolean;
};
type PathModule = { join(...parts: string[]): string };

/**
 * The file of a location: `path` as given, or `portcullis.sqlite` in `dataDir` (created with its
 * parents, mode `0700`). Refuses a data directory that holds a PGlite database and no SQLite file:
 * opening it would start an empty database beside the one the host has been using.
 */
export function databaseFile(location: SqliteLocation): string {
  if ('path' in location) return location.path;
  const fs = builtinModule<FsModule>('node:fs');
  const path = builtinModule<PathModule>('node:path');
  if (fs === undefined || path === undefined) {
    throw new SqliteUnavailableError('SQLite storage needs a runtime with node:fs (Node.js, Bun or Deno)');
  }
  const file = path.join(location.dataDir, SQLITE_FILE_NAME);
  if (fs.existsSync(path.join(location.dataDir, 'PG_VERSION')) && !fs.existsSync(file)) {
    throw new SqliteUnavailableError(
      `${location.dataDir} holds a PGlite (embedded PostgreSQL) database, not a SQLite one: SQLite storage ` +
        'would start empty beside it. Keep using it with pgliteStorage, or move its data to SQLite ' +
        '(docs/storage.md, "Moving from PGlite") and give SQLite another directory.',
    );
  }
  try {
    // The owner only: the file inside holds the private signing keys (file-access.ts).
    fs.mkdirSync(location.dataDir, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  } catch (error) {
    // EEXIST (a file in its place), ENOTDIR, EACCES, EROFS: name the option, not only the path.
    throw new SqliteUnavailableError(
      `the SQLite data directory ${location.dataDir} cannot be created ` +
        `(${error instanceof Error ? error.message : String(error)}): dataDir must name a directory, ` +
        'or a path where this process can create one',
      { cause: error },
    );
  }
  return file;
}

/**
 * Opens a SQLite database the way the storage needs it: loads the driver for this runtime, applies
 * the pragmas (busy timeout first, WAL, `synchronous`, foreign keys, `trusted_schema = OFF`, a 64 MB
 * `journal_size_limit`, a checkpoint every 1,000 pages of log) and checks WAL mode. Share the
 * result between {@link sqliteStorage} (`{ database }`) and your own tables; several processes may
 * open the same file.
 *
 * @param options - where ({@link SqliteLocation}) and how ({@link SqliteDatabaseOptions})
 * @returns the open database; close it when the server stops
 * @throws SqliteUnavailableError when no driver loads, the file cannot be put in WAL mode,
 *   `dataDir` holds a PGlite database, or the file or directory cannot be used (not a database,
 *   damaged, a directory in its place, not writable): the message names the path and what to do
 * @throws StorageUnavailableError (from `portcullis`) when another process kept the file locked past
 *   the busy timeout
 * @throws RangeError on an option out of bounds
 * @see https://sqlite.org/wal.html, https://sqlite.org/pragma.html#pragma_synchronous
 * @example
 * ```ts
 * import { openSqliteDatabase } from 'portcullis/sqlite';
 *
 * const db = await openSqliteDatabase({ dataDir: './.data' });
 * db.exec('CREATE TABLE IF NOT EXISTS app_counters (name TEXT PRIMARY KEY, n INTEGER NOT NULL) STRICT');
 * db.transaction(() => {
 *   db.run('INSERT INTO app_counters VALUES (?, 0) ON CONFLICT DO NOTHING', 'visits');
 *   db.run('UPDATE app_counters SET n = n + 1 WHERE name = ?', 'visits');
 * });
 * db.close();
 * ```
 * @group Storage
 */
export async function openSqliteDatabase(
  options: SqliteLocation & SqliteDatabaseOptions,
): Promise<SqliteDatabase> {
  return openDatabaseImpl(options);
}

/** {@link openSqliteDatabase}, typed as the implementation (the storage uses its statement cache). */
export async function openDatabaseImpl(
  options: SqliteLocation & SqliteDatabaseOptions,
): Promise<SqliteDatabaseImpl> {
  validateDatabaseOptions(options);
  const file = databaseFile(options);
  const driver = await loadSqliteDriver(options.driver === undefined ? {} : { driver: options.driver });
  return openSqliteDatabaseWith(driver, file, options);
}
