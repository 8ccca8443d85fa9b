/**
 * The SQL the reference server needs from a database: one method, which `pg.Pool`, `pg.Client`
 * and PGlite all have as they are. Its own tables carry the `cs_` prefix, so they live beside the
 * library's tables in one database.
 * @module
 */

/** A database connection or pool: `pg.Pool`, `pg.Client` or a PGlite instance satisfy it unchanged. */
export interface SqlClient {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * The tables, created when absent. Times are epoch milliseconds in `double precision`, which both
 * drivers return as JS numbers (`bigint` would come back as a string from `pg`).
 */
export const SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS cs_users (
    id text PRIMARY KEY,
    email text NOT NULL UNIQUE,
    name text NOT NULL,
    role text NOT NULL CHECK (role IN ('owner', 'student')),
    password_hash text NOT NULL,
    created_at double precision NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS cs_sessions (
    id_hash text PRIMARY KEY,
    user_id text NOT NULL REFERENCES cs_users (id) ON DELETE CASCADE,
    auth_time double precision NOT NULL,
    csrf_token text NOT NULL,
    expires_at double precision NOT NULL
  )`,
  'CREATE INDEX IF NOT EXISTS cs_sessions_expires_at ON cs_sessions (expires_at)',
  `CREATE TABLE IF NOT EXISTS cs_records (
    seq bigserial UNIQUE,
    kind text NOT NULL,
    id text NOT NULL,
    parent_id text,
    owner_id text,
    is_public boolean NOT NULL,
    search_text text NOT NULL DEFAULT '',
    data jsonb NOT NULL,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL,
    PRIMARY KEY (kind, id)
  )`,
  'CREATE INDEX IF NOT EXISTS cs_records_kind_seq ON cs_records (kind, seq)',
  'CREATE INDEX IF NOT EXISTS cs_records_parent ON cs_records (parent_id)',
  'CREATE INDEX IF NOT EXISTS cs_records_owner ON cs_records (kind, owner_id)',
  `CREATE TABLE IF NOT EXISTS cs_meta (
    key text PRIMARY KEY,
    value text NOT NULL
  )`,
];
