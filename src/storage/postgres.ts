/**
 * `portcullis/postgres`: the storage for production, over a PostgreSQL server through `pg`
 * (node-postgres, an optional peer dependency). Several server instances share one database: the
 * atomic steps are single conditional statements, so they hold across processes.
 * @module portcullis/postgres
 */
import type { CustomTypesConfig, Pool, PoolClient, PoolConfig, QueryConfig } from 'pg';
import pg from 'pg';
import type { SqlExecutor, SqlQueryable, SqlStatement } from './sql/executor.js';
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

// `bigint` columns (epoch seconds) as numbers: they stay far below 2^53. Passed per query, so the
// process-wide `pg.types` a host may have customised is left alone.
const types: CustomTypesConfig = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format),
};

function queryable(target: Pool | PoolClient, prepared: boolean): SqlQueryable {
  return {
    async query<Row>(statement: SqlStatement, params: unknown[]): Promise<Row[]> {
      const config: QueryConfig =
        prepared && statement.name !== undefined
          ? { name: statement.name, text: statement.text, values: params, types }
          : { text: statement.text, values: params, types };
      return (await target.query(config)).rows as Row[];
    },
  };
}

function pgExecutor(connection: PostgresConnection, prepared: boolean): SqlExecutor {
  let pool: Pool;
  let owned: boolean;
  if ('pool' in connection) {
    pool = connection.pool;
    owned = false;
  } else {
    pool = new pg.Pool({ ...connection.poolConfig, connectionString: connection.connectionString });
    owned = true;
    // Without a listener, an idle connection dropped by the server would crash the process. The
    // pool discards that connection; the next query opens a new one or fails with the cause.
    pool.on('error', () => {});
  }
  const direct = queryable(pool, prepared);
  return {
    query: direct.query,
    async transaction<T>(body: (tx: SqlQueryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await body(queryable(client, prepared));
        await client.query('COMMIT');
        client.release();
        return result;
      } catch (error) {
        // A connection that cannot roll back is in an unknown state: destroy it, don't pool it.
        const broken = await client.query('ROLLBACK').then(
          () => false,
          () => true,
        );
        client.release(broken);
        throw error;
      }
    },
    async close() {
      // pg throws when a pool is ended twice; closing the storage twice is harmless.
      if (owned && !pool.ended) await pool.end();
    },
  };
}

/**
 * Creates a {@link Storage} in a PostgreSQL database. The tables live in their own schema, created
 * and migrated on first use unless `autoMigrate` is off. Nothing connects until the first call.
 *
 * @param connection - `{ pool }` to share the host's `pg.Pool`, or `{ connectionString }`
 * @param options - schema, migrations, prepared statements, cleanup batch size
 * @returns the storage; its `close()` ends the pool only if the storage created it
 * @throws TypeError when the schema name is not a plain identifier or the batch size not a positive integer.
 * A connection or schema problem fails the server's start (`createAuthorizationServer` rejects with a
 * `StartupError`: `storage_unavailable`, or `storage_migration_failed` for a schema behind with
 * `autoMigrate: false`); later failures reject the storage's calls, answered `500 server_error`.
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
  return new SqlStorage(pgExecutor(connection, options.preparedStatements ?? true), {
    schema: options.schema ?? DEFAULT_SCHEMA,
    autoMigrate: options.autoMigrate ?? true,
    deleteBatchSize: options.deleteBatchSize ?? 1000,
  });
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
  const executor = pgExecutor(connection, false);
  try {
    return await migrateSchema(executor, options.schema ?? DEFAULT_SCHEMA, Math.floor(Date.now() / 1000));
  } finally {
    await executor.close();
  }
}
