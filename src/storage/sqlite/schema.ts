/**
 * The SQLite storage's tables and their versioned migrations. Each migration runs once per database
 * file, recorded in `portcullis_migrations`; the pending ones run in one `BEGIN IMMEDIATE`
 * transaction, so that two processes starting at once on one file migrate exactly once (the second
 * waits for the write lock, then finds nothing left to do) and a failed migration leaves the file as
 * it was. docs/storage.md documents the tables; keep the two in step.
 *
 * Conventions: every table is `STRICT` and prefixed `portcullis_` (the host's own tables may share
 * the file); times are epoch seconds (`INTEGER`); ids and hashes are `TEXT` (binary collation: the
 * byte order, the same as JavaScript's `<` for the ASCII ids the server makes); lists of scopes and
 * resources, and nested documents, are JSON `TEXT`; booleans are `0`/`1`.
 * @module
 */
import type { SqliteDatabase } from './database.js';

/** One step of the schema's history. Never edit a released migration: add the next one. */
export interface SqliteMigration {
  readonly version: number;
  readonly name: string;
  /** The statements, run in order inside the migration's transaction. */
  readonly statements: readonly string[];
}

/** The storage's tables, by aggregate. */
export const TABLES = {
  clients: 'portcullis_clients',
  pending: 'portcullis_pending_authorizations',
  codes: 'portcullis_authorization_codes',
  grants: 'portcullis_grants',
  access: 'portcullis_access_tokens',
  refresh: 'portcullis_refresh_tokens',
  consents: 'portcullis_consents',
  keys: 'portcullis_signing_keys',
  replay: 'portcullis_replay_keys',
} as const;

const MIGRATIONS_TABLE = 'portcullis_migrations';
const T = TABLES;

export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: 'initial schema',
    statements: [
      `CREATE TABLE ${T.clients} (
        client_id TEXT PRIMARY KEY,
        secret_hash TEXT,
        metadata TEXT NOT NULL,
        origin TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER
      ) STRICT`,
      `CREATE INDEX ${T.clients}_expires_at ON ${T.clients} (expires_at) WHERE expires_at IS NOT NULL`,

      `CREATE TABLE ${T.pending} (
        id_hash TEXT PRIMARY KEY,
        request TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        user_id TEXT,
        session_id TEXT,
        csrf_hash TEXT
      ) STRICT`,
      `CREATE INDEX ${T.pending}_expires_at ON ${T.pending} (expires_at)`,

      // grant_id is unique: one code creates one grant, and a replay finds the grant to revoke.
      `CREATE TABLE ${T.codes} (
        code_hash TEXT PRIMARY KEY,
        grant_id TEXT NOT NULL UNIQUE,
        client_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        redirect_uri_sent INTEGER NOT NULL,
        code_challenge TEXT NOT NULL,
        code_challenge_method TEXT NOT NULL,
        scope TEXT NOT NULL,
        resources TEXT NOT NULL,
        nonce TEXT,
        auth_time INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        consumed_at INTEGER
      ) STRICT`,
      `CREATE INDEX ${T.codes}_expires_at ON ${T.codes} (expires_at)`,

      `CREATE TABLE ${T.grants} (
        grant_id TEXT PRIMARY KEY,
        client_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        resources TEXT NOT NULL,
        auth_time INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        revoked_at INTEGER
      ) STRICT`,
      `CREATE INDEX ${T.grants}_user_active ON ${T.grants} (user_id, created_at DESC, grant_id) WHERE revoked_at IS NULL`,
      `CREATE INDEX ${T.grants}_client_id ON ${T.grants} (client_id)`,
      `CREATE INDEX ${T.grants}_expires_at ON ${T.grants} (expires_at)`,
      `CREATE INDEX ${T.grants}_revoked_at ON ${T.grants} (revoked_at) WHERE revoked_at IS NOT NULL`,

      // Tokens belong to a grant: deleting a grant deletes its tokens (foreign_keys is on). Their
      // (grant_id, expires_at) indexes serve the cascade, revoking a grant's tokens, and the
      // housekeeping's "does this grant keep an unexpired token" in one probe.
      `CREATE TABLE ${T.access} (
        token_hash TEXT PRIMARY KEY,
        jti TEXT NOT NULL,
        grant_id TEXT NOT NULL REFERENCES ${T.grants} (grant_id) ON DELETE CASCADE,
        client_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        audience TEXT NOT NULL,
        issued_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        revoked_at INTEGER
      ) STRICT`,
      `CREATE INDEX ${T.access}_grant_id_expires_at ON ${T.access} (grant_id, expires_at)`,
      `CREATE INDEX ${T.access}_expires_at ON ${T.access} (expires_at)`,

      `CREATE TABLE ${T.refresh} (
        token_hash TEXT PRIMARY KEY,
        grant_id TEXT NOT NULL REFERENCES ${T.grants} (grant_id) ON DELETE CASCADE,
        client_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        resources TEXT NOT NULL,
        issued_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        rotated_at INTEGER,
        successor_hash TEXT,
        sealed_successor TEXT,
        revoked_at INTEGER
      ) STRICT`,
      `CREATE INDEX ${T.refresh}_grant_id_expires_at ON ${T.refresh} (grant_id, expires_at)`,
      `CREATE INDEX ${T.refresh}_expires_at ON ${T.refresh} (expires_at)`,

      // No foreign key to clients: consents and grants may name clients that are not stored
      // (Client ID Metadata Documents are fetched, not registered).
      `CREATE TABLE ${T.consents} (
        user_id TEXT NOT NULL,
        client_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        resources TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (user_id, client_id)
      ) STRICT`,
      `CREATE INDEX ${T.consents}_client_id ON ${T.consents} (client_id)`,

      // A handful of rows; the rowid keeps insertion order for ties of created_at.
      `CREATE TABLE ${T.keys} (
        kid TEXT PRIMARY KEY,
        alg TEXT NOT NULL,
        private_jwk TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        activates_at INTEGER NOT NULL,
        retires_at INTEGER,
        expires_at INTEGER
      ) STRICT`,
    ],
  },
  {
    // The replay aggregate: one-time values (client assertion and DPoP proof jtis), each a
    // fixed-length digest, kept until it expires. A new table only.
    version: 2,
    name: 'replay keys',
    statements: [
      `CREATE TABLE ${T.replay} (
        key TEXT PRIMARY KEY,
        expires_at INTEGER NOT NULL
      ) STRICT`,
      `CREATE INDEX ${T.replay}_expires_at ON ${T.replay} (expires_at)`,
    ],
  },
  {
    // DPoP (RFC 9449): the thumbprint of the key an access token (`cnf.jkt`) or a public client's
    // refresh token is bound to; null for bearer tokens. Adding a nullable column rewrites nothing.
    version: 3,
    name: 'DPoP key binding of tokens',
    statements: [
      `ALTER TABLE ${T.access} ADD COLUMN dpop_jkt TEXT`,
      `ALTER TABLE ${T.refresh} ADD COLUMN dpop_jkt TEXT`,
    ],
  },
];

/** The schema version this release of the library expects. */
export const LATEST_SQLITE_VERSION: number = SQLITE_MIGRATIONS[SQLITE_MIGRATIONS.length - 1]!.version;

/** What a migration run did. */
export interface SqliteMigrationReport {
  /** The version before, 0 for a file without the storage's tables. */
  readonly fromVersion: number;
  /** The version now. */
  readonly toVersion: number;
  /** The versions applied by this call, in order; empty when the file was up to date. */
  readonly applied: readonly number[];
}

/** The schema version recorded in the file, 0 when the storage's tables do not exist yet. */
export function sqliteSchemaVersion(db: SqliteDatabase): number {
  const table = db.get<{ name: string }>(
    "SELECT name FROM sqlite_schema WHERE type = 'table' AND name = ?",
    MIGRATIONS_TABLE,
  );
  if (table === undefined) return 0;
  return (
    db.get<{ version: number | null }>(`SELECT max(version) AS version FROM ${MIGRATIONS_TABLE}`)?.version ??
    0
  );
}

/**
 * Brings the file up to the last of `migrations` (by default the storage's own, up to
 * {@link LATEST_SQLITE_VERSION}). Idempotent; safe when several processes call it at once: the
 * pending migrations run in one `BEGIN IMMEDIATE` transaction, and the version is read again under
 * the write lock. A later release appends migrations; they apply in place, keeping every row.
 *
 * @param db - the open database
 * @param now - epoch seconds, recorded as `applied_at`
 * @param options - `target`: the version to stop at (tests build an older schema with it);
 *   `migrations`: the history to apply (tests add a future step)
 * @returns what was applied
 * @throws the driver's error when a statement fails (the transaction is rolled back, the file left as it was)
 * @throws Error when the file's schema is newer than the history knows (a downgrade)
 */
export function migrateSqlite(
  db: SqliteDatabase,
  now: number,
  options: { readonly target?: number; readonly migrations?: readonly SqliteMigration[] } = {},
): SqliteMigrationReport {
  const migrations = options.migrations ?? SQLITE_MIGRATIONS;
  const latest = migrations[migrations.length - 1]?.version ?? 0;
  const target = options.target ?? latest;
  const before = sqliteSchemaVersion(db);
  if (before > latest) {
    throw new Error(
      `the SQLite database ${db.file} is at storage schema version ${before}, newer than this release of ` +
        `portcullis knows (${latest}): upgrade portcullis, or open a copy made before the upgrade`,
    );
  }
  // Up to date: no write lock at all (the common start of every process after the first).
  if (before >= target) return { fromVersion: before, toVersion: before, applied: [] };
  return db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    ) STRICT`);
    // Read again under the write lock: another process may have migrated while this one waited.
    const current = sqliteSchemaVersion(db);
    const applied: number[] = [];
    for (const migration of migrations) {
      if (migration.version <= current || migration.version > target) continue;
      for (const statement of migration.statements) db.exec(statement);
      db.run(
        `INSERT INTO ${MIGRATIONS_TABLE} (version, name, applied_at) VALUES (?, ?, ?)`,
        migration.version,
        migration.name,
        now,
      );
      applied.push(migration.version);
    }
    return { fromVersion: current, toVersion: Math.max(current, target), applied };
  });
}
