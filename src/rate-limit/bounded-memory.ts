/**
 * One limit over many keys, in bounded memory: a {@link FlexibleLimiter} like rate-limiter-flexible's
 * `RateLimiterMemory`, but over the in-memory limiter's table, so that its memory has a ceiling and
 * a flood of keys can neither lift a refusal in force nor go uncounted (`window-table.ts`). For
 * limits of the host's own (a login form, a sign-up page) on one instance.
 * @module
 */
import type { Clock } from '../core/context.js';
import type { FlexibleLimiter, FlexibleLimiterResult } from './flexible.js';
import { WindowTable } from './window-table.js';

/**
 * Options of {@link createBoundedMemoryLimiter}.
 *
 * @example
 * ```ts
 * import { createBoundedMemoryLimiter, type BoundedMemoryLimiterOptions } from 'portcullis/rate-limit';
 *
 * // 10 failures in a row per (email, address) within a week, then refused for an hour.
 * const options: BoundedMemoryLimiterOptions = {
 *   points: 10,
 *   durationSeconds: 7 * 86_400,
 *   blockSeconds: 3600,
 *   maxKeys: 100_000,
 * };
 * const failuresInARow = createBoundedMemoryLimiter(options);
 * ```
 * @see RFC 6749 §10.10
 * @group Rate Limiting
 */
export interface BoundedMemoryLimiterOptions {
  /** Points a key may consume per window (at least 1); consuming past it is refused. */
  readonly points: number;
  /** Window length in seconds (at least 1), starting at the key's first consumption. */
  readonly durationSeconds: number;
  /**
   * When set, the consumption that passes `points` refuses the key for this many seconds from then
   * (rate-limiter-flexible's `blockDuration`), after which the key starts afresh.
   */
  readonly blockSeconds?: number;
  /**
   * Most keys remembered. Default 100 000. When full, a new key takes the slot of an ended window,
   * else of the oldest window still under its limit, never of a key at or over its limit; when
   * every slot holds such a key, new keys share one overflow window with the same limit (they are
   * limited together, never let through). Each call does a bounded amount of work.
   */
  readonly maxKeys?: number;
  /** Clock returning epoch milliseconds. Default `Date.now`. */
  readonly clock?: Clock;
}

/**
 * A {@link FlexibleLimiter} in bounded memory, with `delete` to forget a key (a success that
 * resets a count of failures).
 *
 * @example
 * ```ts
 * import { createBoundedMemoryLimiter, type BoundedMemoryLimiter } from 'portcullis/rate-limit';
 *
 * const failures: BoundedMemoryLimiter = createBoundedMemoryLimiter({ points: 5, durationSeconds: 900 });
 * await failures.delete('ada@example.com 203.0.113.9'); // after a successful login
 * console.log(failures.size); // keys remembered, never more than maxKeys
 * ```
 * @see RFC 6749 §10.10
 * @group Rate Limiting
 */
export interface BoundedMemoryLimiter extends FlexibleLimiter {
  /** Forgets `key`; resolves whether it had a window. */
  delete(key: string): Promise<boolean>;
  /** Keys remembered now, at most `maxKeys` (ended windows count until touched or replaced). */
  readonly size: number;
}

function wholeNumber(name: string, value: number | undefined): void {
  if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
    throw new TypeError(`createBoundedMemoryLimiter: ${name} must be an integer >= 1`);
  }
}

/**
 * Creates a limiter of one limit over many keys, in bounded memory: `consume` resolves with the
 * key's state, or rejects with it (a plain `{ msBeforeNext, consumedPoints }`, never an `Error`)
 * once the key is past its limit; `get` reads without counting. Usable wherever rate-limiter-flexible's
 * `RateLimiterMemory` is (also in `createFlexibleRateLimiter({ limiters })`), for one instance.
 *
 * @param options - the limit, an optional block, the memory bound, the clock
 * @returns the limiter
 * @throws TypeError when `points`, `durationSeconds`, `blockSeconds` or `maxKeys` is not an integer >= 1
 * @see RFC 6749 §10.10; OWASP Authentication Cheat Sheet (login throttling)
 * @example
 * ```ts
 * import { createBoundedMemoryLimiter } from 'portcullis/rate-limit';
 *
 * const perAddress = createBoundedMemoryLimiter({ points: 100, durationSeconds: 86_400, blockSeconds: 86_400 });
 * try {
 *   await perAddress.consume('203.0.113.9');
 * } catch (refusal) {
 *   const { msBeforeNext } = refusal as { msBeforeNext: number };
 *   console.log(`retry after ${Math.ceil(msBeforeNext / 1000)} s`);
 * }
 * ```
 * @group Rate Limiting
 */
export function createBoundedMemoryLimiter(options: BoundedMemoryLimiterOptions): BoundedMemoryLimiter {
  const { points, durationSeconds, blockSeconds, maxKeys = 100_000 } = options;
  wholeNumber('points', points);
  wholeNumber('durationSeconds', durationSeconds);
  wholeNumber('blockSeconds', blockSeconds);
  wholeNumber('maxKeys', maxKeys);
  const clock = options.clock ?? (() => Date.now());
  const table = new WindowTable(maxKeys);
  const limit = {
    points,
    durationMs: durationSeconds * 1000,
    ...(blockSeconds === undefined ? {} : { blockMs: blockSeconds * 1000 }),
    overflow: 'keys',
  };

  return {
    points,
    async consume(key, amount = 1) {
      wholeNumber('consumed points', amount);
      const now = clock();
      const window = table.count(key, limit, now, amount);
      const result: FlexibleLimiterResult = {
        msBeforeNext: window.start + window.durationMs - now,
        consumedPoints: window.count,
      };
      if (window.count > points) throw result;
      return result;
    },
    async get(key) {
      const now = clock();
      const window = table.peek(key, now, limit.overflow);
      return window === undefined
        ? null
        : { msBeforeNext: window.start + window.durationMs - now, consumedPoints: window.count };
    },
    async delete(key) {
      return table.delete(key);
    },
    get size() {
      return table.size;
    },
  };
}
