/**
 * Versioned schema migrations of the SQL storage. Each migration runs once per schema, recorded in
 * `<schema>.portcullis_migrations`; all pending ones run in one transaction behind an advisory lock,
 * so several processes starting at once migrate exactly once and the others wait, then see it done.
 * The schema itself is documented in docs/storage.md; keep the two in step.
 * @module
 */
import type { SqlExecutor, SqlQueryable } from './executor.js';
import { quoteSchema } from './schema-name.js';

/** One step of the schema's history. Never edit a released migration: add the next one. */
interface Migration {
  readonly version: number;
  readonly name: string;
  /** Single statements (drivers run one statement per call), given the quoted schema. */
  statements(s: string): readonly string[];
}

// Conventions: times are epoch seconds in `bigint`; ids and hashes are `text COLLATE "C"` (byte
// order: fast comparisons, and the same order as JavaScript's `<` for the tie-break of lists);
// arrays of scopes and resources are `text[]`; opaque nested documents are `jsonb`.
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    statements: (s) => [
      `CREATE TABLE ${s}.clients (
        client_id text COLLATE "C" PRIMARY KEY,
        secret_hash text,
        metadata jsonb NOT NULL,
        origin text NOT NULL,
        created_at bigint NOT NULL,
        expires_at bigint
      )`,
      `CREATE INDEX clients_expires_at_idx ON ${s}.clients (expires_at) WHERE expires_at IS NOT NULL`,

      `CREATE TABLE ${s}.pending_authorizations (
        id_hash text COLLATE "C" PRIMARY KEY,
        request jsonb NOT NULL,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        user_id text,
        session_id text,
        csrf_hash text
      )`,
      `CREATE INDEX pending_authorizations_expires_at_idx ON ${s}.pending_authorizations (expires_at)`,

      `CREATE TABLE ${s}.authorization_codes (
        code_hash text COLLATE "C" PRIMARY KEY,
        grant_id text COLLATE "C" NOT NULL,
        client_id text NOT NULL,
        user_id text NOT NULL,
        redirect_uri text NOT NULL,
        redirect_uri_sent boolean NOT NULL,
        code_challenge text NOT NULL,
        code_challenge_method text NOT NULL,
        scope text[] NOT NULL,
        resources text[] NOT NULL,
        nonce text,
        auth_time bigint NOT NULL,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        consumed_at bigint
      )`,
      `CREATE INDEX authorization_codes_expires_at_idx ON ${s}.authorization_codes (expires_at)`,

      // A row with only grant_id and revoked_at is the placeholder revokeGrant leaves for an id not
      // created yet: its primary key makes the later createGrant fail.
      `CREATE TABLE ${s}.grants (
        grant_id text COLLATE "C" PRIMARY KEY,
        client_id text COLLATE "C",
        user_id text COLLATE "C",
        scope text[],
        resources text[],
        auth_time bigint,
        created_at bigint,
        expires_at bigint,
        revoked_at bigint,
        CONSTRAINT grants_record_or_revoked_placeholder CHECK (client_id IS NOT NULL OR revoked_at IS NOT NULL)
      )`,
      `CREATE INDEX grants_user_active_idx ON ${s}.grants (user_id, created_at DESC, grant_id) WHERE revoked_at IS NULL`,
      `CREATE INDEX grants_client_id_idx ON ${s}.grants (client_id)`,
      `CREATE INDEX grants_expires_at_idx ON ${s}.grants (expires_at)`,
      `CREATE INDEX grants_revoked_at_idx ON ${s}.grants (revoked_at) WHERE revoked_at IS NOT NULL`,

      // Tokens belong to a grant: deleting an expired grant deletes its tokens.
      `CREATE TABLE ${s}.access_tokens (
        token_hash text COLLATE "C" PRIMARY KEY,
        jti text NOT NULL,
        grant_id text COLLATE "C" NOT NULL REFERENCES ${s}.grants (grant_id) ON DELETE CASCADE,
        client_id text NOT NULL,
        user_id text NOT NULL,
        scope text[] NOT NULL,
        audience text[] NOT NULL,
        issued_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        revoked_at bigint
      )`,
      `CREATE INDEX access_tokens_grant_id_idx ON ${s}.access_tokens (grant_id)`,
      `CREATE INDEX access_tokens_expires_at_idx ON ${s}.access_tokens (expires_at)`,

      `CREATE TABLE ${s}.refresh_tokens (
        token_hash text COLLATE "C" PRIMARY KEY,
        grant_id text COLLATE "C" NOT NULL REFERENCES ${s}.grants (grant_id) ON DELETE CASCADE,
        client_id text NOT NULL,
        user_id text NOT NULL,
        scope text[] NOT NULL,
        resources text[] NOT NULL,
        issued_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        rotated_at bigint,
        successor_hash text,
        sealed_successor text,
        revoked_at bigint
      )`,
      `CREATE INDEX refresh_tokens_grant_id_idx ON ${s}.refresh_tokens (grant_id)`,
      `CREATE INDEX refresh_tokens_expires_at_idx ON ${s}.refresh_tokens (expires_at)`,

      // No foreign key to clients: consents and grants may name clients that are not stored
      // (Client ID Metadata Documents are fetched, not registered).
      `CREATE TABLE ${s}.consents (
        user_id text COLLATE "C" NOT NULL,
        client_id text COLLATE "C" NOT NULL,
        scope text[] NOT NULL,
        resources text[] NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (user_id, client_id)
      )`,
      `CREATE INDEX consents_client_id_idx ON ${s}.consents (client_id)`,

      // A handful of rows: no index beyond the key. `position` keeps insertion order for ties.
      `CREATE TABLE ${s}.signing_keys (
        kid text COLLATE "C" PRIMARY KEY,
        alg text NOT NULL,
        private_jwk text NOT NULL,
        created_at bigint NOT NULL,
        activates_at bigint NOT NULL,
        retires_at bigint,
        expires_at bigint,
        position bigint GENERATED ALWAYS AS IDENTITY
      )`,
    ],
  },
  {
    // Schema 2 goes with the storage contract by aggregate: a code is redeemed in one statement
    // that consumes it and inserts the grant under the id allocated with it, and a replay revokes
    // that grant id. Nothing else changes: a version-1 database keeps its rows, its rotated and
    // active refresh tokens keep working, and version 1's revoked placeholders (grant rows without
    // a client) are ignored by every read and deleted by the housekeeping like any revoked grant.
    // The previous release runs unchanged on this schema (it allocates one grant id per code too).
    version: 2,
    name: 'one authorization code per grant id',
    statements: (s) => [
      `CREATE UNIQUE INDEX authorization_codes_grant_id_key ON ${s}.authorization_codes (grant_id)`,
    ],
  },
  {
    // Schema 3 goes with the housekeeping that deletes a grant together with its last unexpired
    // token: "does this grant still have a token expiring after now?" becomes one probe of a
    // (grant_id, expires_at) index instead of a walk over every token the grant ever had (an agent
    // refreshing every 15 minutes keeps thousands of rotated refresh tokens until they expire).
    // The new indexes replace the grant_id ones (same prefix: revoking a grant's tokens uses them
    // as before), so a token insert maintains no more indexes than before. IF NOT EXISTS: on a
    // large database an operator may build them first with CREATE INDEX CONCURRENTLY (docs/storage.md).
    // The previous release runs unchanged on this schema.
    version: 3,
    name: 'token indexes by grant and expiry',
    statements: (s) => [
      `CREATE INDEX IF NOT EXISTS access_tokens_grant_id_expires_at_idx ON ${s}.access_tokens (grant_id, expires_at)`,
      `DROP INDEX IF EXISTS ${s}.access_tokens_grant_id_idx`,
      `CREATE INDEX IF NOT EXISTS refresh_tokens_grant_id_expires_at_idx ON ${s}.refresh_tokens (grant_id, expires_at)`,
      `DROP INDEX IF EXISTS ${s}.refresh_tokens_grant_id_idx`,
    ],
  },
  {
    // Schema 4 holds the replay aggregate: one-time values (client assertion and DPoP proof jtis),
    // each a fixed-length digest, kept until it expires. A new table only: the previous release
    // runs unchanged on this schema.
    version: 4,
    name: 'replay keys',
    statements: (s) => [
      `CREATE TABLE ${s}.replay_keys (
        key text COLLATE "C" PRIMARY KEY,
        expires_at bigint NOT NULL
      )`,
      `CREATE INDEX replay_keys_expires_at_idx ON ${s}.replay_keys (expires_at)`,
    ],
  },
  {
    // Schema 5 goes with DPoP (RFC 9449): the thumbprint of the key an access token (`cnf.jkt`) or
    // a public client's refresh token is bound to. Nullable columns without a default: adding them
    // rewrites nothing, and the previous release runs unchanged on this schema (it never reads them,
    // and its tokens are bearer tokens, null here).
    version: 5,
    name: 'DPoP key binding of tokens',
    statements: (s) => [
      `ALTER TABLE ${s}.access_tokens ADD COLUMN IF NOT EXISTS dpop_jkt text`,
      `ALTER TABLE ${s}.refresh_tokens ADD COLUMN IF NOT EXISTS dpop_jkt text`,
    ],
  },
  {
    // Schema 6 goes with batched rotations (`./batch.ts`): the refreshes that queue behind busy
    // ones are rotated by one call of this function, one statement and one commit for all of them.
    // Each rotation runs the conditions of the single-statement rotation (`rotateRefreshToken` in
    // `./statements.ts`); only one that updated its token inserts its successor and access token,
    // and the function returns the successor hash of each of those. Statements inside a function
    // are planned once per connection with the token hash as a parameter: a primary-key probe on
    // any table size (one statement over all the rotations would be planned once for the table's
    // size at the time, a sequential scan on a new database that then grows). Tokens are visited
    // in byte order of their hash, so two batches lock common tokens in the same order and cannot
    // deadlock each other. The records arrive as JSON and become rows of the tables' own types, so
    // a later schema's nullable column needs no change here (a column with a default would: a key
    // missing from the JSON becomes NULL, not the default). A new function only: the previous
    // release runs unchanged on this schema.
    version: 6,
    name: 'batched refresh token rotation',
    statements: (s) => [
      `CREATE OR REPLACE FUNCTION ${s}.rotate_refresh_tokens(rotations jsonb) RETURNS SETOF text
      LANGUAGE plpgsql AS $rotate$
      DECLARE
        rotation jsonb;
        presented text;
        at bigint;
        successor ${s}.refresh_tokens;
      BEGIN
        FOR rotation IN
          SELECT value FROM jsonb_array_elements(rotations) ORDER BY value->>'presented' COLLATE "C"
        LOOP
          presented := rotation->>'presented';
          at := (rotation->>'now')::bigint;
          successor := jsonb_populate_record(NULL::${s}.refresh_tokens, rotation->'successor');
          UPDATE ${s}.refresh_tokens t
            SET rotated_at = at, successor_hash = successor.token_hash, sealed_successor = rotation->>'sealed'
            FROM ${s}.grants g
            WHERE t.token_hash = presented AND t.rotated_at IS NULL AND t.revoked_at IS NULL
              AND t.expires_at > at AND g.grant_id = t.grant_id AND g.revoked_at IS NULL
              AND g.expires_at > at;
          IF FOUND THEN
            INSERT INTO ${s}.refresh_tokens SELECT successor.*;
            INSERT INTO ${s}.access_tokens
              SELECT (jsonb_populate_record(NULL::${s}.access_tokens, rotation->'access')).*;
            RETURN NEXT successor.token_hash;
          END IF;
        END LOOP;
      END
      $rotate$`,
    ],
  },
  {
    // Schema 7 batches the code flow's two atomic steps the way schema 6 batches rotations: the
    // completions of pending authorizations, and the redemptions of codes, that queue behind busy
    // ones. Each item runs the conditions of its single statement (`complete` and `redeem` in
    // `./statements.ts`); only one whose conditional write matched inserts what follows from it,
    // and the function returns a key of each such item that the caller generated fresh (the new
    // code's hash; the new access token's hash), so rivals over one row are told apart. Rows are
    // visited in byte order of what they lock (the remembered consent's user and client, then the
    // pending row; the code), so two batches cannot deadlock each other. As in schema 6, the
    // records arrive as JSON and become rows of the tables' own types. New functions only: the
    // previous release runs unchanged on this schema.
    version: 7,
    name: 'batched code flow steps',
    statements: (s) => [
      `CREATE OR REPLACE FUNCTION ${s}.complete_pending_authorizations(completions jsonb) RETURNS SETOF text
      LANGUAGE plpgsql AS $complete$
      DECLARE
        completion jsonb;
        at bigint;
        bound_user text;
        new_code ${s}.authorization_codes;
        grown ${s}.consents;
      BEGIN
        FOR completion IN
          SELECT value FROM jsonb_array_elements(completions)
          ORDER BY value->'consent'->>'user_id' COLLATE "C", value->'consent'->>'client_id' COLLATE "C",
            value->>'id' COLLATE "C"
        LOOP
          at := (completion->>'now')::bigint;
          bound_user := completion->>'user';
          DELETE FROM ${s}.pending_authorizations p
            WHERE p.id_hash = completion->>'id' AND p.expires_at > at
              AND (bound_user IS NULL OR (p.user_id = bound_user AND p.csrf_hash = completion->>'csrf'
                AND (p.session_id IS NULL OR p.session_id = completion->>'session')));
          IF FOUND THEN
            new_code := jsonb_populate_record(NULL::${s}.authorization_codes, completion->'code');
            INSERT INTO ${s}.authorization_codes SELECT new_code.*;
            IF jsonb_typeof(completion->'consent') = 'object' THEN
              grown := jsonb_populate_record(NULL::${s}.consents, completion->'consent');
              INSERT INTO ${s}.consents AS c SELECT grown.*
                ON CONFLICT (user_id, client_id) DO UPDATE
                SET scope = ARRAY(SELECT v FROM unnest(c.scope || excluded.scope) WITH ORDINALITY AS u(v, n)
                    GROUP BY v ORDER BY min(n)),
                  resources = ARRAY(SELECT v FROM unnest(c.resources || excluded.resources)
                    WITH ORDINALITY AS u(v, n) GROUP BY v ORDER BY min(n)),
                  updated_at = excluded.updated_at;
            END IF;
            RETURN NEXT new_code.code_hash;
          END IF;
        END LOOP;
      END
      $complete$`,
      `CREATE OR REPLACE FUNCTION ${s}.redeem_codes(redemptions jsonb) RETURNS SETOF text
      LANGUAGE plpgsql AS $redeem$
      DECLARE
        redemption jsonb;
        at bigint;
        new_grant ${s}.grants;
        new_access ${s}.access_tokens;
      BEGIN
        FOR redemption IN
          SELECT value FROM jsonb_array_elements(redemptions) ORDER BY value->>'code' COLLATE "C"
        LOOP
          at := (redemption->>'now')::bigint;
          new_grant := jsonb_populate_record(NULL::${s}.grants, redemption->'grant');
          UPDATE ${s}.authorization_codes SET consumed_at = at
            WHERE code_hash = redemption->>'code' AND grant_id = new_grant.grant_id
              AND consumed_at IS NULL AND expires_at > at;
          IF FOUND THEN
            new_access := jsonb_populate_record(NULL::${s}.access_tokens, redemption->'access');
            INSERT INTO ${s}.grants SELECT new_grant.*;
            INSERT INTO ${s}.access_tokens SELECT new_access.*;
            IF jsonb_typeof(redemption->'refresh') = 'object' THEN
              INSERT INTO ${s}.refresh_tokens
                SELECT (jsonb_populate_record(NULL::${s}.refresh_tokens, redemption->'refresh')).*;
            END IF;
            RETURN NEXT new_access.token_hash;
          END IF;
        END LOOP;
      END
      $redeem$`,
    ],
  },
];

/** The schema version this release of the library expects. */
export const LATEST_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/**
 * What a migration run did.
 *
 * @example
 * ```ts
 * import { type MigrationReport, migrate } from 'portcullis/postgres';
 *
 * const report: MigrationReport = await migrate({ connectionString: process.env.DATABASE_URL ?? '' });
 * if (report.applied.length === 0) console.log(`schema ${report.schema} already at version ${report.toVersion}`);
 * ```
 * @see docs/storage.md, "Migrations"
 * @group Storage
 */
export interface MigrationReport {
  /** The schema migrated. */
  readonly schema: string;
  /** The version before, 0 for a schema that had no storage tables. */
  readonly fromVersion: number;
  /** The version now. */
  readonly toVersion: number;
  /** The versions applied by this call, in order; empty when the schema was up to date. */
  readonly applied: readonly number[];
}

/**
 * The schema version recorded in the database, 0 when the storage tables do not exist yet.
 *
 * @param db - where to look
 * @param schema - the (unquoted) schema name
 * @returns the highest applied migration version
 * @throws TypeError on an invalid schema name
 * @example
 * ```ts
 * if ((await schemaVersion(executor, 'portcullis')) < LATEST_VERSION) console.warn('migrate first');
 * ```
 */
export async function schemaVersion(db: SqlQueryable, schema: string): Promise<number> {
  const s = quoteSchema(schema);
  // to_regclass first: reading a table that does not exist would abort a surrounding transaction.
  const [found] = await db.query<{ present: boolean }>(
    { text: 'SELECT to_regclass($1) IS NOT NULL AS present' },
    [`${s}.portcullis_migrations`],
  );
  if (found?.present !== true) return 0;
  const [row] = await db.query<{ version: number | null }>(
    { text: `SELECT max(version) AS version FROM ${s}.portcullis_migrations` },
    [],
  );
  return row?.version ?? 0;
}

/**
 * Brings a schema up to {@link LATEST_VERSION}. Idempotent, and safe when several processes call it
 * at once: pending migrations run in one transaction after `pg_advisory_xact_lock` on the schema's
 * name, and whoever gets the lock second finds nothing left to do.
 *
 * @param executor - the database
 * @param schema - the (unquoted) schema name; created when missing
 * @param now - epoch seconds, recorded as `applied_at`
 * @param target - the version to stop at (tests build an older schema with it); default the latest
 * @returns what was applied
 * @throws TypeError on an invalid schema name; the driver's error when a statement fails (the
 *   transaction is rolled back and the schema left as it was)
 * @example
 * ```ts
 * const report = await migrateSchema(executor, 'portcullis', Math.floor(Date.now() / 1000));
 * // { schema: 'portcullis', fromVersion: 0, toVersion: 7, applied: [1, 2, 3, 4, 5, 6, 7] }
 * ```
 */
export async function migrateSchema(
  executor: SqlExecutor,
  schema: string,
  now: number,
  target: number = LATEST_VERSION,
): Promise<MigrationReport> {
  try {
    return await migrateOnce(executor, schema, now, target);
  } catch (error) {
    // Another process migrated while this one waited for the lock, but this connection's catalog
    // cache still said the schema was missing (PostgreSQL, seen on a connection that had run DDL
    // before): creating it then fails as a duplicate. A new transaction sees what was committed,
    // and finds nothing left to do.
    if (!isDuplicateObjectError(error)) throw error;
    return migrateOnce(executor, schema, now, target);
  }
}

/** Unique violation, duplicate schema, table or object: what creating an existing object raises. */
function isDuplicateObjectError(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return code === '23505' || code === '42P06' || code === '42P07' || code === '42710';
}

async function migrateOnce(
  executor: SqlExecutor,
  schema: string,
  now: number,
  target: number,
): Promise<MigrationReport> {
  const s = quoteSchema(schema);
  const fromVersion = await schemaVersion(executor, schema);
  if (fromVersion >= target) {
    // Up to date: no lock and no CREATE SCHEMA, which needs a privilege the runtime role may lack.
    return { schema, fromVersion, toVersion: fromVersion, applied: [] };
  }
  return executor.transaction(async (tx) => {
    await tx.query({ text: 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))' }, [
      `portcullis.migrate:${schema}`,
    ]);
    await tx.query({ text: `CREATE SCHEMA IF NOT EXISTS ${s}` }, []);
    await tx.query(
      {
        text: `CREATE TABLE IF NOT EXISTS ${s}.portcullis_migrations (
          version integer PRIMARY KEY,
          name text NOT NULL,
          applied_at bigint NOT NULL
        )`,
      },
      [],
    );
    // Read again under the lock: another process may have migrated while we waited.
    const current = await schemaVersion(tx, schema);
    const applied: number[] = [];
    for (const migration of MIGRATIONS) {
      if (migration.version <= current || migration.version > target) continue;
      for (const text of migration.statements(s)) await tx.query({ text }, []);
      await tx.query(
        { text: `INSERT INTO ${s}.portcullis_migrations (version, name, applied_at) VALUES ($1, $2, $3)` },
        [migration.version, migration.name, now],
      );
      applied.push(migration.version);
    }
    return { schema, fromVersion: current, toVersion: Math.max(current, target), applied };
  });
}
