/**
 * The grants aggregate: what one user allowed one client, with every access and refresh token
 * that descends from it. Revoking a grant revokes them all, and stays final.
 * @module
 */
import type { CodeStore } from './codes.js';

/**
 * A grant: what one user allowed one client, from which every token descends.
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * const grants = await storage.grants.listByUser('user-42', Math.floor(Date.now() / 1000));
 * for (const grant of grants) console.log(grant.clientId, grant.scope, new Date(grant.expiresAt * 1000));
 * ```
 * @see RFC 6749 §1.3 (authorization grant), OAuth 2.1 §4.3.3 (grant lifetime)
 * @group Storage
 * @category Records
 */
export interface GrantRecord {
  /** Allocated with the authorization code that creates the grant. */
  readonly grantId: string;
  readonly clientId: string;
  readonly userId: string;
  readonly scope: readonly string[];
  readonly resources: readonly string[];
  /** When the user authenticated (OIDC `auth_time`), epoch seconds. */
  readonly authTime: number;
  /** Epoch seconds. */
  readonly createdAt: number;
  /** Absolute end of the grant (epoch seconds): no refresh after this time. */
  readonly expiresAt: number;
  /** Set once the grant is revoked (epoch seconds); revocation is final. */
  readonly revokedAt?: number;
}

/**
 * An access token issued by this server (a JWT or an opaque string).
 *
 * @example
 * ```ts
 * import { type Storage, tokenKey } from 'portcullis';
 *
 * declare const storage: Storage;
 * declare const presented: string; // the access token, as a client sent it
 * const token = await storage.grants.getAccessToken(await tokenKey(presented), Math.floor(Date.now() / 1000));
 * console.log(token === null ? 'invalid, expired or revoked' : token.audience);
 * ```
 * @see RFC 6749 §1.4, RFC 9068 §2.2
 * @group Storage
 * @category Records
 */
export interface AccessTokenRecord {
  /** The token's key ({@link tokenKey}): the time it was made, then the base64url SHA-256 of the whole token. */
  readonly tokenHash: string;
  /** The JWT `jti`, or a random id for opaque tokens; safe to log. */
  readonly jti: string;
  readonly grantId: string;
  readonly clientId: string;
  readonly userId: string;
  readonly scope: readonly string[];
  /** The resources the token is for (its `aud`). */
  readonly audience: readonly string[];
  /** Epoch seconds. */
  readonly issuedAt: number;
  /** Epoch seconds. */
  readonly expiresAt: number;
  /** Epoch seconds. */
  readonly revokedAt?: number;
  /**
   * The JWK SHA-256 thumbprint (RFC 7638) of the DPoP key the token is bound to (its `cnf.jkt`),
   * absent for a bearer token. Storage keeps it as given; the guard and introspection read it.
   * @see RFC 9449 §6
   */
  readonly dpopJkt?: string;
}

/**
 * A refresh token (always opaque).
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * declare const tokenHash: string;
 * const refresh = await storage.grants.getRefreshToken(tokenHash, Math.floor(Date.now() / 1000));
 * console.log(refresh?.rotatedAt === undefined ? 'usable' : 'already rotated');
 * ```
 * @see RFC 6749 §1.5, §6; RFC 9700 §4.14.2 (rotation)
 * @group Storage
 * @category Records
 */
export interface RefreshTokenRecord {
  /** The token's key ({@link tokenKey}): the time it was made, then the base64url SHA-256 of the token. */
  readonly tokenHash: string;
  readonly grantId: string;
  readonly clientId: string;
  readonly userId: string;
  /** The scope of the grant; a refresh may narrow the access token, never the refresh token. */
  readonly scope: readonly string[];
  readonly resources: readonly string[];
  /**
   * The grant's `authTime` (OIDC `auth_time`), carried so that the refresh grant can mint an ID
   * token before its commit point without reading the grant. An adapter may store it on the token
   * or read it from the grant with the token.
   */
  readonly authTime: number;
  /** Epoch seconds. */
  readonly issuedAt: number;
  /** Idle expiry (epoch seconds), never later than the grant's absolute expiry. */
  readonly expiresAt: number;
  /** Set once the token has been exchanged for its successor (epoch seconds). */
  readonly rotatedAt?: number;
  /** The successor's key, once rotated. */
  readonly successorHash?: string;
  /**
   * The successor sealed with a key derived from this token's own value (so storage cannot read
   * it), kept so that a retry of the same refresh can be answered with the same successor.
   */
  readonly sealedSuccessor?: string;
  /** Epoch seconds. */
  readonly revokedAt?: number;
  /**
   * The JWK SHA-256 thumbprint (RFC 7638) of the DPoP key a public client's refresh token is
   * bound to: the refresh grant accepts it only with a proof by that key, and its successor
   * carries the same value. Absent for an unbound token. Storage keeps it as given.
   * @see RFC 9449 §5
   */
  readonly dpopJkt?: string;
}

/**
 * What a refresh-token rotation writes, all minted before the call: the successor refresh token
 * and the new access token.
 *
 * @example
 * ```ts
 * import type { RefreshRotation, Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * declare const rotation: RefreshRotation;
 * const result = await storage.grants.rotateRefreshToken(rotation);
 * if (result.outcome === 'already_rotated') console.log(`rotated at ${result.rotatedAt}`);
 * ```
 * @see OAuth 2.1 §4.3.1, RFC 9700 §4.14.2
 * @group Storage
 * @category Inputs and Outcomes
 */
export interface RefreshRotation {
  /** Hash of the refresh token presented. */
  readonly tokenHash: string;
  /** The successor; same grant, client, user, scope and resources as the presented token. */
  readonly successor: RefreshTokenRecord;
  /** The access token issued with the successor. */
  readonly accessToken: AccessTokenRecord;
  /** See {@link RefreshTokenRecord.sealedSuccessor}; stored on the presented token. */
  readonly sealedSuccessor?: string;
  /** Epoch seconds: becomes the presented token's `rotatedAt`. */
  readonly now: number;
}

/**
 * Outcome of {@link GrantStore.rotateRefreshToken}: facts, not decisions. Whether an
 * `already_rotated` token is a retry (answered with the same successor) or reuse (the grant is
 * revoked) is the refresh grant's policy.
 *
 * @example
 * ```ts
 * import type { RotateResult } from 'portcullis';
 *
 * function describe(result: RotateResult): string {
 *   switch (result.outcome) {
 *     case 'rotated':
 *       return 'the successor and the access token are stored';
 *     case 'already_rotated':
 *       return `rotated ${result.rotatedAt}: a retry or a reuse, for the grant to decide`;
 *     case 'invalid':
 *       return 'unknown, expired or revoked: nothing written';
 *   }
 * }
 * ```
 * @see OAuth 2.1 §4.3.1, RFC 9700 §4.14.2 (reuse detection)
 * @group Storage
 * @category Inputs and Outcomes
 */
export type RotateResult =
  /** The presented token was active: it is now rotated, and the successor and access token are stored. */
  | { readonly outcome: 'rotated' }
  /** The presented token had already been rotated (by this call's rival or earlier). Nothing was written. */
  | {
      readonly outcome: 'already_rotated';
      readonly grantId: string;
      readonly rotatedAt: number;
      readonly successorHash: string;
      /** Present when the rotation that won stored one. */
      readonly sealedSuccessor?: string;
    }
  /** Unknown, expired, revoked, or its grant is revoked or past its expiry. Nothing was written. */
  | { readonly outcome: 'invalid' };

/**
 * Grants with their access and refresh tokens. One atomic step:
 * {@link GrantStore.rotateRefreshToken}; grants themselves are created by
 * {@link CodeStore.redeem}.
 *
 * Revocation is final and wins every race: every token read ({@link GrantStore.getAccessToken},
 * {@link GrantStore.getRefreshToken}) checks the token's grant, so a token written by a rotation
 * that raced the grant's revocation (on another instance) still reads as revoked.
 *
 * @example
 * ```ts
 * import type { GrantStore } from 'portcullis';
 *
 * declare const grants: GrantStore;
 * const now = Math.floor(Date.now() / 1000);
 * for (const grant of await grants.listByUser('user-42', now)) await grants.revoke(grant.grantId, now);
 * ```
 * @see RFC 6749 §10.4, §10.5; RFC 7009 §2.1; RFC 9700 §4.14.2
 * @group Storage
 * @category Contract
 */
export interface GrantStore {
  /** The grant, or `null` when unknown. Revoked and expired grants are returned (check the fields). */
  get(grantId: string): Promise<GrantRecord | null>;
  /** The active grants (not revoked, `expiresAt > now`) of a user, newest first (ties: `grantId` ascending). */
  listByUser(userId: string, now: number): Promise<GrantRecord[]>;
  /**
   * Revokes a grant and every access and refresh token it issued. Idempotent and final. Returns
   * false when the grant is unknown or was already revoked.
   */
  revoke(grantId: string, now: number): Promise<boolean>;

  /**
   * The access token, or `null` when unknown, revoked, `expiresAt <= now`, or its grant is revoked
   * (or gone). This is the revocation check of every protected request: make it one indexed read.
   */
  getAccessToken(tokenHash: string, now: number): Promise<AccessTokenRecord | null>;
  /**
   * Stores one more access token of an active grant (a refresh retried within the grace window).
   * Returns false, writing nothing, when the grant is unknown, revoked or past its `expiresAt`.
   */
  addAccessToken(token: AccessTokenRecord, now: number): Promise<boolean>;
  /** Revokes one access token. Idempotent. Returns false when unknown or already revoked. */
  revokeAccessToken(tokenHash: string, now: number): Promise<boolean>;

  /**
   * The refresh token, rotated or not, or `null` when unknown, revoked, `expiresAt <= now`, or its
   * grant is revoked or past its `expiresAt`. A rotated token is returned (`rotatedAt` set) so
   * that the grant can tell a retry or a reuse from an unknown token.
   */
  getRefreshToken(tokenHash: string, now: number): Promise<RefreshTokenRecord | null>;
  /**
   * ATOMIC. Rotates the refresh token `rotation.tokenHash`, all or nothing:
   * - active (not rotated, not revoked, not expired, grant active) → marks it rotated at `now`
   *   with the successor's hash and the sealed successor, and stores the successor and the access
   *   token: `rotated`;
   * - already rotated (grant active) → writes nothing: `already_rotated`, with the facts of the
   *   rotation that won;
   * - otherwise → writes nothing: `invalid`.
   *
   * Of any number of concurrent callers presenting the same active token (across instances for a
   * shared adapter), exactly one gets `rotated` and every other one `already_rotated`. It never
   * revokes anything: reuse is the grant's decision ({@link GrantStore.revoke}).
   */
  rotateRefreshToken(rotation: RefreshRotation): Promise<RotateResult>;
}
