/**
 * Limits per bucket and their defaults. Both limiters count fixed windows: at most `points`
 * requests per key in each window of `durationSeconds`, the window starting at the key's first
 * request (so a burst of up to twice `points` straddling a window edge is possible; the numbers
 * below leave room for that).
 * @module
 */
import type { RateLimitBucket } from '../core/rate-limit.js';

/**
 * A limit: `points` requests per `durationSeconds` per key.
 *
 * @example
 * ```ts
 * import type { RateLimit } from 'portcullis/rate-limit';
 *
 * const fivePerHour: RateLimit = { points: 5, durationSeconds: 3600 };
 * ```
 * @see RFC 6749 §10.10
 * @group Rate Limiting
 */
export interface RateLimit {
  /** Requests allowed per window (at least 1). */
  readonly points: number;
  /** Window length in seconds (at least 1). */
  readonly durationSeconds: number;
}

/**
 * Limits for some or all buckets; missing buckets keep their default.
 *
 * @example
 * ```ts
 * import { createMemoryRateLimiter, type RateLimits } from 'portcullis/rate-limit';
 *
 * const limits: RateLimits = { register: { points: 5, durationSeconds: 3600 } };
 * const rateLimiter = createMemoryRateLimiter({ limits });
 * ```
 * @see RFC 6749 §10.10; RFC 7591 §3
 * @group Rate Limiting
 */
export type RateLimits = Partial<Readonly<Record<RateLimitBucket, RateLimit>>>;

/**
 * Defaults, per key (each bucket's keys: {@link RateLimitBucket}):
 * - `register`, per IP: 20 per hour. An agent registers once per server; a burst is a farm.
 * - `authorize`, per IP: 60 per minute (authorization requests and consent decisions). Browsers
 *   behind one NAT share it.
 * - `token`, per IP, and per client that proved its secret: 120 per minute. Refreshes of many
 *   sessions behind one gateway fit. Public clients have no per-client bucket.
 * - `client_auth_failure`, per (client, IP), only for secrets a person chose (configured clients,
 *   introspection callers): 10 failures per 5 minutes, then that address is refused for that
 *   client until the window ends, even with the right secret (ATK-25).
 * - `introspect`, per IP and per caller: 600 per minute. A resource server introspects on each
 *   request it serves.
 * - `revoke`, per IP: 60 per minute.
 * - `userinfo`, per IP: 600 per minute.
 *
 * @see RFC 6749 §10.10; RFC 7591 §3 (abusive registration); RFC 7662 §4 (token scanning)
 * @example
 * ```ts
 * import { DEFAULT_RATE_LIMITS } from 'portcullis/rate-limit';
 *
 * console.log(DEFAULT_RATE_LIMITS.client_auth_failure); // { points: 10, durationSeconds: 300 }
 * ```
 * @group Rate Limiting
 */
export const DEFAULT_RATE_LIMITS: Readonly<Record<RateLimitBucket, RateLimit>> = Object.freeze({
  register: { points: 20, durationSeconds: 3600 },
  authorize: { points: 60, durationSeconds: 60 },
  token: { points: 120, durationSeconds: 60 },
  client_auth_failure: { points: 10, durationSeconds: 300 },
  introspect: { points: 600, durationSeconds: 60 },
  revoke: { points: 60, durationSeconds: 60 },
  userinfo: { points: 600, durationSeconds: 60 },
});

/**
 * Every bucket, in a stable order.
 *
 * @example
 * ```ts
 * import { RATE_LIMIT_BUCKETS, resolveRateLimits } from 'portcullis/rate-limit';
 *
 * const limits = resolveRateLimits();
 * for (const bucket of RATE_LIMIT_BUCKETS) console.log(bucket, limits[bucket].points, limits[bucket].durationSeconds);
 * ```
 * @see RFC 6749 §10.10
 * @group Rate Limiting
 */
export const RATE_LIMIT_BUCKETS: readonly RateLimitBucket[] = Object.freeze(
  Object.keys(DEFAULT_RATE_LIMITS) as RateLimitBucket[],
);

/**
 * The defaults with `overrides` applied, each checked.
 *
 * @param overrides - limits for some buckets
 * @returns a limit for every bucket
 * @throws TypeError naming a bucket whose limit is not positive integers, or an unknown bucket
 * @see RFC 6749 §10.10
 * @example
 * ```ts
 * import { resolveRateLimits } from 'portcullis/rate-limit';
 *
 * resolveRateLimits({ register: { points: 5, durationSeconds: 3600 } }).register.points; // 5
 * ```
 * @group Rate Limiting
 */
export function resolveRateLimits(overrides: RateLimits = {}): Readonly<Record<RateLimitBucket, RateLimit>> {
  for (const name of Object.keys(overrides)) {
    if (!(name in DEFAULT_RATE_LIMITS)) throw new TypeError(`rate limits: unknown bucket '${name}'`);
  }
  const out = { ...DEFAULT_RATE_LIMITS, ...overrides };
  for (const bucket of RATE_LIMIT_BUCKETS) {
    const { points, durationSeconds } = out[bucket];
    if (
      !Number.isInteger(points) ||
      points < 1 ||
      !Number.isInteger(durationSeconds) ||
      durationSeconds < 1
    ) {
      throw new TypeError(`rate limits: ${bucket} needs integer points >= 1 and durationSeconds >= 1`);
    }
  }
  return out;
}
