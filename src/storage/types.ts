/**
 * The storage contract. Every adapter (memory, embedded PGlite, PostgreSQL, third-party) implements
 * this interface and passes the conformance kit of `portcullis/testing`.
 *
 * Conventions for every method:
 * - **Time** is epoch **seconds** (integers). Methods that depend on time take `now` from the
 *   server's clock instead of reading their own, so tests and several instances agree.
 * - **Secrets are never stored in the clear.** Codes, tokens, pending-authorization ids and client
 *   secrets reach storage only as base64url SHA-256 digests (`*Hash` fields).
 * - **Null versus throw.** A lookup that finds nothing (or finds something expired) returns `null`.
 *   Methods throw only on infrastructure failure (connection lost, constraint violated by a caller
 *   bug); the server turns such a throw into `server_error` / 500.
 * - **Records are immutable values.** Adapters return copies or frozen objects; callers never mutate
 *   what they get.
 * - **Atomic steps** are marked ATOMIC: under any concurrency, across processes for shared adapters,
 *   the step happens exactly once.
 * @module
 */

/**
 * Client metadata as registered (RFC 7591 §2), with the wire's snake_case names: the effective
 * values, defaults applied, as the registration response echoes them.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage, OAuthError } from 'portcullis';
 *
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   registration: {
 *     // `metadata` is a ClientMetadata: validated, with defaults applied.
 *     policy: ({ metadata }) => {
 *       if (metadata.token_endpoint_auth_method !== 'none') {
 *         throw new OAuthError('invalid_client_metadata', 'only public clients may register');
 *       }
 *     },
 *   },
 * });
 * ```
 * @see RFC 7591 §2, OpenID Connect Dynamic Client Registration §2
 * @group Client Registration (RFC 7591)
 */
export interface ClientMetadata {
  readonly redirect_uris: readonly string[];
  readonly token_endpoint_auth_method: 'none' | 'client_secret_post' | 'client_secret_basic';
  readonly grant_types: readonly ('authorization_code' | 'refresh_token')[];
  readonly response_types: readonly 'code'[];
  readonly application_type: 'native' | 'web';
  readonly client_name?: string;
  readonly client_uri?: string;
  readonly logo_uri?: string;
  readonly policy_uri?: string;
  readonly tos_uri?: string;
  readonly contacts?: readonly string[];
  readonly scope?: string;
  readonly software_id?: string;
  readonly software_version?: string;
  readonly id_token_signed_response_alg?: 'RS256' | 'ES256';
}

/**
 * A registered client.
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * const client = await storage.getClient('x7Gd9...', Math.floor(Date.now() / 1000));
 * console.log(client?.metadata.client_name, client?.origin); // 'My CLI' 'dynamic'
 * ```
 * @see RFC 7591 §3.2.1 (the registered client), RFC 6749 §2.3.1 (secrets)
 * @group Storage
 * @category Records
 */
export interface ClientRecord {
  readonly clientId: string;
  /** Base64url SHA-256 of the client secret; absent for public clients. */
  readonly secretHash?: string;
  readonly metadata: ClientMetadata;
  /**
   * How the client came to exist: dynamic registration, host configuration, or a Client ID
   * Metadata Document fetched from its `https` client_id (such records are never stored).
   */
  readonly origin: 'dynamic' | 'static' | 'metadata_document';
  readonly createdAt: number;
  /**
   * When set, the client is removed after this time unless it has been used: the server clears it
   * once the client completes a token request. Absent means the client never expires.
   */
  readonly expiresAt?: number;
}

/**
 * The authorization request a pending authorization carries, validated (RFC 6749 §4.1.1, OIDC Core §3.1.2.1).
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * declare const idHash: string;
 * const pending = await storage.getPendingAuthorization(idHash, Math.floor(Date.now() / 1000));
 * console.log(pending?.request.scope, pending?.request.resources);
 * ```
 * @see RFC 6749 §4.1.1, RFC 7636 §4.3, RFC 8707 §2
 * @group Storage
 * @category Records
 */
export interface AuthorizationRequest {
  readonly clientId: string;
  /** The redirect URI the code goes to (the one requested, with its loopback port). */
  readonly redirectUri: string;
  /** Whether the client sent `redirect_uri`; then the token request must repeat it (RFC 6749 §4.1.3). */
  readonly redirectUriSent: boolean;
  readonly state?: string;
  readonly scope: readonly string[];
  /** RFC 8707 resource indicators the grant is bound to (at least one: the default resource). */
  readonly resources: readonly string[];
  readonly codeChallenge: string;
  readonly codeChallengeMethod: 'S256';
  readonly nonce?: string;
  readonly prompt: readonly ('none' | 'login' | 'consent' | 'select_account')[];
  /** OIDC `max_age` in seconds. */
  readonly maxAge?: number;
  readonly loginHint?: string;
  readonly uiLocales?: readonly string[];
}

/**
 * An authorization request waiting for login or consent, behind an opaque single-use id. Only the
 * user's decision comes back from the browser; everything else is read from here.
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * declare const idHash: string;
 * // ATOMIC: of two concurrent consent submissions, one gets the record, the other null.
 * const consumed = await storage.consumePendingAuthorization(idHash, Math.floor(Date.now() / 1000));
 * ```
 * @see RFC 6749 §10.12 (CSRF: the form is bound to the session and this request)
 * @group Storage
 * @category Records
 */
export interface PendingAuthorizationRecord {
  /** Base64url SHA-256 of the opaque id. */
  readonly idHash: string;
  readonly request: AuthorizationRequest;
  readonly createdAt: number;
  readonly expiresAt: number;
  /** The user the request is bound to once someone has authenticated. */
  readonly userId?: string;
  /** The host session it is bound to, when the host reports one. */
  readonly sessionId?: string;
  /** Base64url SHA-256 of the CSRF token the consent form carries. */
  readonly csrfHash?: string;
}

/**
 * An authorization code (RFC 6749 §4.1.2) with everything it is bound to.
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * declare const codeHash: string;
 * const result = await storage.consumeAuthorizationCode(codeHash, Math.floor(Date.now() / 1000));
 * if (result?.outcome === 'replayed') await storage.revokeGrant(result.code.grantId, Math.floor(Date.now() / 1000));
 * ```
 * @see RFC 6749 §4.1.2, §10.5; RFC 7636 §4.4
 * @group Storage
 * @category Records
 */
export interface AuthorizationCodeRecord {
  /** Base64url SHA-256 of the code. */
  readonly codeHash: string;
  /** The grant this code will create, allocated up front so a replay can revoke it (RFC 6749 §4.1.2). */
  readonly grantId: string;
  readonly clientId: string;
  readonly userId: string;
  readonly redirectUri: string;
  readonly redirectUriSent: boolean;
  readonly codeChallenge: string;
  readonly codeChallengeMethod: 'S256';
  readonly scope: readonly string[];
  readonly resources: readonly string[];
  readonly nonce?: string;
  /** When the user authenticated (OIDC `auth_time`). */
  readonly authTime: number;
  readonly createdAt: number;
  readonly expiresAt: number;
  /** Set once the code has been redeemed; the record stays as a tombstone until it expires. */
  readonly consumedAt?: number;
}

/**
 * A grant: what one user allowed one client, from which every token descends.
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * const grants = await storage.listGrantsByUser('user-42', Math.floor(Date.now() / 1000));
 * for (const grant of grants) console.log(grant.clientId, grant.scope, new Date(grant.expiresAt * 1000));
 * ```
 * @see RFC 6749 §1.3 (authorization grant), OAuth 2.1 §4.3.3 (grant lifetime)
 * @group Storage
 * @category Records
 */
export interface GrantRecord {
  readonly grantId: string;
  readonly clientId: string;
  readonly userId: string;
  readonly scope: readonly string[];
  readonly resources: readonly string[];
  readonly authTime: number;
  readonly createdAt: number;
  /** Absolute end of the grant: no refresh after this time. */
  readonly expiresAt: number;
  readonly revokedAt?: number;
}

/**
 * An access token issued by this server (a JWT or an opaque string).
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * declare const tokenHash: string; // base64url SHA-256 of the token
 * const token = await storage.getAccessToken(tokenHash, Math.floor(Date.now() / 1000));
 * console.log(token === null ? 'invalid, expired or revoked' : token.audience);
 * ```
 * @see RFC 6749 §1.4, RFC 9068 §2.2
 * @group Storage
 * @category Records
 */
export interface AccessTokenRecord {
  /** Base64url SHA-256 of the whole token string. */
  readonly tokenHash: string;
  /** The JWT `jti`, or a random id for opaque tokens; safe to log. */
  readonly jti: string;
  readonly grantId: string;
  readonly clientId: string;
  readonly userId: string;
  readonly scope: readonly string[];
  /** The resources the token is for (its `aud`). */
  readonly audience: readonly string[];
  readonly issuedAt: number;
  readonly expiresAt: number;
  readonly revokedAt?: number;
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
 * const refresh = await storage.getRefreshToken(tokenHash, Math.floor(Date.now() / 1000));
 * console.log(refresh?.rotatedAt === undefined ? 'usable' : 'already rotated: presenting it again is reuse');
 * ```
 * @see RFC 6749 §1.5, §6; RFC 9700 §4.14.2 (rotation)
 * @group Storage
 * @category Records
 */
export interface RefreshTokenRecord {
  /** Base64url SHA-256 of the token. */
  readonly tokenHash: string;
  readonly grantId: string;
  readonly clientId: string;
  readonly userId: string;
  /** The scope of the grant; a refresh may narrow the access token, never the refresh token. */
  readonly scope: readonly string[];
  readonly resources: readonly string[];
  readonly issuedAt: number;
  /** Idle expiry, never later than the grant's absolute expiry. */
  readonly expiresAt: number;
  /** Set once the token has been exchanged for its successor. */
  readonly rotatedAt?: number;
  /** Hash of the successor, once rotated. */
  readonly successorHash?: string;
  /**
   * The successor sealed with a key derived from this token's own value, kept only when the server
   * runs with a refresh grace period, so an identical retry can be answered with the same successor.
   */
  readonly sealedSuccessor?: string;
  readonly revokedAt?: number;
}

/**
 * A remembered consent: the scopes a user has already allowed a client.
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * const consent = await storage.getConsent('user-42', 'x7Gd9...');
 * console.log(consent?.scope); // ['openid', 'courses:read']
 * ```
 * @see RFC 6749 §10.2, RFC 8252 §8.6
 * @group Storage
 * @category Records
 */
export interface ConsentRecord {
  readonly userId: string;
  readonly clientId: string;
  readonly scope: readonly string[];
  readonly resources: readonly string[];
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * A signing key pair. Stored so that every instance signs with, and publishes, the same keys.
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * const now = Math.floor(Date.now() / 1000);
 * const published = (await storage.listSigningKeys()).filter((k) => k.expiresAt === undefined || k.expiresAt > now);
 * console.log(published.map((k) => `${k.kid} ${k.alg}`));
 * ```
 * @see RFC 7517 (JWK), RFC 7515 §4.1.4 (`kid`)
 * @group Storage
 * @category Records
 */
export interface SigningKeyRecord {
  readonly kid: string;
  readonly alg: string;
  /** The private key as a JSON Web Key, serialised. Protect the storage that holds it. */
  readonly privateJwk: string;
  readonly createdAt: number;
  /** From this time the key may sign. Before it, the key is only published. */
  readonly activatesAt: number;
  /** From this time the key no longer signs but stays published until `expiresAt`. */
  readonly retiresAt?: number;
  /** After this time the key is neither published nor trusted, and may be deleted. */
  readonly expiresAt?: number;
}

/**
 * Outcome of {@link Storage.consumeAuthorizationCode}.
 *
 * @example
 * ```ts
 * import type { ConsumeCodeResult } from 'portcullis';
 *
 * function replayedGrant(result: ConsumeCodeResult | null): string | undefined {
 *   return result?.outcome === 'replayed' ? result.code.grantId : undefined;
 * }
 * ```
 * @see RFC 6749 §4.1.2 (a code is used once; a replay revokes what it issued)
 * @group Storage
 * @category Inputs and Outcomes
 */
export type ConsumeCodeResult =
  /** First redemption: the code was active and is now consumed. */
  | { readonly outcome: 'consumed'; readonly code: AuthorizationCodeRecord }
  /** The code had already been consumed: a replay. The caller revokes `code.grantId`. */
  | { readonly outcome: 'replayed'; readonly code: AuthorizationCodeRecord };

/**
 * What a refresh-token rotation writes.
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * import type { RotationInput } from 'portcullis';
 *
 * declare const oldHash: string;
 * declare const next: RotationInput; // the successor refresh token and the new access token
 * const result = await storage.rotateRefreshToken(oldHash, next, Math.floor(Date.now() / 1000), 0);
 * ```
 * @see OAuth 2.1 §4.3.1, RFC 9700 §4.14.2
 * @group Storage
 * @category Inputs and Outcomes
 */
export interface RotationInput {
  readonly refreshToken: RefreshTokenRecord;
  readonly accessToken: AccessTokenRecord;
  /** See {@link RefreshTokenRecord.sealedSuccessor}. */
  readonly sealedSuccessor?: string;
}

/**
 * Outcome of {@link Storage.rotateRefreshToken}.
 *
 * @example
 * ```ts
 * import type { RotateResult } from 'portcullis';
 *
 * function answer(result: RotateResult): number {
 *   switch (result.outcome) {
 *     case 'rotated':
 *     case 'grace':
 *       return 200;
 *     case 'reused': // the grant is revoked now
 *     case 'invalid':
 *       return 400; // invalid_grant
 *   }
 * }
 * ```
 * @see OAuth 2.1 §4.3.1, RFC 9700 §4.14.2 (reuse detection)
 * @group Storage
 * @category Inputs and Outcomes
 */
export type RotateResult =
  /** The old token was active; it is now rotated and the successor and access token are stored. */
  | { readonly outcome: 'rotated' }
  /**
   * The old token had been rotated within the grace period: nothing was written; the caller may
   * answer with the same successor (`previous.sealedSuccessor`).
   */
  | { readonly outcome: 'grace'; readonly previous: RefreshTokenRecord }
  /** The old token had already been rotated (outside any grace): reuse. The whole grant is now revoked. */
  | { readonly outcome: 'reused'; readonly grantId: string }
  /** Unknown, expired, revoked, or its grant is revoked or expired. Nothing was written. */
  | { readonly outcome: 'invalid' };

/**
 * Everything written when a code is exchanged: the grant and its first tokens.
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * import type { GrantIssuance } from 'portcullis';
 *
 * declare const issuance: GrantIssuance;
 * // ATOMIC: false (nothing written) when the grant id exists, e.g. a concurrent redemption of the code.
 * const created = await storage.createGrant(issuance);
 * ```
 * @see RFC 6749 §4.1.3, §10.5
 * @group Storage
 * @category Inputs and Outcomes
 */
export interface GrantIssuance {
  readonly grant: GrantRecord;
  readonly accessToken: AccessTokenRecord;
  readonly refreshToken?: RefreshTokenRecord;
}

/**
 * The storage interface. See the module documentation for the conventions every method follows,
 * and `runStorageConformance` in `portcullis/testing` for the executable version of this contract.
 * Conventions: time is epoch seconds passed in by the server; secrets arrive only as SHA-256
 * digests (`*Hash`); a lookup that finds nothing (or finds something expired) returns `null`;
 * methods throw only on infrastructure failure (the server answers `500 server_error`); steps
 * marked ATOMIC happen exactly once under any concurrency. docs/storage.md walks through an adapter.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, type Storage } from 'portcullis';
 * import { postgresStorage } from 'portcullis/postgres';
 *
 * const storage: Storage = postgresStorage({ connectionString: process.env.DATABASE_URL ?? '' });
 * const oauth = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage });
 * // Housekeeping by hand, e.g. from a scheduled job with housekeepingIntervalSeconds: 0.
 * await storage.deleteExpired(Math.floor(Date.now() / 1000));
 * ```
 * @see RFC 6749 §4.1.2, §10.5 (single-use codes); RFC 9700 §4.14.2 (refresh rotation); RFC 7009 §2.1
 * @group Storage
 * @category Contract
 */
export interface Storage {
  // ---- clients -------------------------------------------------------------------------------

  /** Stores a new client. Throws if `clientId` already exists. */
  createClient(client: ClientRecord): Promise<void>;
  /** The client, or `null` when unknown or when `expiresAt <= now`. */
  getClient(clientId: string, now: number): Promise<ClientRecord | null>;
  /** Replaces a client record. Returns false when the client does not exist. */
  updateClient(client: ClientRecord): Promise<boolean>;
  /** Deletes a client, its consents and (by revocation) its grants. Returns false when unknown. */
  deleteClient(clientId: string, now: number): Promise<boolean>;

  // ---- pending authorizations ----------------------------------------------------------------

  /** Stores a pending authorization. */
  createPendingAuthorization(pending: PendingAuthorizationRecord): Promise<void>;
  /** The pending authorization, or `null` when unknown, consumed, or `expiresAt <= now`. */
  getPendingAuthorization(idHash: string, now: number): Promise<PendingAuthorizationRecord | null>;
  /**
   * Binds a pending authorization to a user, a session and a CSRF token. Returns false when it is
   * unknown, expired, or already bound to a *different* user (it never rebinds to another user).
   */
  bindPendingAuthorization(
    idHash: string,
    binding: { readonly userId: string; readonly sessionId?: string; readonly csrfHash: string },
    now: number,
  ): Promise<boolean>;
  /**
   * ATOMIC. Removes and returns the pending authorization. Of any number of concurrent callers,
   * exactly one receives the record; the others, and every later caller, receive `null`.
   */
  consumePendingAuthorization(idHash: string, now: number): Promise<PendingAuthorizationRecord | null>;

  // ---- authorization codes -------------------------------------------------------------------

  /** Stores a new code. */
  createAuthorizationCode(code: AuthorizationCodeRecord): Promise<void>;
  /** The code (consumed or not), or `null` when unknown or `expiresAt <= now`. */
  getAuthorizationCode(codeHash: string, now: number): Promise<AuthorizationCodeRecord | null>;
  /**
   * ATOMIC. Marks the code consumed. Of any number of concurrent callers exactly one gets
   * `consumed`; every other caller gets `replayed`. Returns `null` when the code is unknown or
   * expired. A consumed code is kept (as a tombstone) at least until its `expiresAt`.
   */
  consumeAuthorizationCode(codeHash: string, now: number): Promise<ConsumeCodeResult | null>;

  // ---- grants and tokens ---------------------------------------------------------------------

  /**
   * ATOMIC. Stores a grant with its first access token and optional refresh token, all or nothing.
   * Returns false, writing nothing, when a grant with this id already exists in any state, including
   * the revoked placeholder {@link Storage.revokeGrant} leaves for an id not yet created.
   */
  createGrant(issuance: GrantIssuance): Promise<boolean>;
  /** The grant, or `null` when unknown. Revoked and expired grants are returned (check the fields). */
  getGrant(grantId: string): Promise<GrantRecord | null>;
  /** Active grants (not revoked, `expiresAt > now`) of a user, newest first. */
  listGrantsByUser(userId: string, now: number): Promise<GrantRecord[]>;
  /**
   * Revokes a grant and with it every access and refresh token it issued. Idempotent. When no grant
   * with this id exists yet, records a revoked placeholder so that a later {@link Storage.createGrant}
   * with this id fails (a code replay can race the first redemption). Returns false when the grant
   * was already revoked or did not exist.
   */
  revokeGrant(grantId: string, now: number): Promise<boolean>;

  /** Stores an access token for an existing grant. */
  createAccessToken(token: AccessTokenRecord): Promise<void>;
  /**
   * The access token, or `null` when unknown, revoked, `expiresAt <= now`, or its grant is revoked.
   * This is the revocation check of every protected request: adapters make it one indexed read.
   */
  getAccessToken(tokenHash: string, now: number): Promise<AccessTokenRecord | null>;
  /** Revokes one access token. Idempotent. Returns false when unknown or already revoked. */
  revokeAccessToken(tokenHash: string, now: number): Promise<boolean>;

  /**
   * The refresh token, or `null` when unknown, revoked, `expiresAt <= now`, or its grant is revoked
   * or expired. A rotated token is returned (with `rotatedAt` set) so callers can tell reuse apart.
   */
  getRefreshToken(tokenHash: string, now: number): Promise<RefreshTokenRecord | null>;
  /**
   * ATOMIC. Rotates the refresh token `oldHash`, all or nothing:
   * - active → marks it rotated (successor = `next.refreshToken`), stores the successor and the new
   *   access token: `rotated`;
   * - rotated less than `graceSeconds` ago (only when `graceSeconds > 0`) → writes nothing: `grace`;
   * - rotated otherwise → revokes the whole grant: `reused`;
   * - unknown, expired, revoked, grant revoked → writes nothing: `invalid`.
   * Of concurrent callers presenting the same active token, exactly one gets `rotated`.
   */
  rotateRefreshToken(
    oldHash: string,
    next: RotationInput,
    now: number,
    graceSeconds: number,
  ): Promise<RotateResult>;

  // ---- consents ------------------------------------------------------------------------------

  /** The remembered consent of a user for a client, or `null`. */
  getConsent(userId: string, clientId: string): Promise<ConsentRecord | null>;
  /** Creates or replaces the consent of `(userId, clientId)`. */
  saveConsent(consent: ConsentRecord): Promise<void>;
  /** Forgets a consent. Returns false when there was none. */
  deleteConsent(userId: string, clientId: string): Promise<boolean>;

  // ---- signing keys --------------------------------------------------------------------------

  /** Every stored signing key, expired ones included, in creation order. */
  listSigningKeys(): Promise<SigningKeyRecord[]>;
  /** Stores a new key. Throws if `kid` exists. */
  addSigningKey(key: SigningKeyRecord): Promise<void>;
  /** Replaces a key record (to set `retiresAt` / `expiresAt`). Returns false when unknown. */
  updateSigningKey(key: SigningKeyRecord): Promise<boolean>;

  // ---- housekeeping --------------------------------------------------------------------------

  /**
   * Deletes what has expired by `now`: pending authorizations, codes, tokens, grants past their
   * absolute expiry, unused clients, keys past `expiresAt`. Must not block concurrent requests for
   * long (adapters delete in batches). Returns the number of records removed.
   */
  deleteExpired(now: number): Promise<number>;
  /** Releases connections and timers. */
  close(): Promise<void>;
}
