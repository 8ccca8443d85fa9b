/**
 * Every statement the SQL storage runs, built once per schema. Each storage method is one of these
 * statements (a few have a fallback read on their failure path); the atomic steps are single
 * statements whose `WHERE` clause is the check, so the database decides, never JavaScript.
 * @module
 */
import { type SqlStatement, statement } from './executor.js';
import { quoteSchema } from './schema-name.js';
import {
  accessTokensTable,
  authorizationCodesTable,
  type Columns,
  clientsTable,
  consentsTable,
  grantsTable,
  pendingAuthorizationsTable,
  refreshTokensTable,
  signingKeysTable,
} from './tables.js';

/**
 * How long consumed codes and revoked grants stay past their expiry or revocation: a replayed code
 * must still be recognised, and the revoked placeholder of its grant id must outlive it. Codes live
 * at most 10 minutes (RFC 6749 §4.1.2), hence the same 600 s as the memory storage.
 */
const TOMBSTONE_SECONDS = 600;

/** The statements of one schema. Parameter order is documented where it is not a table's column order. */
export type StorageStatements = ReturnType<typeof storageStatements>;

/**
 * Builds the statements for a schema.
 *
 * @param schema - the unquoted schema name
 * @returns the named statements
 * @throws TypeError on an invalid schema name
 * @example
 * ```ts
 * const sql = storageStatements('portcullis');
 * const rows = await executor.query<{ existed: boolean }>(sql.revokeGrant, [grantId, now]);
 * ```
 */
export function storageStatements(schema: string) {
  const s = quoteSchema(schema);
  const clients = `${s}.${clientsTable.name}`;
  const pending = `${s}.${pendingAuthorizationsTable.name}`;
  const codes = `${s}.${authorizationCodesTable.name}`;
  const grants = `${s}.${grantsTable.name}`;
  const access = `${s}.${accessTokensTable.name}`;
  const refresh = `${s}.${refreshTokensTable.name}`;
  const consents = `${s}.${consentsTable.name}`;
  const keys = `${s}.${signingKeysTable.name}`;

  const clientCols = clientsTable.columns;
  const pendingCols = pendingAuthorizationsTable.columns;
  const codeCols = authorizationCodesTable.columns;
  const grantCols = grantsTable.columns;
  const accessCols = accessTokensTable.columns;
  const refreshCols = refreshTokensTable.columns;
  const consentCols = consentsTable.columns;
  const keyCols = signingKeysTable.columns;

  const insert = (table: string, cols: Columns) =>
    statement(`INSERT INTO ${table} (${cols.list()}) VALUES (${cols.params(1)})`);

  // createGrant: the grant, then its tokens only if the grant row was inserted. ON CONFLICT DO
  // NOTHING makes a concurrent or earlier row with this id (a placeholder included) win without an
  // error; the token inserts then select from an empty set. The foreign keys are checked at the
  // end of the statement, when the grant row exists.
  const grantParams = grantCols.length;
  const accessParams = accessCols.length;
  const createGrant = (withRefresh: boolean) =>
    statement(`WITH g AS (
      INSERT INTO ${grants} (${grantCols.list()}) VALUES (${grantCols.params(1)})
      ON CONFLICT (grant_id) DO NOTHING
      RETURNING grant_id
    ), new_access AS (
      INSERT INTO ${access} (${accessCols.list()}) SELECT ${accessCols.params(grantParams + 1)} FROM g
    )${
      withRefresh
        ? `, new_refresh AS (
      INSERT INTO ${refresh} (${refreshCols.list()})
      SELECT ${refreshCols.params(grantParams + accessParams + 1)} FROM g
    )`
        : ''
    }
    SELECT grant_id FROM g`);

  /** CTEs revoking the active tokens of the grants `grantIds` (an IN list or subquery) names; `$2` is now. */
  const revokeTokensOf = (grantIds: string) => `revoked_access AS (
      UPDATE ${access} SET revoked_at = $2 WHERE grant_id IN (${grantIds}) AND revoked_at IS NULL
    ), revoked_refresh AS (
      UPDATE ${refresh} SET revoked_at = $2 WHERE grant_id IN (${grantIds}) AND revoked_at IS NULL
    )`;

  /**
   * One batch of a cleanup: deletes at most `$2` rows matching `condition` (in terms of `$1`, now)
   * and counts them. Each batch is its own short transaction; rows a request holds locked are
   * skipped rather than waited for, and the condition is checked again on the row being deleted
   * in case it changed meanwhile (a client whose expiry was just cleared by its first use).
   */
  const deleteBatch = (table: string, condition: string) =>
    statement(`WITH d AS (
      DELETE FROM ${table} WHERE ctid = ANY (ARRAY (
        SELECT ctid FROM ${table} WHERE ${condition} LIMIT $2 FOR UPDATE SKIP LOCKED
      )) AND ${condition}
      RETURNING 1
    )
    SELECT count(*)::integer AS deleted FROM d`);

  return {
    // ---- clients: $1 client_id ------------------------------------------------------------------
    createClient: insert(clients, clientCols),
    /** $1 client_id, $2 now */
    getClient: statement(
      `SELECT ${clientCols.list()} FROM ${clients}
       WHERE client_id = $1 AND (expires_at IS NULL OR expires_at > $2)`,
    ),
    updateClient: statement(
      `UPDATE ${clients} SET ${clientCols.assignments()} WHERE client_id = $1 RETURNING 1`,
    ),
    /** $1 client_id, $2 now: deletes the client and its consents, revokes its grants and their tokens. */
    deleteClient: statement(`WITH c AS (
      DELETE FROM ${clients} WHERE client_id = $1 RETURNING client_id
    ), forgotten AS (
      DELETE FROM ${consents} WHERE client_id IN (SELECT client_id FROM c)
    ), revoked AS (
      UPDATE ${grants} SET revoked_at = $2
      WHERE client_id IN (SELECT client_id FROM c) AND revoked_at IS NULL
      RETURNING grant_id
    ), ${revokeTokensOf('SELECT grant_id FROM revoked')}
    SELECT client_id FROM c`),

    // ---- pending authorizations: $1 id_hash ----------------------------------------------------
    createPendingAuthorization: insert(pending, pendingCols),
    /** $1 id_hash, $2 now */
    getPendingAuthorization: statement(
      `SELECT ${pendingCols.list()} FROM ${pending} WHERE id_hash = $1 AND expires_at > $2`,
    ),
    /** $1 id_hash, $2 user_id, $3 session_id (null keeps the current one), $4 csrf_hash, $5 now */
    bindPendingAuthorization: statement(`UPDATE ${pending}
      SET user_id = $2::text, session_id = coalesce($3::text, session_id), csrf_hash = $4::text
      WHERE id_hash = $1 AND expires_at > $5 AND (user_id IS NULL OR user_id = $2::text)
      RETURNING 1`),
    /** $1 id_hash. The caller checks expiry: an expired record is removed all the same. */
    consumePendingAuthorization: statement(
      `DELETE FROM ${pending} WHERE id_hash = $1 RETURNING ${pendingCols.list()}`,
    ),

    // ---- authorization codes: $1 code_hash -----------------------------------------------------
    createAuthorizationCode: insert(codes, codeCols),
    /** $1 code_hash, $2 now */
    getAuthorizationCode: statement(
      `SELECT ${codeCols.list()} FROM ${codes} WHERE code_hash = $1 AND expires_at > $2`,
    ),
    /**
     * $1 code_hash, $2 now. The conditional update is the atomic step: concurrent callers queue on
     * the row lock, and each one after the first re-checks `consumed_at IS NULL` on the updated row
     * and matches nothing.
     */
    consumeAuthorizationCode: statement(`UPDATE ${codes} SET consumed_at = $2
      WHERE code_hash = $1 AND consumed_at IS NULL AND expires_at > $2
      RETURNING ${codeCols.list()}`),

    // ---- grants and access tokens --------------------------------------------------------------
    /** grant columns, then access token columns */
    createGrant: createGrant(false),
    /** grant columns, then access token columns, then refresh token columns */
    createGrantWithRefreshToken: createGrant(true),
    /** $1 grant_id. Placeholders (no client) are not grants. */
    getGrant: statement(
      `SELECT ${grantCols.list()} FROM ${grants} WHERE grant_id = $1 AND client_id IS NOT NULL`,
    ),
    /** $1 user_id, $2 now */
    listGrantsByUser: statement(`SELECT ${grantCols.list()} FROM ${grants}
      WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2
      ORDER BY created_at DESC, grant_id`),
    /**
     * $1 grant_id, $2 now. Revokes the grant, or inserts a revoked placeholder when the id is
     * unknown; returns a row, `existed` true, only when an unrevoked grant was revoked. The tokens
     * are revoked even when the grant already was: idempotent, and a repeated call also catches a
     * token that a racing rotation committed after the first. (Until then the grant's revocation
     * already refuses that token: every token read checks its grant.)
     */
    revokeGrant: statement(`WITH revoked AS (
      INSERT INTO ${grants} AS g (grant_id, revoked_at) VALUES ($1, $2)
      ON CONFLICT (grant_id) DO UPDATE SET revoked_at = excluded.revoked_at WHERE g.revoked_at IS NULL
      RETURNING g.client_id IS NOT NULL AS existed
    ), ${revokeTokensOf('$1')}
    SELECT existed FROM revoked`),

    createAccessToken: insert(access, accessCols),
    /**
     * $1 token_hash, $2 now. The revocation check of every protected request: one statement, two
     * primary-key probes (the token, then its grant).
     */
    getAccessToken: statement(`SELECT ${accessCols.list('t')}
      FROM ${access} t JOIN ${grants} g ON g.grant_id = t.grant_id
      WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > $2 AND g.revoked_at IS NULL`),
    /** $1 token_hash, $2 now */
    revokeAccessToken: statement(
      `UPDATE ${access} SET revoked_at = $2 WHERE token_hash = $1 AND revoked_at IS NULL RETURNING 1`,
    ),

    // ---- refresh tokens ------------------------------------------------------------------------
    /** $1 token_hash, $2 now */
    getRefreshToken: statement(`SELECT ${refreshCols.list('t')}
      FROM ${refresh} t JOIN ${grants} g ON g.grant_id = t.grant_id
      WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > $2
        AND g.revoked_at IS NULL AND g.expires_at > $2`),
    /**
     * $1 old token_hash, $2 now, $3 sealed successor, then the successor's refresh token columns,
     * then the access token columns. The conditional update of the old row is the atomic step (as
     * for codes): of concurrent rotations exactly one matches `rotated_at IS NULL`, and only its
     * statement inserts the successor and the access token. Returns the rotated token's grant_id.
     */
    rotateRefreshToken: statement(`WITH old AS (
      UPDATE ${refresh} t SET rotated_at = $2, successor_hash = $4::text, sealed_successor = $3::text
      FROM ${grants} g
      WHERE t.token_hash = $1 AND t.rotated_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > $2
        AND g.grant_id = t.grant_id AND g.revoked_at IS NULL AND g.expires_at > $2
      RETURNING t.grant_id
    ), new_refresh AS (
      INSERT INTO ${refresh} (${refreshCols.list()}) SELECT ${refreshCols.params(4)} FROM old
    ), new_access AS (
      INSERT INTO ${access} (${accessCols.list()}) SELECT ${accessCols.params(4 + refreshCols.length)} FROM old
    )
    SELECT grant_id FROM old`),

    // ---- consents: $1 user_id, $2 client_id ----------------------------------------------------
    getConsent: statement(
      `SELECT ${consentCols.list()} FROM ${consents} WHERE user_id = $1 AND client_id = $2`,
    ),
    saveConsent: statement(`INSERT INTO ${consents} (${consentCols.list()}) VALUES (${consentCols.params(1)})
      ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope, resources = excluded.resources,
        created_at = excluded.created_at, updated_at = excluded.updated_at`),
    deleteConsent: statement(`DELETE FROM ${consents} WHERE user_id = $1 AND client_id = $2 RETURNING 1`),

    // ---- signing keys: $1 kid ------------------------------------------------------------------
    listSigningKeys: statement(`SELECT ${keyCols.list()} FROM ${keys} ORDER BY created_at, position`),
    addSigningKey: insert(keys, keyCols),
    updateSigningKey: statement(`UPDATE ${keys} SET ${keyCols.assignments()} WHERE kid = $1 RETURNING 1`),

    // ---- housekeeping: $1 now, $2 batch size ---------------------------------------------------
    /** In the order deleteExpired runs them: tokens before the grants they belong to. */
    deleteExpired: [
      deleteBatch(clients, 'expires_at <= $1'),
      deleteBatch(pending, 'expires_at <= $1'),
      // Consumed codes outlive their expiry, so that a late replay still revokes the grant.
      deleteBatch(codes, `expires_at <= $1::bigint - ${TOMBSTONE_SECONDS}`),
      deleteBatch(access, 'expires_at <= $1'),
      deleteBatch(refresh, 'expires_at <= $1'),
      // Past their absolute expiry; the foreign keys delete whatever tokens remain.
      deleteBatch(grants, 'expires_at <= $1'),
      // Revoked long ago (placeholders included, which must outlive the codes of their grant id),
      // with no tokens left.
      deleteBatch(
        grants,
        `revoked_at <= $1::bigint - ${TOMBSTONE_SECONDS}
          AND NOT EXISTS (SELECT 1 FROM ${access} a WHERE a.grant_id = ${grants}.grant_id)
          AND NOT EXISTS (SELECT 1 FROM ${refresh} r WHERE r.grant_id = ${grants}.grant_id)`,
      ),
      deleteBatch(keys, 'expires_at <= $1'),
    ],
  } satisfies Record<string, SqlStatement | readonly SqlStatement[]>;
}
