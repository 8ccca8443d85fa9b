/**
 * The PostgreSQL schema the storage tables live in. Statements name every table with its schema,
 * so they never depend on the connection's `search_path` (a pool shared with the host is safe).
 * @module
 */

/** The schema used when the options name none. */
export const DEFAULT_SCHEMA = 'portcullis';

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Checks a schema name and returns it double-quoted for SQL text.
 *
 * @param schema - a plain identifier: letters, digits and `_`, at most 63 characters
 * @returns the quoted identifier, e.g. `"portcullis"`
 * @throws TypeError when the name is not a plain identifier (it is interpolated into SQL text)
 * @example
 * ```ts
 * quoteSchema('auth'); // '"auth"'
 * quoteSchema('auth; DROP TABLE x'); // throws TypeError
 * ```
 */
export function quoteSchema(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new TypeError(
      `storage schema ${JSON.stringify(schema)}: use letters, digits and "_" (at most 63, not starting with a digit)`,
    );
  }
  return `"${schema}"`;
}
