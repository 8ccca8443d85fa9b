/**
 * Access-token verifiers: how a resource server (or the authorization server's own endpoints)
 * decides that a token is valid. Three ways, by deployment:
 * - {@link storageVerifier}: the token's record in shared storage (same process or another process
 *   on the same database). Exact and immediate revocation.
 * - {@link introspectionVerifier}: RFC 7662 introspection over HTTP. Exact and immediate revocation,
 *   one HTTP call per request (unless a cache is configured).
 * - {@link jwksVerifier}: RFC 9068 JWT checks against the JWKS alone. No storage, no call, but a
 *   revoked token stays valid until it expires (the access-token lifetime bounds it).
 * @module
 */
import { createLocalJWKSet, createRemoteJWKSet, type JSONWebKeySet, type JWTPayload, jwtVerify } from 'jose';
import type { Clock } from '../core/context.js';
import type { Storage } from '../storage/types.js';
import { tokenKey } from '../tokens/token-key.js';

/**
 * What a verified access token says, whichever verifier read it.
 *
 * @example
 * ```ts
 * import type { VerifiedAccessToken } from 'portcullis';
 *
 * function canWrite(token: VerifiedAccessToken): boolean {
 *   return token.scope.includes('courses:write') && token.expiresAt > Date.now() / 1000;
 * }
 * ```
 * @see RFC 9068 §2.2 (the claims), RFC 7662 §2.2 (the same facts from introspection)
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export interface VerifiedAccessToken {
  /** The user (`sub`). */
  readonly subject: string;
  /** The client the token was issued to (`client_id`). */
  readonly clientId: string;
  /** The granted scopes. */
  readonly scope: readonly string[];
  /** The resources the token is for (`aud`). */
  readonly audience: readonly string[];
  /** Epoch seconds. */
  readonly expiresAt: number;
  /** Epoch seconds. */
  readonly issuedAt: number;
  /** The token's unique id (`jti`): safe to log, unlike the token. */
  readonly jti: string;
  /**
   * The thumbprint of the DPoP key the token is bound to (`cnf.jkt`, RFC 9449 §6), absent for a
   * bearer token. A guard accepts a bound token only with the `DPoP` scheme and a proof by that key;
   * a custom verifier MUST report it, or bound tokens would pass as bearer tokens.
   */
  readonly dpopJkt?: string;
}

/**
 * Decides whether an access token is valid. `null` means invalid, expired, revoked or unknown.
 * Three ship: {@link storageVerifier}, {@link introspectionVerifier} and {@link jwksVerifier}.
 *
 * @example
 * ```ts
 * import { type AccessTokenVerifier, createResourceGuard, jwksVerifier, storageVerifier, memoryStorage } from 'portcullis';
 *
 * // Shared storage first; signatures alone for tokens the storage does not know (another region).
 * const local = storageVerifier({ storage: memoryStorage() });
 * const remote = jwksVerifier({ issuer: 'https://auth.example.com', jwksUri: 'https://auth.example.com/.well-known/jwks.json' });
 * const verifier: AccessTokenVerifier = {
 *   verify: async (token) => (await local.verify(token)) ?? remote.verify(token),
 * };
 * createResourceGuard({ resource: 'https://api.example.com', verifier });
 * ```
 * @see RFC 6750 §3.1 (`invalid_token`)
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export interface AccessTokenVerifier {
  /** The token's claims when it is valid; `null` when it is invalid, expired, revoked or unknown. */
  verify(token: string): Promise<VerifiedAccessToken | null>;
}

/**
 * Options of {@link storageVerifier}.
 *
 * @example
 * ```ts
 * import { memoryStorage, storageVerifier, type StorageVerifierOptions } from 'portcullis';
 *
 * const options: StorageVerifierOptions = { storage: memoryStorage(), clock: () => Date.now() };
 * const verifier = storageVerifier(options);
 * ```
 * @see RFC 6750 §3.1
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export interface StorageVerifierOptions {
  /** The storage the authorization server writes to. */
  readonly storage: Storage;
  /** Epoch milliseconds. Default `Date.now`. */
  readonly clock?: Clock;
}

/**
 * Verifies tokens by their record in shared storage: one indexed read per request, which is also
 * the revocation check. Works in the authorization server's process and in any other process
 * connected to the same storage.
 *
 * @param options - the storage (and a clock for tests)
 * @returns a verifier: `null` for unknown, expired or revoked tokens and tokens of a revoked grant;
 * it throws only when the storage does
 * @see RFC 6750 §3.1 (`invalid_token`), RFC 7009 §2 (revocation takes effect at once)
 * @example
 * ```ts
 * import { createResourceGuard, memoryStorage, storageVerifier } from 'portcullis';
 *
 * const storage = memoryStorage(); // in production: the same PostgreSQL database as the authorization server
 * const guard = createResourceGuard({
 *   resource: 'https://api.example.com',
 *   verifier: storageVerifier({ storage }),
 * });
 * ```
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export function storageVerifier(options: StorageVerifierOptions): AccessTokenVerifier {
  const { storage } = options;
  const clock = options.clock ?? Date.now;
  return {
    async verify(token) {
      if (token.length > 8192) return null;
      const record = await storage.grants.getAccessToken(await tokenKey(token), Math.floor(clock() / 1000));
      if (record === null) return null;
      return {
        subject: record.userId,
        clientId: record.clientId,
        scope: record.scope,
        audience: record.audience,
        expiresAt: record.expiresAt,
        issuedAt: record.issuedAt,
        jti: record.jti,
        ...(record.dpopJkt === undefined ? {} : { dpopJkt: record.dpopJkt }),
      };
    },
  };
}

/**
 * Options of {@link jwksVerifier}.
 *
 * @example
 * ```ts
 * import { jwksVerifier, type JwksVerifierOptions } from 'portcullis';
 *
 * const options: JwksVerifierOptions = {
 *   issuer: 'https://auth.example.com',
 *   jwksUri: 'https://auth.example.com/.well-known/jwks.json',
 *   algorithms: ['ES256'], // the server's default for access tokens
 * };
 * const verifier = jwksVerifier(options);
 * ```
 * @see RFC 9068 §4, RFC 7517 §5 (JWK Set)
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export interface JwksVerifierOptions {
  /** The expected `iss`. */
  readonly issuer: string;
  /** Where to fetch the JWKS (the server's `jwks_uri`), or ... */
  readonly jwksUri?: string;
  /** ... the key set itself. */
  readonly jwks?: JSONWebKeySet;
  /** Accepted algorithms. Default `['ES256', 'RS256']`. */
  readonly algorithms?: readonly string[];
  /** How many verified tokens to remember (until they expire). Default 10 000; 0 disables the cache. */
  readonly cacheSize?: number;
  /** Epoch milliseconds. Default `Date.now`. */
  readonly clock?: Clock;
}

function toVerified(payload: JWTPayload): VerifiedAccessToken | null {
  const { sub, exp, iat, jti } = payload;
  const clientId = payload.client_id;
  const scope = payload.scope;
  if (
    typeof sub !== 'string' ||
    typeof exp !== 'number' ||
    typeof iat !== 'number' ||
    typeof jti !== 'string'
  )
    return null;
  if (typeof clientId !== 'string' || (scope !== undefined && typeof scope !== 'string')) return null;
  // RFC 7800 §3.1: a token confirmed by anything but a DPoP key (mTLS, a raw key) is bound to
  // something no guard here can check: refused rather than accepted as a bearer token.
  const cnf = payload.cnf as Record<string, unknown> | undefined;
  if (cnf !== undefined && (typeof cnf !== 'object' || cnf === null || typeof cnf.jkt !== 'string')) {
    return null;
  }
  const aud = payload.aud;
  return {
    subject: sub,
    clientId,
    scope: scope === undefined || scope === '' ? [] : scope.split(' '),
    audience: aud === undefined ? [] : Array.isArray(aud) ? aud : [aud],
    expiresAt: exp,
    issuedAt: iat,
    jti,
    ...(cnf === undefined ? {} : { dpopJkt: cnf.jkt as string }),
  };
}

/**
 * Verifies RFC 9068 JWT access tokens with the authorization server's public keys only: signature,
 * `typ: at+jwt`, `iss`, `exp`, and the claims. Verified tokens are cached until they expire.
 * **Revocation is not visible** to this verifier: a revoked token is accepted until its `exp`, so
 * keep access tokens short-lived (the default is 15 minutes) or use another verifier.
 *
 * @param options - issuer and keys
 * @returns a verifier: `null` for a bad signature, another `typ` or `iss`, an expired token, or
 * missing claims (and for opaque tokens)
 * @throws TypeError when neither `jwks` nor `jwksUri` is given
 * @see RFC 9068 §4
 * @example
 * ```ts
 * import { createResourceGuard, jwksVerifier } from 'portcullis';
 *
 * const guard = createResourceGuard({
 *   resource: 'https://api.example.com',
 *   verifier: jwksVerifier({ issuer: 'https://auth.example.com', jwksUri: 'https://auth.example.com/.well-known/jwks.json' }),
 * });
 * ```
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export function jwksVerifier(options: JwksVerifierOptions): AccessTokenVerifier {
  let keys: ReturnType<typeof createLocalJWKSet> | ReturnType<typeof createRemoteJWKSet>;
  if (options.jwks !== undefined) keys = createLocalJWKSet(options.jwks);
  else if (options.jwksUri !== undefined) keys = createRemoteJWKSet(new URL(options.jwksUri));
  else throw new TypeError('jwksVerifier needs jwks or jwksUri');
  const algorithms = [...(options.algorithms ?? ['ES256', 'RS256'])];
  const clock = options.clock ?? Date.now;
  const capacity = options.cacheSize ?? 10_000;
  const cache = new Map<string, VerifiedAccessToken>();
  return {
    async verify(token) {
      const now = Math.floor(clock() / 1000);
      const cached = cache.get(token);
      if (cached !== undefined) {
        if (cached.expiresAt > now) return cached;
        cache.delete(token);
      }
      try {
        const { payload } = await jwtVerify(token, keys, {
          issuer: options.issuer,
          typ: 'at+jwt',
          algorithms,
          currentDate: new Date(now * 1000),
          requiredClaims: ['sub', 'exp', 'iat', 'jti', 'client_id'],
        });
        const verified = toVerified(payload);
        if (verified !== null && capacity > 0) {
          if (cache.size >= capacity) cache.delete(cache.keys().next().value as string);
          cache.set(token, verified);
        }
        return verified;
      } catch {
        return null;
      }
    },
  };
}

/**
 * Options of {@link introspectionVerifier}.
 *
 * @example
 * ```ts
 * import { introspectionVerifier, type IntrospectionVerifierOptions } from 'portcullis';
 *
 * const options: IntrospectionVerifierOptions = {
 *   endpoint: 'https://auth.example.com/oauth/introspect',
 *   clientId: 'notes-api',
 *   clientSecret: process.env.NOTES_API_SECRET ?? '',
 * };
 * const verifier = introspectionVerifier(options);
 * ```
 * @see RFC 7662 §2.1
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export interface IntrospectionVerifierOptions {
  /** The server's `introspection_endpoint`. */
  readonly endpoint: string;
  /** Credentials of this resource server (an introspection caller configured on the server). */
  readonly clientId: string;
  /** The caller's secret, sent with `client_secret_post`. */
  readonly clientSecret: string;
  /** A `fetch` implementation. Default the global one. */
  readonly fetch?: typeof fetch;
}

/**
 * Verifies tokens by RFC 7662 introspection, with `client_secret_post` credentials. Every call asks
 * the authorization server, so a revocation takes effect on the very next request. Only access
 * tokens pass: an active answer whose `token_type` is not `Bearer` (a refresh token, which the
 * server describes to its own client) is refused.
 *
 * @param options - endpoint and credentials
 * @returns a verifier; it throws when the endpoint cannot be reached (the guard answers 500)
 * @throws from `verify`: an `Error` naming the status when the endpoint answers anything but 2xx
 * (`401 invalid_client` for wrong credentials), or the fetch's error
 * @see RFC 7662 §2
 * @example
 * ```ts
 * import { createResourceGuard, introspectionVerifier } from 'portcullis';
 *
 * const guard = createResourceGuard({
 *   resource: 'https://api.example.com',
 *   verifier: introspectionVerifier({
 *     endpoint: 'https://auth.example.com/oauth/introspect',
 *     clientId: 'api',
 *     clientSecret: process.env.INTROSPECTION_SECRET ?? '',
 *   }),
 * });
 * ```
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export function introspectionVerifier(options: IntrospectionVerifierOptions): AccessTokenVerifier {
  const doFetch = options.fetch ?? fetch;
  return {
    async verify(token) {
      const body = new URLSearchParams({
        token,
        client_id: options.clientId,
        client_secret: options.clientSecret,
      });
      const response = await doFetch(options.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: body.toString(),
      });
      if (!response.ok) throw new Error(`introspection failed with status ${response.status}`);
      const data = (await response.json()) as Record<string, unknown>;
      if (data.active !== true) return null;
      // Introspection also describes refresh tokens (to their own client): only access tokens pass.
      const tokenType = typeof data.token_type === 'string' ? data.token_type.toLowerCase() : undefined;
      if (tokenType !== undefined && tokenType !== 'bearer' && tokenType !== 'dpop') return null;
      return toVerified({
        ...data,
        client_id: data.client_id,
        jti: typeof data.jti === 'string' ? data.jti : '',
      } as JWTPayload);
    },
  };
}
