/**
 * `portcullis/postgres`: the storage for production, over a PostgreSQL server through `pg`
 * (node-postgres, an optional peer dependency). Several server instances share one database: the
 * atomic steps are single conditional statements, so they hold across processes.
 * @module portcullis/postgres
 */
import type { Pool, PoolConfig } from 'pg';
import {
  type Bounds,
  DEFAULT_CONNECTION_TIMEOUT_MS,
  DEFAULT_QUERY_TIMEOUT_MS,
  pgExecutor,
} from './postgres-executor.js';
import { type MigrationReport, migrateSchema } from './sql/migrations.js';
import { DEFAULT_SCHEMA } from './sql/schema-name.js';
import { SqlStorage } from './sql/sql-storage.js';
import type { Storage } from './types.js';

export type { MigrationReport } from './sql/migrations.js';

/**
 * Where the database is: a `pg.Pool` the host owns (shared with its own queries; never closed by
 * the storage), or a connection string from which the storage makes, and later closes, its own pool.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import type { PostgresConnection } from 'portcullis/postgres';
 *
 * const shared: PostgresConnection = { pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 }) };
 * const owned: PostgresConnection = {
 *   connectionString: process.env.DATABASE_URL ?? '',
 *   poolConfig: { max: 20, ssl: { rejectUnauthorized: true } },
 * };
 * ```
 * @see docs/storage.md, "PostgreSQL"
 * @group Storage
 */
export type PostgresConnection =
  | { readonly pool: Pool }
  | {
      readonly connectionString: string;
      /** Further `pg.Pool` settings (`max`, `ssl`, timeouts) for the pool the storage creates. */
      readonly poolConfig?: Omit<PoolConfig, 'connectionString'>;
    };

/**
 * Options of {@link postgresStorage}.
 *
 * @example
 * ```ts
 * import { postgresStorage, type PostgresStorageOptions } from 'portcullis/postgres';
 *
 * // Behind PgBouncer in transaction mode, with migrations run by the deploy step.
 * const options: PostgresStorageOptions = { schema: 'auth', autoMigrate: false, preparedStatements: false };
 * const storage = postgresStorage({ connectionString: process.env.DATABASE_URL ?? '' }, options);
 * ```
 * @see docs/storage.md, "Migrations"
 * @group Storage
 */
export interface PostgresStorageOptions {
  /**
   * The schema holding the tables, created by the first migration. Give the storage a schema of
   * its own: the tables have plain names (`clients`, `grants`, ...). Default `portcullis`.
   */
  readonly schema?: string;
  /**
   * Migrate the schema on first use (default `true`). Set `false` when migrations run as a deploy
   * step ({@link migrate} or the `portcullis-migrate` command) and the runtime role may not
   * create tables; the storage then only checks the schema version and fails if it is behind.
   */
  readonly autoMigrate?: boolean;
  /**
   * Use named prepared statements (default `true`): each connection parses and plans a statement
   * once. Set `false` behind a pooler that cannot keep them, such as PgBouncer in transaction
   * mode before version 1.21.
   */
  readonly preparedStatements?: boolean;
  /** Rows deleted per statement by `deleteExpired` (default 1000): short locks, bounded transactions. */
  readonly deleteBatchSize?: number;
  /**
   * How long a storage call waits for a connection, a new one or a free one of the pool, before
   * failing as unavailable (default 5000 ms). Applied to the pool the storage creates; the whole
   * call is bounded by this plus `queryTimeoutMillis` on a pool you pass too.
   */
  readonly connectionTimeoutMillis?: number;
  /**
   * How long one statement may run before failing as unavailable (default 10000 ms): sent as
   * `statement_timeout` on the storage's own connections (PostgreSQL cancels the statement) and
   * enforced by the client on any pool.
   */
  readonly queryTimeoutMillis?: number;
}

/**
 * Options of {@link migrate}.
 *
 * @example
 * ```ts
 * import { type MigrateOptions, migrate } from 'portcullis/postgres';
 *
 * const options: MigrateOptions = { schema: 'auth' };
 * await migrate({ connectionString: process.env.DATABASE_URL ?? '' }, options);
 * ```
 * @see docs/storage.md, "Migrations"
 * @group Storage
 */
export interface MigrateOptions {
  /** The schema to migrate (default `portcullis`). */
  readonly schema?: string;
}

/**
 * Creates a {@link Storage} in a PostgreSQL database. The tables live in their own schema, created
 * and migrated on first use unless `autoMigrate` is off. Nothing connects until the first call.
 *
 * @param connection - `{ pool }` to share the host's `pg.Pool`, or `{ connectionString }`
 * @param options - schema, migrations, prepared statements, cleanup batch size
 * @returns the storage; its `close()` ends the pool only if the storage created it
 * @throws TypeError when the schema name is not a plain identifier, or the batch size or a timeout
 * not a positive integer. A connection or schema problem fails the server's start
 * (`createAuthorizationServer` rejects with a `StartupError`: `storage_unavailable`, or
 * `storage_migration_failed` for a schema behind with `autoMigrate: false`). Later, a call fails with
 * `StorageUnavailableError` (from `portcullis`) while the database is unreachable, restarting,
 * overloaded or slower than the bounds (the server answers `503 temporarily_unavailable` with
 * `Retry-After`), and with the driver's error otherwise (`500 server_error`).
 * @see RFC 6749 §4.1.2 and §10.5 (single-use codes), RFC 9700 §4.14.2 (refresh rotation): the atomic steps, as single conditional statements; docs/storage.md
 * @example
 * ```ts
 * import { createAuthorizationServer } from 'portcullis';
 * import { postgresStorage } from 'portcullis/postgres';
 *
 * const storage = postgresStorage({ connectionString: 'postgres://portcullis@db.internal/auth' });
 * const server = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage });
 * ```
 * @group Storage
 */
export function postgresStorage(
  connection: PostgresConnection,
  options: PostgresStorageOptions = {},
): Storage {
  const bounds: Bounds = {
    connectionTimeoutMillis:
      positive(options.connectionTimeoutMillis, 'connectionTimeoutMillis') ?? DEFAULT_CONNECTION_TIMEOUT_MS,
    queryTimeoutMillis:
      positive(options.queryTimeoutMillis, 'queryTimeoutMillis') ?? DEFAULT_QUERY_TIMEOUT_MS,
  };
  return new SqlStorage(pgExecutor(connection, options.preparedStatements ?? true, bounds), {
    schema: options.schema ?? DEFAULT_SCHEMA,
    autoMigrate: options.autoMigrate ?? true,
    deleteBatchSize: options.deleteBatchSize ?? 1000,
  });
}

function positive(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 1)
    throw new TypeError(`storage: ${name} must be a positive integer`);
  return value;
}

/**
 * Creates or upgrades the storage schema: the explicit form of `autoMigrate`, for a deploy step.
 * Idempotent, and safe when several processes run it at once (they serialise on an advisory lock
 * and the later ones find nothing to do). The same as the `portcullis-migrate` command.
 *
 * @param connection - `{ pool }` or `{ connectionString }` (a pool made for the call is closed after it)
 * @param options - the schema (default `portcullis`)
 * @returns which versions were applied and the version the schema is at now
 * @throws TypeError on an invalid schema name; the database's error when a migration fails, in
 *   which case its transaction is rolled back and the schema left as it was
 * @see docs/storage.md, "Migrations"; docs/upgrading.md
 * @example
 * ```ts
 * import { migrate } from 'portcullis/postgres';
 *
 * const report = await migrate({ connectionString: process.env.DATABASE_URL ?? '' }, { schema: 'auth' });
 * console.log(`schema ${report.schema} at version ${report.toVersion}`);
 * ```
 * @group Storage
 */
export async function migrate(
  connection: PostgresConnection,
  options: MigrateOptions = {},
): Promise<MigrationReport> {
  const executor = pgExecutor(connection, false, {
    connectionTimeoutMillis: DEFAULT_CONNECTION_TIMEOUT_MS,
    queryTimeoutMillis: DEFAULT_QUERY_TIMEOUT_MS,
  });
  try {
    return await migrateSchema(executor, options.schema ?? DEFAULT_SCHEMA, Math.floor(Date.now() / 1000));
  } finally {
    await executor.close();
  }
}
