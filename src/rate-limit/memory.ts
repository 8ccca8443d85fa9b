/**
 * An in-memory {@link RateLimiter}: fixed windows per bucket and key, bounded memory, injectable
 * clock. For one instance; several instances behind a load balancer each count on their own, so use
 * the rate-limiter-flexible limiter over Redis or PostgreSQL there.
 * @module
 */
import type { Clock } from '../core/context.js';
import type { RateLimitBucket, RateLimitDecision, RateLimiter } from '../core/rate-limit.js';
import { type RateLimit, type RateLimits, resolveRateLimits } from './limits.js';

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
   * Most keys remembered across all buckets. When full, expired windows are dropped, then the
   * oldest windows; an attacker spraying keys can thus reset other keys' counts, but memory stays
   * bounded. Default 100 000 (a few MB).
   */
  maxKeys?: number;
  /** Clock returning epoch milliseconds. Default `Date.now`. */
  clock?: Clock;
}

interface Window {
  readonly start: number;
  count: number;
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
  const maxKeys = Math.max(1, options.maxKeys ?? 100_000);
  const clock = options.clock ?? Date.now;
  // Map order is insertion order; a key is re-inserted when its window restarts, so the first
  // entries are always the oldest windows.
  const windows = new Map<string, Window>();

  function refused(window: Window, limit: RateLimit, now: number): RateLimitDecision {
    return { allowed: false, retryAfterSeconds: (window.start + limit.durationSeconds * 1000 - now) / 1000 };
  }

  function makeRoom(now: number): void {
    if (windows.size < maxKeys) return;
    for (const [key, window] of windows) {
      const bucket = key.slice(0, key.indexOf('\u0000')) as RateLimitBucket;
      if (window.start + limits[bucket].durationSeconds * 1000 <= now) windows.delete(key);
    }
    while (windows.size >= maxKeys) {
      const oldest = windows.keys().next();
      if (oldest.done === true) break;
      windows.delete(oldest.value);
    }
  }

  function current(bucket: RateLimitBucket, key: string, now: number): Window | undefined {
    const id = `${bucket}\u0000${key}`;
    const window = windows.get(id);
    if (window === undefined) return undefined;
    if (window.start + limits[bucket].durationSeconds * 1000 <= now) {
      windows.delete(id);
      return undefined;
    }
    return window;
  }

  return {
    async consume(bucket, key) {
      const now = clock();
      const limit = limits[bucket];
      let window = current(bucket, key, now);
      if (window === undefined) {
        makeRoom(now);
        window = { start: now, count: 0 };
        windows.set(`${bucket}\u0000${key}`, window);
      }
      window.count++;
      return window.count > limit.points ? refused(window, limit, now) : ALLOWED;
    },
    async check(bucket, key) {
      const now = clock();
      const limit = limits[bucket];
      const window = current(bucket, key, now);
      return window !== undefined && window.count >= limit.points ? refused(window, limit, now) : ALLOWED;
    },
  };
}
