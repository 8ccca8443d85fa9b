/**
 * The tiny interface between the SQL storage and a PostgreSQL driver. The storage speaks only SQL
 * through it, so the same statements run on `pg` (a server) and on PGlite (embedded): a driver
 * adapter is a few dozen lines in `../postgres.ts` or `../pglite.ts`.
 * @module
 */

/**
 * One SQL statement. With a name, drivers that support it prepare the statement once per
 * connection and reuse the plan; others ignore the name.
 */
export interface SqlStatement {
  /** Unique per distinct `text` (see {@link statement}); absent for one-off statements (migrations). */
  readonly name?: string;
  readonly text: string;
}

/** Something that runs statements: the executor itself, or one transaction of it. */
export interface SqlQueryable {
  /**
   * Runs one parameterised statement and returns its rows. `bigint` columns come back as
   * `number`, `text[]` as `string[]`, `jsonb` parsed, `NULL` as `null`.
   */
  query<Row>(statement: SqlStatement, params: unknown[]): Promise<Row[]>;
}

/** A connection (pool) to one PostgreSQL database. */
export interface SqlExecutor extends SqlQueryable {
  /** Runs `body` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  transaction<T>(body: (tx: SqlQueryable) => Promise<T>): Promise<T>;
  /** Releases what the executor owns (a pool it created, an embedded database it opened). */
  close(): Promise<void>;
}

/**
 * Builds a {@link SqlStatement} whose name is derived from its text, so that two storages with
 * different schemas on one pool never prepare different texts under the same name.
 *
 * @param text - the SQL text, with `$1`-style parameters
 * @returns the statement, named `portcullis_` plus a 64-bit digest of the text
 * @example
 * ```ts
 * const byHash = statement('SELECT 1 FROM "portcullis".clients WHERE client_id = $1');
 * // byHash.name: 'portcullis_' and 16 hex digits, the same for the same text in every process
 * ```
 */
export function statement(text: string): SqlStatement {
  // Two 32-bit multiplicative lanes (FNV-1a and a Murmur constant): a short name (PostgreSQL
  // truncates names at 63 bytes) with a negligible chance of collision among our statements.
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  const hex = (n: number) => (n >>> 0).toString(16).padStart(8, '0');
  return { name: `portcullis_${hex(a)}${hex(b)}`, text };
}
