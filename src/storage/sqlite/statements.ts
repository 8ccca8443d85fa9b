/**
 * Every statement the SQLite storage runs. Each is prepared once per connection and reused (the
 * database's statement cache is keyed by these texts). Parameters are positional (`?`), in the order
 * each comment gives.
 *
 * Some parameters are written `+?`: the same value (a unary plus changes nothing, and the indexes
 * are used as before), but one the query planner cannot look at. Once the database has statistics
 * (`ANALYZE`, or the `PRAGMA optimize` SQLite advises long-running applications to run), SQLite
 * prepares a statement again on every new binding of a parameter whose value could change its plan
 * (https://sqlite.org/c3ref/prepare.html, "SQLITE_ENABLE_STAT4"); for the joins below, which read a
 * token with its grant on every protected request and refresh, that tripled their cost. Their plan
 * is a primary-key probe whatever the value, so they opt out. Single-table primary-key lookups never
 * re-plan and keep plain `?`, as do the cleanups, whose range scans may use the statistics.
 * @module
 */
import { CODE_TOMBSTONE_SECONDS } from '../types.js';
import {
  ACCESS_COLUMNS,
  ACCESS_COLUMNS_OF_T,
  ACCESS_PARAM_COUNT,
  CLIENT_COLUMNS,
  CODE_COLUMNS,
  CONSENT_COLUMNS,
  GRANT_COLUMNS,
  KEY_COLUMNS,
  PENDING_COLUMNS,
  placeholders,
  REFRESH_COLUMNS,
  REFRESH_COLUMNS_OF_T,
  REFRESH_PARAM_COUNT,
} from './rows.js';
import { TABLES } from './schema.js';

const { clients, pending, codes, grants, access, refresh, consents, keys, replay } = TABLES;

/** Revokes the active tokens of the grants `grantIds` (a subquery) names; first parameter: now. */
const revokeTokensOf = (table: string, grantIds: string) =>
  `UPDATE ${table} SET revoked_at = ? WHERE grant_id IN (${grantIds}) AND revoked_at IS NULL`;

export const SQL = {
  // ---- clients ---------------------------------------------------------------------------------
  createClient: `INSERT INTO ${clients} (${CLIENT_COLUMNS}) VALUES (${placeholders(6)})`,
  /** client_id, now */
  getClient: `SELECT ${CLIENT_COLUMNS} FROM ${clients}
    WHERE client_id = ? AND (expires_at IS NULL OR expires_at > ?)`,
  clearClientExpiry: `UPDATE ${clients} SET expires_at = NULL WHERE client_id = ?`,
  deleteClient: `DELETE FROM ${clients} WHERE client_id = ?`,
  deleteConsentsOfClient: `DELETE FROM ${consents} WHERE client_id = ?`,
  /** now, client_id */
  revokeAccessTokensOfClient: revokeTokensOf(
    access,
    `SELECT grant_id FROM ${grants} WHERE client_id = ? AND revoked_at IS NULL`,
  ),
  /** now, client_id */
  revokeRefreshTokensOfClient: revokeTokensOf(
    refresh,
    `SELECT grant_id FROM ${grants} WHERE client_id = ? AND revoked_at IS NULL`,
  ),
  /** now, client_id */
  revokeGrantsOfClient: `UPDATE ${grants} SET revoked_at = ? WHERE client_id = ? AND revoked_at IS NULL`,

  // ---- pending authorizations ------------------------------------------------------------------
  createPending: `INSERT INTO ${pending} (${PENDING_COLUMNS}) VALUES (${placeholders(7)})`,
  /** id_hash, now */
  getPending: `SELECT ${PENDING_COLUMNS} FROM ${pending} WHERE id_hash = ? AND expires_at > ?`,
  /** user_id, session_id (NULL keeps the current one), csrf_hash, id_hash, now, user_id */
  bindPending: `UPDATE ${pending}
    SET user_id = ?, session_id = coalesce(?, session_id), csrf_hash = ?
    WHERE id_hash = ? AND expires_at > ? AND (user_id IS NULL OR user_id = ?)`,
  /** id_hash. One statement: of concurrent callers only one gets the row. */
  consumePending: `DELETE FROM ${pending} WHERE id_hash = ? RETURNING ${PENDING_COLUMNS}`,
  /** id_hash, now: the commit point of completing a pending authorization (an expired one stays). */
  completePending: `DELETE FROM ${pending} WHERE id_hash = ? AND expires_at > ?`,
  /**
   * id_hash, now, user_id, csrf_hash, session_id (NULL matches only a record without one): the
   * same, only while the record is bound to that user, consent form and session.
   */
  completeBoundPending: `DELETE FROM ${pending} WHERE id_hash = ? AND expires_at > ?
    AND user_id = ? AND csrf_hash = ? AND (session_id IS NULL OR session_id = ?)`,

  // ---- authorization codes ---------------------------------------------------------------------
  createCode: `INSERT INTO ${codes} (${CODE_COLUMNS}) VALUES (${placeholders(15)})`,
  /** code_hash, now: an active code, or a consumed one until its tombstone time. */
  getCode: `SELECT ${CODE_COLUMNS} FROM ${codes}
    WHERE code_hash = ?
      AND expires_at > ? - CASE WHEN consumed_at IS NULL THEN 0 ELSE ${CODE_TOMBSTONE_SECONDS} END`,
  /** now, code_hash, grant_id, now: the commit point of a redemption. */
  consumeCode: `UPDATE ${codes} SET consumed_at = ?
    WHERE code_hash = ? AND grant_id = ? AND consumed_at IS NULL AND expires_at > ?`,
  /** code_hash: why a redemption matched nothing. */
  codeState: `SELECT grant_id, consumed_at, expires_at FROM ${codes} WHERE code_hash = ?`,

  // ---- grants ----------------------------------------------------------------------------------
  createGrant: `INSERT INTO ${grants} (${GRANT_COLUMNS}) VALUES (${placeholders(9)})`,
  getGrant: `SELECT ${GRANT_COLUMNS} FROM ${grants} WHERE grant_id = ?`,
  /** user_id, now */
  listGrantsByUser: `SELECT ${GRANT_COLUMNS} FROM ${grants}
    WHERE user_id = +? AND revoked_at IS NULL AND expires_at > +?
    ORDER BY created_at DESC, grant_id`,
  /** now, grant_id */
  revokeGrant: `UPDATE ${grants} SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL`,
  /** now, grant_id */
  revokeAccessTokensOfGrant: `UPDATE ${access} SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL`,
  /** now, grant_id */
  revokeRefreshTokensOfGrant: `UPDATE ${refresh} SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL`,

  // ---- access tokens ---------------------------------------------------------------------------
  createAccessToken: `INSERT INTO ${access} (${ACCESS_COLUMNS}) VALUES (${placeholders(ACCESS_PARAM_COUNT)})`,
  /** the token's columns, then grant_id, now: stored only while its grant is active. */
  addAccessToken: `INSERT INTO ${access} (${ACCESS_COLUMNS})
    SELECT ${placeholders(ACCESS_PARAM_COUNT)}
    WHERE EXISTS (SELECT 1 FROM ${grants} WHERE grant_id = ? AND revoked_at IS NULL AND expires_at > ?)`,
  /**
   * token_hash, now. The revocation check of every protected request: one statement, two
   * primary-key probes (the token, then its grant).
   */
  getAccessToken: `SELECT ${ACCESS_COLUMNS_OF_T}
    FROM ${access} t JOIN ${grants} g ON g.grant_id = t.grant_id
    WHERE t.token_hash = +? AND t.revoked_at IS NULL AND t.expires_at > +? AND g.revoked_at IS NULL`,
  /** now, token_hash */
  revokeAccessToken: `UPDATE ${access} SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL`,

  // ---- refresh tokens --------------------------------------------------------------------------
  createRefreshToken: `INSERT INTO ${refresh} (${REFRESH_COLUMNS}) VALUES (${placeholders(REFRESH_PARAM_COUNT)})`,
  /** token_hash, now, now: the token (rotated or not) with its grant's auth_time, while both are active. */
  getRefreshToken: `SELECT ${REFRESH_COLUMNS_OF_T}, g.auth_time
    FROM ${refresh} t JOIN ${grants} g ON g.grant_id = t.grant_id
    WHERE t.token_hash = +? AND t.revoked_at IS NULL AND t.expires_at > +?
      AND g.revoked_at IS NULL AND g.expires_at > +?`,
  /**
   * now, successor_hash, sealed_successor, token_hash, now, now: the commit point of a rotation.
   * Matches only an active, unrotated token of an active grant.
   */
  rotateRefreshToken: `UPDATE ${refresh} SET rotated_at = ?, successor_hash = ?, sealed_successor = ?
    WHERE token_hash = ? AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > ?
      AND EXISTS (SELECT 1 FROM ${grants} g
        WHERE g.grant_id = ${refresh}.grant_id AND g.revoked_at IS NULL AND g.expires_at > ?)`,

  // ---- consents --------------------------------------------------------------------------------
  getConsent: `SELECT ${CONSENT_COLUMNS} FROM ${consents} WHERE user_id = ? AND client_id = ?`,
  saveConsent: `INSERT INTO ${consents} (${CONSENT_COLUMNS}) VALUES (${placeholders(6)})
    ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope, resources = excluded.resources,
      created_at = excluded.created_at, updated_at = excluded.updated_at`,
  deleteConsent: `DELETE FROM ${consents} WHERE user_id = ? AND client_id = ?`,

  // ---- signing keys ----------------------------------------------------------------------------
  listKeys: `SELECT ${KEY_COLUMNS} FROM ${keys} ORDER BY created_at, rowid`,
  addKey: `INSERT INTO ${keys} (${KEY_COLUMNS}) VALUES (${placeholders(7)})`,
  /** every column but kid, then kid */
  updateKey: `UPDATE ${keys} SET alg = ?, private_jwk = ?, created_at = ?, activates_at = ?,
    retires_at = ?, expires_at = ? WHERE kid = ?`,

  // ---- replay keys -----------------------------------------------------------------------------
  /** key, expires_at, now: a row back when the key was new or had expired (one statement, one write lock). */
  checkAndStoreReplayKey: `INSERT INTO ${replay} (key, expires_at) VALUES (?, ?)
    ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE ${replay}.expires_at <= ?
    RETURNING key`,
} as const;

/**
 * One batch of a cleanup: deletes at most `limit` rows matching `condition` (in terms of one `?`,
 * now), as one short write transaction of its own.
 */
const deleteBatch = (table: string, condition: string) =>
  `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${condition} LIMIT ?)`;

/**
 * One batch of expired tokens of `table` (rotated refresh tokens included: kept until their own
 * expiry, so that their reuse is still detected), reporting the grants they belonged to.
 */
const deleteTokenBatch = (table: string) =>
  `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE expires_at <= ? LIMIT ?)
    RETURNING grant_id`;

/**
 * Parameters: a JSON array of grant ids, now, now. Deletes those of the grants left without any
 * token expiring after now: nothing can use them any more (no refresh token to refresh with, no
 * access token to revoke). One probe of each token table's (grant_id, expires_at) index per grant;
 * the foreign keys delete the grant's remaining, expired tokens.
 */
const deleteEmptiedGrants = `DELETE FROM ${grants} WHERE grant_id IN (SELECT value FROM json_each(?))
  AND NOT EXISTS (SELECT 1 FROM ${access} a WHERE a.grant_id = ${grants}.grant_id AND a.expires_at > ?)
  AND NOT EXISTS (SELECT 1 FROM ${refresh} r WHERE r.grant_id = ${grants}.grant_id AND r.expires_at > ?)`;

/**
 * One cleanup of `deleteExpired`: a batch statement (parameters: now, batch size), and for the
 * token tables the statement that deletes the grants the batch left without an unexpired token.
 */
export interface Cleanup {
  readonly batch: string;
  readonly emptiedGrants?: string;
}

/** The cleanups of `deleteExpired`, in the order they run (tokens before the grants they belong to). */
export const DELETE_EXPIRED: readonly Cleanup[] = [
  { batch: deleteBatch(clients, 'expires_at IS NOT NULL AND expires_at <= ?') },
  { batch: deleteBatch(pending, 'expires_at <= ?') },
  // Consumed codes outlive their expiry, so that a late replay still revokes the grant.
  { batch: deleteBatch(codes, `expires_at <= ? - ${CODE_TOMBSTONE_SECONDS}`) },
  { batch: deleteTokenBatch(access), emptiedGrants: deleteEmptiedGrants },
  { batch: deleteTokenBatch(refresh), emptiedGrants: deleteEmptiedGrants },
  // Past their absolute expiry, or revoked a while ago; the foreign keys delete their remaining tokens.
  { batch: deleteBatch(grants, 'expires_at <= ?') },
  { batch: deleteBatch(grants, `revoked_at <= ? - ${CODE_TOMBSTONE_SECONDS}`) },
  { batch: deleteBatch(keys, 'expires_at <= ?') },
  { batch: deleteBatch(replay, 'expires_at <= ?') },
];
