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
import { classifyStorageFailure, StorageUnavailableError } from './unavailable.js';

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

// `bigint` columns (epoch seconds) as numbers: they stay far below 2^53. Passed per query, so the
// process-wide `pg.types` a host may have customised is left alone.
const types: CustomTypesConfig = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format),
};

/** Default bound on obtaining a connection, milliseconds. */
const DEFAULT_CONNECTION_TIMEOUT_MS = 5000;
/** Default bound on one statement, milliseconds. */
const DEFAULT_QUERY_TIMEOUT_MS = 10_000;

/** The time bounds of every call, resolved from the options. */
interface Bounds {
  readonly connectionTimeoutMillis: number;
  readonly queryTimeoutMillis: number;
}

/** Pools the storage already listens to: several storages may share one host pool. */
const guarded = new WeakSet<Pool>();

/**
 * Without a listener, an `error` event kills the process: a pool emits one when an idle
 * connection dies (a restart, `pg_terminate_backend`, a failover), after removing it. The next
 * query opens a new connection, or fails as unavailable while the database is down.
 */
function guardPool(pool: Pool): void {
  if (guarded.has(pool)) return;
  guarded.add(pool);
  pool.on('error', () => {});
}

/** A driver error as the storage reports it: transient failures as {@link StorageUnavailableError}. */
function translate(error: unknown): unknown {
  return classifyStorageFailure(error) ?? error;
}

/** The parameters of a statement never go into an error message: they hold token hashes and user ids. */
function timedOut(bound: number): StorageUnavailableError {
  return new StorageUnavailableError(
    'timeout',
    `the storage is unavailable (timeout: no answer within ${bound} ms)`,
  );
}

/**
 * Runs one statement on the pool, bounded in time whatever the pool's own settings: `query_timeout`
 * bounds the statement once a connection is checked out, and a timer bounds the whole call (a host
 * pool without `connectionTimeoutMillis` would otherwise wait for a connection forever).
 */
function poolQueryable(pool: Pool, prepared: boolean, bounds: Bounds): SqlQueryable {
  const total = bounds.connectionTimeoutMillis + bounds.queryTimeoutMillis + 1000;
  return {
    query<Row>(statement: SqlStatement, params: unknown[]): Promise<Row[]> {
      const config: QueryConfig & { query_timeout: number } = {
        ...(prepared && statement.name !== undefined ? { name: statement.name } : {}),
        text: statement.text,
        values: params,
        types,
        query_timeout: bounds.queryTimeoutMillis,
      };
      return new Promise<Row[]>((resolve, reject) => {
        const timer = setTimeout(() => reject(timedOut(total)), total);
        pool.query(config).then(
          (result) => {
            clearTimeout(timer);
            resolve(result.rows as Row[]);
          },
          (error: unknown) => {
            clearTimeout(timer);
            reject(translate(error));
          },
        );
      });
    },
  };
}

/** Statements of a transaction on a checked-out client (migrations): no statement bound. */
function clientQueryable(client: PoolClient): SqlQueryable {
  return {
    async query<Row>(statement: SqlStatement, params: unknown[]): Promise<Row[]> {
      try {
        return (await client.query({ text: statement.text, values: params, types })).rows as Row[];
      } catch (error) {
        throw translate(error);
      }
    },
  };
}

function pgExecutor(connection: PostgresConnection, prepared: boolean, bounds: Bounds): SqlExecutor {
  let pool: Pool;
  let owned: boolean;
  if ('pool' in connection) {
    pool = connection.pool;
    owned = false;
  } else {
    pool = new pg.Pool({
      // Detect a peer that vanished (a failover, a partition) on idle connections too.
      keepAlive: true,
      connectionTimeoutMillis: bounds.connectionTimeoutMillis,
      // The server cancels a statement past its bound (57014), and the connection stays usable.
      statement_timeout: bounds.queryTimeoutMillis,
      ...connection.poolConfig,
      connectionString: connection.connectionString,
    });
    owned = true;
  }
  guardPool(pool);
  const direct = poolQueryable(pool, prepared, bounds);
  return {
    query: direct.query,
    async transaction<T>(body: (tx: SqlQueryable) => Promise<T>): Promise<T> {
      let client: PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw translate(error);
      }
      // A checked-out client has no pool listener: its `error` event (the connection dying
      // mid-transaction) would end the process. The failing query reports the error.
      const ignore = () => {};
      client.on('error', ignore);
      const release = (broken: boolean) => {
        client.off('error', ignore);
        client.release(broken);
      };
      try {
        // Migrations may outlast the statement bound of the storage's own connections.
        await client.query('BEGIN');
        await client.query('SET LOCAL statement_timeout = 0');
        const result = await body(clientQueryable(client));
        await client.query('COMMIT');
        release(false);
        return result;
      } catch (error) {
        // A connection that cannot roll back is in an unknown state: destroy it, don't pool it.
        const broken = await client.query('ROLLBACK').then(
          () => false,
          () => true,
        );
        release(broken);
        throw translate(error);
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
 * @throws TypeError when the schema name is not a plain identifier, or the batch size or a timeout
 * not a positive integer. Later, a call fails with {@link StorageUnavailableError} while the
 * database is unreachable, restarting, overloaded or slower than the bounds (the server answers
 * `503 temporarily_unavailable` with `Retry-After`), and with the driver's error otherwise (a schema
 * behind with `autoMigrate: false`: `500 server_error`).
 * @see RFC 6749 §4.1.2 and §10.5 (single-use codes), RFC 9700 §4.14.2 (refresh rotation): the atomic steps, as single conditional statements; docs/storage.md
 * @example
 * ```ts
 * import { createAuthorizationServer } from 'portcullis';
 * import { postgresStorage } from 'portcullis/postgres';
 *
 * const storage = postgresStorage({ connectionString: 'postgres://portcullis@db.internal/auth' });
 * const server = createAuthorizationServer({ issuer: 'https://auth.example.com', storage });
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
