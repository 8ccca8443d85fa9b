/**
 * Every statement the SQL storage runs, built once per schema. Each storage method is one of these
 * statements (the two atomic steps have a fallback read on their failure path); the atomic steps
 * are single statements whose `WHERE` clause is the check, so the database decides, never
 * JavaScript.
 * @module
 */
import { CODE_TOMBSTONE_SECONDS } from '../types.js';
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
 * const rows = await executor.query<{ revoked: number }>(sql.revokeGrant, [grantId, now]);
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
  const replay = `${s}.replay_keys`;

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

  // The code redemption, one statement: the conditional update of the code is the atomic step
  // (concurrent callers queue on the row lock, and each one after the first re-checks
  // `consumed_at IS NULL` on the updated row and matches nothing); the grant is inserted only from
  // the row it returned, and the tokens only from the grant row. The foreign keys are checked at
  // the end of the statement, when the grant row exists. Any failure undoes all of it.
  // Parameters: $1 now, $2 code_hash, then the grant's columns (grant_id first), the access token's,
  // and the refresh token's.
  const grantFirst = 3;
  const accessFirst = grantFirst + grantCols.length;
  const refreshFirst = accessFirst + accessCols.length;
  const redeem = (withRefresh: boolean) =>
    statement(`WITH code AS (
      UPDATE ${codes} SET consumed_at = $1
      WHERE code_hash = $2 AND grant_id = $${grantFirst}::text AND consumed_at IS NULL AND expires_at > $1
      RETURNING grant_id
    ), g AS (
      INSERT INTO ${grants} (${grantCols.list()}) SELECT ${grantCols.params(grantFirst)} FROM code
      RETURNING grant_id
    ), new_access AS (
      INSERT INTO ${access} (${accessCols.list()}) SELECT ${accessCols.params(accessFirst)} FROM g
    )${
      withRefresh
        ? `, new_refresh AS (
      INSERT INTO ${refresh} (${refreshCols.list()}) SELECT ${refreshCols.params(refreshFirst)} FROM g
    )`
        : ''
    }
    SELECT grant_id FROM g`);

  // Completing a pending authorization, one statement: the DELETE of the pending row is the atomic
  // step (of concurrent callers one deletes it, the others wait for its lock and then find
  // nothing); the code, and the consent, are inserted only from the row it returned. With the
  // consent form's binding ($3 not null), only a row bound to that user, CSRF hash and session (or
  // to no session; a null $5 matches only that) is deleted. A remembered consent grows: its
  // scopes and resources become the union, stored ones first, in order.
  // Parameters: $1 id_hash, $2 now, $3 user_id, $4 csrf_hash, $5 session_id (all three null
  // without a binding), then the code's columns, then the consent's.
  const codeFirst = 6;
  const consentFirst = codeFirst + codeCols.length;
  const union = (column: string) =>
    `ARRAY(SELECT v FROM unnest(c.${column} || excluded.${column}) WITH ORDINALITY AS u(v, n) GROUP BY v ORDER BY min(n))`;
  const complete = (withConsent: boolean) =>
    statement(`WITH done AS (
      DELETE FROM ${pending} WHERE id_hash = $1 AND expires_at > $2
        AND ($3::text IS NULL OR (user_id = $3::text AND csrf_hash = $4::text
          AND (session_id IS NULL OR session_id = $5::text)))
      RETURNING id_hash
    ), new_code AS (
      INSERT INTO ${codes} (${codeCols.list()}) SELECT ${codeCols.params(codeFirst)} FROM done
    )${
      withConsent
        ? `, consent AS (
      INSERT INTO ${consents} AS c (${consentCols.list()}) SELECT ${consentCols.params(consentFirst)} FROM done
      ON CONFLICT (user_id, client_id) DO UPDATE
      SET scope = ${union('scope')}, resources = ${union('resources')}, updated_at = excluded.updated_at
    )`
        : ''
    }
    SELECT 1 AS completed FROM done`);

  /** CTEs revoking the active tokens of the grants `grantIds` (an IN list or subquery) names; `$2` is now. */
  const revokeTokensOf = (grantIds: string) => `revoked_access AS (
      UPDATE ${access} SET revoked_at = $2 WHERE grant_id IN (${grantIds}) AND revoked_at IS NULL
    ), revoked_refresh AS (
      UPDATE ${refresh} SET revoked_at = $2 WHERE grant_id IN (${grantIds}) AND revoked_at IS NULL
    )`;

  /** A refresh token with its grant's auth_time, while both are active; `$1` hash, `$2` now. */
  const activeRefreshToken = `SELECT ${refreshCols.list('t')}, g.auth_time
      FROM ${refresh} t JOIN ${grants} g ON g.grant_id = t.grant_id
      WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > $2
        AND g.revoked_at IS NULL AND g.expires_at > $2`;

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

  /**
   * One batch of expired tokens of `table`, and with them the grants they leave without any
   * unexpired token (a grant nothing can use any more: no refresh token to refresh with, no
   * access token to revoke). The foreign keys delete those grants' remaining expired tokens.
   */
  const deleteTokenBatch = (table: string) =>
    statement(`WITH d AS (
      DELETE FROM ${table} WHERE ctid = ANY (ARRAY (
        SELECT ctid FROM ${table} WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED
      )) AND expires_at <= $1
      RETURNING grant_id
    ), emptied AS (
      DELETE FROM ${grants} g WHERE g.grant_id IN (SELECT grant_id FROM d)
        AND NOT EXISTS (SELECT 1 FROM ${access} a WHERE a.grant_id = g.grant_id AND a.expires_at > $1)
        AND NOT EXISTS (SELECT 1 FROM ${refresh} r WHERE r.grant_id = g.grant_id AND r.expires_at > $1)
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM d)::integer AS deleted, (SELECT count(*) FROM emptied)::integer AS also`);

  return {
    // ---- clients: $1 client_id ------------------------------------------------------------------
    createClient: insert(clients, clientCols),
    /** $1 client_id, $2 now */
    getClient: statement(
      `SELECT ${clientCols.list()} FROM ${clients}
       WHERE client_id = $1 AND (expires_at IS NULL OR expires_at > $2)`,
    ),
    clearClientExpiry: statement(`UPDATE ${clients} SET expires_at = NULL WHERE client_id = $1 RETURNING 1`),
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
    /**
     * Several pending authorizations in one statement and one commit (`./batch.ts`): $1 jsonb, an
     * array of rows keyed by column. Returns each `key` (id_hash) inserted: all or nothing.
     */
    createPendingAuthorizations: statement(`INSERT INTO ${pending}
      SELECT * FROM jsonb_populate_recordset(NULL::${pending}, $1::jsonb)
      RETURNING id_hash AS key`),
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
    /** $1 id_hash, $2 now, $3-$5 the binding (user_id, csrf_hash, session_id), then the code's columns */
    completePendingAuthorization: complete(false),
    /** $1 id_hash, $2 now, $3-$5 the binding, then the code's and the consent's columns */
    completePendingAuthorizationWithConsent: complete(true),
    /**
     * Several completions in one statement and one commit, by the function of schema 7: $1 jsonb,
     * an array of `{ id, now, user, csrf, session, code, consent }` (the binding's three null
     * without one; the code's and the consent's rows as objects keyed by column, the consent null
     * when none is remembered). Each is decided as {@link completePendingAuthorization} decides it;
     * returns the `key` (new code's hash) of each that completed.
     */
    completePendingAuthorizations: statement(
      `SELECT key FROM ${s}.complete_pending_authorizations($1::jsonb) AS key`,
    ),

    // ---- authorization codes: $1 code_hash, $2 now ---------------------------------------------
    createAuthorizationCode: insert(codes, codeCols),
    /** An active code, or a consumed one until its tombstone time. */
    getAuthorizationCode: statement(`SELECT ${codeCols.list()} FROM ${codes}
      WHERE code_hash = $1
        AND expires_at > $2::bigint - CASE WHEN consumed_at IS NULL THEN 0 ELSE ${CODE_TOMBSTONE_SECONDS} END`),
    /** now, code_hash, then grant, access token columns (see `redeem` above) */
    redeemCode: redeem(false),
    /** now, code_hash, then grant, access token, refresh token columns */
    redeemCodeWithRefreshToken: redeem(true),
    /**
     * Several redemptions in one statement and one commit, by the function of schema 7: $1 jsonb,
     * an array of `{ code, now, grant, access, refresh }` (the code's hash, the time, and the rows
     * as objects keyed by column, the refresh token null when none is issued). Each is decided as
     * {@link redeemCode} decides it; returns the `key` (new access token's hash) of each redeemed.
     */
    redeemCodes: statement(`SELECT key FROM ${s}.redeem_codes($1::jsonb) AS key`),
    /** $1 code_hash: whether the code exists (after a lost answer: did our completion commit?). */
    codeExists: statement(`SELECT 1 AS found FROM ${codes} WHERE code_hash = $1`),
    /** The failure path of a redemption: was the code consumed (a replay)? */
    consumedCode: statement(`SELECT grant_id, consumed_at FROM ${codes}
      WHERE code_hash = $1 AND consumed_at IS NOT NULL AND expires_at > $2::bigint - ${CODE_TOMBSTONE_SECONDS}`),

    // ---- grants and access tokens --------------------------------------------------------------
    /** $1 grant_id. Version 1's revoked placeholders (no client) are not grants. */
    getGrant: statement(
      `SELECT ${grantCols.list()} FROM ${grants} WHERE grant_id = $1 AND client_id IS NOT NULL`,
    ),
    /** $1 user_id, $2 now */
    listGrantsByUser: statement(`SELECT ${grantCols.list()} FROM ${grants}
      WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2
      ORDER BY created_at DESC, grant_id`),
    /**
     * $1 grant_id, $2 now. Revokes the grant and every token of it; returns a row only when an
     * unrevoked grant was revoked. The tokens are revoked even when the grant already was:
     * idempotent, and a repeated call also marks a token that a racing rotation committed after the
     * first. (Until then the grant's revocation already refuses that token: every read checks it.)
     */
    revokeGrant: statement(`WITH revoked AS (
      UPDATE ${grants} SET revoked_at = $2 WHERE grant_id = $1 AND revoked_at IS NULL AND client_id IS NOT NULL
      RETURNING grant_id
    ), ${revokeTokensOf('$1')}
    SELECT 1 AS revoked FROM revoked`),
    /**
     * The access token's columns, then now: stored only while its grant is active.
     */
    addAccessToken: statement(`INSERT INTO ${access} (${accessCols.list()})
      SELECT ${accessCols.params(1)} FROM ${grants}
      WHERE grant_id = $3::text AND revoked_at IS NULL AND expires_at > $${accessCols.length + 1}::bigint
      RETURNING 1`),
    /**
     * $1 token_hash, $2 now. The revocation check of every protected request: one statement, two
     * primary-key probes (the token, then its grant).
     */
    getAccessToken: statement(`SELECT ${accessCols.list('t')}
      FROM ${access} t JOIN ${grants} g ON g.grant_id = t.grant_id
      WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > $2 AND g.revoked_at IS NULL`),
    /** $1 token_hash: whether the access token exists (after a lost answer: did our redemption commit?). */
    accessTokenExists: statement(`SELECT 1 AS found FROM ${access} WHERE token_hash = $1`),
    /** $1 token_hash, $2 now */
    revokeAccessToken: statement(
      `UPDATE ${access} SET revoked_at = $2 WHERE token_hash = $1 AND revoked_at IS NULL RETURNING 1`,
    ),

    // ---- refresh tokens ------------------------------------------------------------------------
    /** $1 token_hash, $2 now */
    getRefreshToken: statement(activeRefreshToken),
    /**
     * $1 presented token_hash, $2 now, $3 sealed successor, then the successor's refresh token
     * columns, then the access token columns. The conditional update of the presented token is the
     * atomic step (as for codes): of concurrent rotations exactly one matches `rotated_at IS NULL`,
     * and only its statement inserts the successor and the access token.
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
    /**
     * Several rotations in one statement and one commit (`./batch.ts`), by the function of schema 6:
     * $1 jsonb, an array of `{ presented, now, sealed, successor, access }` (the presented token's
     * hash, the time, the sealed successor or null, and the successor's and the access token's rows
     * as objects keyed by column). Each rotation is decided as {@link rotateRefreshToken} decides it;
     * returns the `key` (successor hash) of each rotation that rotated its token. Of several
     * rotations of one token, exactly one rotates and the others find it rotated.
     */
    rotateRefreshTokens: statement(`SELECT key FROM ${s}.rotate_refresh_tokens($1::jsonb) AS key`),

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

    // ---- replay keys: $1 key, $2 expires_at, $3 now -----------------------------------------------
    // One statement decides: a new key is inserted; an existing one is taken over only when it
    // has expired. A concurrent insert of the same key waits for the first to commit, then
    // re-checks the WHERE on the committed row: exactly one caller gets a row back.
    checkAndStoreReplayKey: statement(`INSERT INTO ${replay} AS r (key, expires_at) VALUES ($1, $2)
      ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE r.expires_at <= $3
      RETURNING 1`),

    // ---- housekeeping: $1 now, $2 batch size ---------------------------------------------------
    /** In the order deleteExpired runs them: tokens before the grants they belong to. */
    deleteExpired: [
      deleteBatch(clients, 'expires_at <= $1'),
      deleteBatch(pending, 'expires_at <= $1'),
      // Consumed codes outlive their expiry, so that a late replay still revokes the grant.
      deleteBatch(codes, `expires_at <= $1::bigint - ${CODE_TOMBSTONE_SECONDS}`),
      deleteTokenBatch(access),
      deleteTokenBatch(refresh),
      // Past their absolute expiry, or revoked a while ago (version 1's placeholders included); the
      // foreign keys delete whatever tokens remain.
      deleteBatch(grants, 'expires_at <= $1'),
      deleteBatch(grants, `revoked_at <= $1::bigint - ${CODE_TOMBSTONE_SECONDS}`),
      deleteBatch(keys, 'expires_at <= $1'),
      deleteBatch(replay, 'expires_at <= $1'),
    ],
  } satisfies Record<string, SqlStatement | readonly SqlStatement[]>;
}
