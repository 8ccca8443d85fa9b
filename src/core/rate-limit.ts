/**
 * The rate-limit hook. The server asks the limiter before doing work on the endpoints abuse
 * targets; an implementation decides the limits per bucket.
 * @module
 */
import { OAuthError } from './errors.js';

/**
 * The places the server consults the limiter, each with its keys. No key is a public identifier
 * alone: a key is the caller's address, an identity proven with a secret, or both, so a stranger's
 * traffic only ever spends the stranger's own budget (docs/security.md, "Rate limiting").
 *
 * @example
 * ```ts
 * import type { RateLimitBucket } from 'portcullis';
 *
 * const perAddress: RateLimitBucket[] = ['register', 'authorize', 'token', 'revoke', 'introspect', 'userinfo'];
 * ```
 * @see RFC 6749 §10.10; RFC 7591 §3; RFC 7662 §4
 * @group Rate Limiting
 */
export type RateLimitBucket =
  /** Dynamic registration, keyed by client IP. */
  | 'register'
  /** Authorization requests and consent decisions, keyed by client IP. */
  | 'authorize'
  /**
   * Token requests, keyed by client IP (`ip:<address>`) and, for a client that proved its secret,
   * by client id (`client:<id>`). A public client's id proves nothing, so it has no bucket of its
   * own: junk requests naming it never spend its users' budget.
   */
  | 'token'
  /**
   * Failed client authentications of clients whose secret a person chose (configured `clients`
   * and introspection `callers`), keyed by client and IP (`client:<id> ip:<address>`): a lockout
   * only ever locks out the address that kept failing. Generated 256-bit secrets cannot be guessed,
   * so dynamically registered clients are limited by the per-IP buckets only.
   */
  | 'client_auth_failure'
  /** Introspection requests, keyed by client IP (`ip:<address>`) and by the authenticated caller (`caller:<id>`). */
  | 'introspect'
  /** Revocation requests, keyed by client IP. */
  | 'revoke'
  /** UserInfo requests, keyed by client IP. */
  | 'userinfo';

/**
 * A limiter's answer. A refusal becomes `429 too_many_requests` with `Retry-After` (the seconds
 * rounded up, at least 1).
 *
 * @example
 * ```ts
 * import type { RateLimitDecision } from 'portcullis';
 *
 * const refused: RateLimitDecision = { allowed: false, retryAfterSeconds: 30 };
 * ```
 * @see RFC 6585 §4 (429 Too Many Requests), RFC 9110 §10.2.3 (Retry-After)
 * @group Rate Limiting
 */
export type RateLimitDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterSeconds: number };

/**
 * Decides whether one more request in `bucket` for `key` is allowed, and counts it.
 * `portcullis` ships an in-memory implementation and one over rate-limiter-flexible
 * (`portcullis/rate-limit`); write your own for another store.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage, type RateLimiter } from 'portcullis';
 *
 * // One registration per IP per minute, nothing else limited.
 * const last = new Map<string, number>();
 * const rateLimiter: RateLimiter = {
 *   async consume(bucket, key) {
 *     if (bucket !== 'register') return { allowed: true };
 *     const now = Date.now();
 *     const wait = (last.get(key) ?? 0) + 60_000 - now;
 *     if (wait > 0) return { allowed: false, retryAfterSeconds: wait / 1000 };
 *     last.set(key, now);
 *     return { allowed: true };
 *   },
 * };
 * await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage(), rateLimiter });
 * ```
 * @see RFC 6749 §10.10; RFC 7591 §3; RFC 7662 §4
 * @group Rate Limiting
 */
export interface RateLimiter {
  /**
   * Counts one request for `key` in `bucket` and says whether it may proceed.
   *
   * @param bucket - which endpoint or event is being limited
   * @param key - the key of the bucket: an IP, a proven client id, or both (see {@link RateLimitBucket})
   * @returns `allowed: true`, or `allowed: false` with the seconds to wait (sent as `Retry-After`)
   */
  consume(bucket: RateLimitBucket, key: string): Promise<RateLimitDecision>;
  /**
   * Whether one more request would be refused, without counting one. Optional; needed where only
   * failures are counted (`client_auth_failure`): the check runs before the secret is verified, so
   * a correct guess after the limit is refused like a wrong one and the limit cannot be probed.
   */
  check?(bucket: RateLimitBucket, key: string): Promise<RateLimitDecision>;
}

/**
 * Consults the limiter and throws `too_many_requests` (429 + `Retry-After`) when the request is over
 * the limit. Nothing is counted when there is no limiter or no key (an unknown address).
 */
export async function enforceRateLimit(
  limiter: RateLimiter | undefined,
  bucket: RateLimitBucket,
  key: string | undefined,
): Promise<void> {
  if (limiter === undefined || key === undefined) return;
  throwIfRefused(await limiter.consume(bucket, key));
}

function throwIfRefused(decision: RateLimitDecision): void {
  if (decision.allowed) return;
  const retryAfter = Math.max(1, Math.ceil(decision.retryAfterSeconds));
  throw new OAuthError('too_many_requests', `too many requests; retry after ${retryAfter} seconds`, {
    headers: { 'retry-after': String(retryAfter) },
  });
}

/**
 * Throws `too_many_requests` (429 + `Retry-After`) when `key` is already over the limit of
 * `bucket`, without counting this request. Use before verifying a client secret, and count only
 * the failures with {@link enforceRateLimit} (ATK-25). A limiter without `check` allows everything.
 *
 * @param limiter - the configured limiter, if any
 * @param bucket - the bucket, e.g. `client_auth_failure`
 * @param key - the key, e.g. client and address; nothing is checked when `undefined`
 * @throws OAuthError `too_many_requests` (429) with `Retry-After`
 * @see RFC 6749 §10.10; OAuth 2.1 §7.7
 * @example
 * ```ts
 * const key = `client:${clientId} ip:${address}`;
 * await assertWithinRateLimit(limiter, 'client_auth_failure', key);
 * if (!(await secretMatches())) {
 *   await enforceRateLimit(limiter, 'client_auth_failure', key);
 *   throw new OAuthError('invalid_client', 'client authentication failed');
 * }
 * ```
 */
export async function assertWithinRateLimit(
  limiter: RateLimiter | undefined,
  bucket: RateLimitBucket,
  key: string | undefined,
): Promise<void> {
  if (limiter?.check === undefined || key === undefined) return;
  throwIfRefused(await limiter.check(bucket, key));
}
