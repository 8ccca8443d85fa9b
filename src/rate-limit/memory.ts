/**
 * An in-memory {@link RateLimiter}: fixed windows per bucket and key, bounded memory with O(1) work
 * per request, injectable clock. For one instance; several instances behind a load balancer each
 * count on their own, so use the rate-limiter-flexible limiter over Redis or PostgreSQL there.
 * @module
 */
import type { Clock } from '../core/context.js';
import type { RateLimitDecision, RateLimiter } from '../core/rate-limit.js';
import { type RateLimits, resolveRateLimits } from './limits.js';
import { type CounterWindow, WindowTable } from './window-table.js';

/**
 * Options of {@link createMemoryRateLimiter}.
 *
 * @example
 * ```ts
 * import { createMemoryRateLimiter, type MemoryRateLimiterOptions } from 'portcullis/rate-limit';
 *
 * const options: MemoryRateLimiterOptions = { maxKeys: 10_000, limits: { authorize: { points: 30, durationSeconds: 60 } } };
 * const rateLimiter = createMemoryRateLimiter(options);
 * ```
 * @see RFC 6749 §10.10
 * @group Rate Limiting
 */
export interface MemoryRateLimiterOptions {
  /** Limits per bucket; missing buckets keep `DEFAULT_RATE_LIMITS`. */
  limits?: RateLimits;
  /**
   * Most keys remembered across all buckets. Default 100 000 (a few MB). When full, a new key takes
   * the place of an ended window or of the oldest window still under its limit, never of a key
   * over its limit: spraying keys cannot lift a refusal in force (a lockout stays a lockout). When
   * every remembered key is over its limit, a new key has no window of its own: it is counted in
   * its bucket's overflow window, which every such key of that bucket shares, with the bucket's
   * limit (so a flood that fills the table cannot let new keys through unlimited; they share one
   * key's budget until a window ends). Each request does a bounded amount of work however full the
   * table is.
   */
  maxKeys?: number;
  /** Clock returning epoch milliseconds. Default `Date.now`. */
  clock?: Clock;
}

const ALLOWED: RateLimitDecision = Object.freeze({ allowed: true });

/**
 * Creates an in-memory rate limiter.
 *
 * @param options - limits, memory bound, clock
 * @returns a {@link RateLimiter} with `consume` and `check`
 * @throws TypeError when a limit is invalid or names an unknown bucket
 * @see RFC 6749 §10.10; RFC 7591 §3
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { createMemoryRateLimiter } from 'portcullis/rate-limit';
 *
 * const server = await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   rateLimiter: createMemoryRateLimiter({ limits: { register: { points: 5, durationSeconds: 3600 } } }),
 * });
 * ```
 * @group Rate Limiting
 */
export function createMemoryRateLimiter(options: MemoryRateLimiterOptions = {}): RateLimiter {
  const limits = resolveRateLimits(options.limits);
  const clock = options.clock ?? Date.now;
  const table = new WindowTable(options.maxKeys ?? 100_000);

  function refused(window: CounterWindow, now: number): RateLimitDecision {
    return { allowed: false, retryAfterSeconds: (window.start + window.durationMs - now) / 1000 };
  }

  return {
    async consume(bucket, key) {
      const now = clock();
      const { points, durationSeconds } = limits[bucket];
      const window = table.count(
        `${bucket}\u0000${key}`,
        { points, durationMs: durationSeconds * 1000, overflow: bucket },
        now,
      );
      return window.count > points ? refused(window, now) : ALLOWED;
    },
    async check(bucket, key) {
      const now = clock();
      const window = table.peek(`${bucket}\u0000${key}`, now, bucket);
      return window !== undefined && window.count >= limits[bucket].points ? refused(window, now) : ALLOWED;
    },
  };
}
