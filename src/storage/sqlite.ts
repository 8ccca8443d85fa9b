/**
 * `portcullis/sqlite`: the embedded persistent storage, and the default of the reference server.
 * One SQLite file (plus its write-ahead log) per data directory: no database server, data that
 * survives restarts and crashes, and several processes on one host may share the file (SQLite's own
 * locks, with a busy timeout). The driver is `node:sqlite` where the runtime's SQLite is recent
 * enough (Node.js 22.23+, 24.15+, 26), else the optional peer `@photostructure/sqlite` (prebuilt
 * binaries, nothing to compile). For instances on several hosts, use PostgreSQL.
 * @module portcullis/sqlite
 */
import {
  openDatabaseImpl,
  type SqliteDatabase,
  type SqliteDatabaseOptions,
  type SqliteLocation,
  validateDatabaseOptions,
} from './sqlite/database.js';
import { SqliteStorage } from './sqlite/sqlite-storage.js';
import type { Storage } from './types.js';

export {
  openSqliteDatabase,
  type SqliteDatabase,
  type SqliteDatabaseOptions,
  type SqliteLocation,
} from './sqlite/database.js';
export type { SqliteDriverName, SqliteRunResult, SqliteValue } from './sqlite/driver.js';
export { SqliteUnavailableError } from './sqlite/errors.js';
export { type ImportReport, importPostgresStorage, type PostgresSource } from './sqlite/import.js';

/**
 * Options of {@link sqliteStorage}: where the database is (a data directory, a file, or a
 * database the host opened with {@link openSqliteDatabase} and shares), how to open it, and the
 * cleanup batch size.
 *
 * @example
 * ```ts
 * import { type SqliteStorageOptions, sqliteStorage } from 'portcullis/sqlite';
 *
 * const options: SqliteStorageOptions = { dataDir: './.data', synchronous: 'full', deleteBatchSize: 500 };
 * const storage = sqliteStorage(options);
 * ```
 * @see docs/storage.md, "SQLite"
 * @group Storage
 */
export type SqliteStorageOptions = (
  | (SqliteLocation & SqliteDatabaseOptions)
  | {
      /** A database the host opened (and closes): the storage's tables live beside the host's. */
      readonly database: SqliteDatabase;
    }
) & {
  /**
   * The most rows deleted per statement by `deleteExpired` (default 1000). Each batch is also sized
   * to take about 10 ms, so a purge of a large file never holds the event loop and the write lock
   * for long (docs/storage.md, "SQLite", Housekeeping).
   */
  readonly deleteBatchSize?: number;
};

/**
 * Creates a {@link Storage} in a SQLite file: `portcullis.sqlite` in `dataDir`, the file at
 * `path`, or a `database` you opened with {@link openSqliteDatabase} to keep your own tables in the
 * same file. The file is opened, and its tables created or migrated, on first use (several
 * processes starting at once migrate once). Every atomic step is one `BEGIN IMMEDIATE`
 * transaction, so they hold across processes on the same file. A commit survives a crash of the
 * process (`kill -9`); `synchronous: 'full'` makes it survive power loss too.
 *
 * When another process holds the file's write lock past `busyTimeoutMs` (5 s), the step fails with
 * `StorageUnavailableError` (from `portcullis`; the server answers `503 temporarily_unavailable`
 * with `Retry-After`, as for a PostgreSQL outage) and writes nothing.
 *
 * @param options - {@link SqliteStorageOptions}
 * @returns the storage; its `close()` closes the database unless it was passed in as `database`
 * @throws TypeError when `deleteBatchSize` is not a positive integer
 * @throws RangeError on an open option out of bounds
 * @see RFC 6749 §4.1.2 and §10.5 (single-use codes), RFC 9700 §4.14.2 (refresh rotation): the atomic
 *   steps; https://sqlite.org/wal.html; docs/storage.md
 * @example
 * ```ts
 * import { createAuthorizationServer } from 'portcullis';
 * import { sqliteStorage } from 'portcullis/sqlite';
 *
 * const storage = sqliteStorage({ dataDir: './.data' });
 * const server = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage });
 * ```
 * @group Storage
 */
export function sqliteStorage(options: SqliteStorageOptions): Storage {
  const deleteBatchSize = options.deleteBatchSize ?? 1000;
  if ('database' in options) {
    const { database } = options;
    return new SqliteStorage({ open: async () => database, owned: false, deleteBatchSize });
  }
  // Checked now, not on first use: a bad option is a configuration error.
  validateDatabaseOptions(options);
  return new SqliteStorage({ open: () => openDatabaseImpl(options), owned: true, deleteBatchSize });
}
