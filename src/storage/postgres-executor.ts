/**
 * The `pg` (node-postgres) driver of the SQL storage: statements on a pool, bounded in time, with
 * every error event of the pool and of checked-out clients handled and the driver's transient
 * failures turned into {@link StorageUnavailableError}. `./postgres.ts` builds the storage on it.
 * @module
 */
import type { CustomTypesConfig, Pool, PoolClient, QueryConfig } from 'pg';
import pg from 'pg';
import type { PostgresConnection } from './postgres.js';
import type { SqlExecutor, SqlQueryable, SqlStatement } from './sql/executor.js';
import { classifyStorageFailure, StorageUnavailableError } from './unavailable.js';

// `bigint` columns (epoch seconds) as numbers: they stay far below 2^53. Passed per query, so the
// process-wide `pg.types` a host may have customised is left alone.
const types: CustomTypesConfig = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format),
};

/** Default bound on obtaining a connection, milliseconds. */
export const DEFAULT_CONNECTION_TIMEOUT_MS = 5000;
/** Default bound on one statement, milliseconds. */
export const DEFAULT_QUERY_TIMEOUT_MS = 10_000;

/** The time bounds of every call, resolved from the options. */
export interface Bounds {
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

export function pgExecutor(connection: PostgresConnection, prepared: boolean, bounds: Bounds): SqlExecutor {
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
