/**
 * A {@link RateLimiter} over rate-limiter-flexible (an optional peer dependency), so that several
 * instances share one count in Redis or PostgreSQL. The host passes either a store (the package is
 * then loaded on first use, and one limiter per bucket is built with the limits) or ready
 * `RateLimiterAbstract` instances per bucket (any store the package supports).
 * @module
 */
import type { RateLimitBucket, RateLimitDecision, RateLimiter } from '../core/rate-limit.js';
import { type RateLimit, type RateLimits, resolveRateLimits } from './limits.js';

/**
 * What this adapter uses of rate-limiter-flexible's `RateLimiterRes`.
 *
 * @example
 * ```ts
 * import type { FlexibleLimiterResult } from 'portcullis/rate-limit';
 *
 * const result: FlexibleLimiterResult = { msBeforeNext: 30_000, consumedPoints: 11 };
 * ```
 * @see RFC 6585 §4, RFC 9110 §10.2.3 (Retry-After)
 * @group Rate Limiting
 */
export interface FlexibleLimiterResult {
  readonly msBeforeNext: number;
  readonly consumedPoints: number;
}

/**
 * What this adapter uses of rate-limiter-flexible's `RateLimiterAbstract` (every limiter class of
 * the package fits). Declared here so that the types of `portcullis/rate-limit` do not need the package.
 *
 * @example
 * ```ts
 * import { RateLimiterMemory } from 'rate-limiter-flexible';
 * import { createFlexibleRateLimiter, type FlexibleLimiter } from 'portcullis/rate-limit';
 *
 * const register: FlexibleLimiter = new RateLimiterMemory({ points: 5, duration: 3600 });
 * const rateLimiter = createFlexibleRateLimiter({ limiters: { register } });
 * ```
 * @see RFC 7591 §3
 * @group Rate Limiting
 */
export interface FlexibleLimiter {
  readonly points: number;
  /** Counts `points` (default 1) against `key`; rejects with the limiter's result when over the limit. */
  consume(key: string, points?: number): Promise<FlexibleLimiterResult>;
  /** The current state of `key` without counting, or `null` when it has no points consumed. */
  get(key: string): Promise<FlexibleLimiterResult | null>;
}

/**
 * A store the adapter builds limiters over.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { createFlexibleRateLimiter, type FlexibleStore } from 'portcullis/rate-limit';
 *
 * const store: FlexibleStore = { type: 'postgres', client: new pg.Pool({ connectionString: process.env.DATABASE_URL }) };
 * const rateLimiter = createFlexibleRateLimiter({ store });
 * ```
 * @see RFC 6749 §10.10
 * @group Rate Limiting
 */
export type FlexibleStore =
  /** Process memory (`RateLimiterMemory`): one instance only. */
  | { readonly type: 'memory' }
  /** Redis (`RateLimiterRedis`): an ioredis or node-redis client, connected. */
  | { readonly type: 'redis'; readonly client: unknown }
  /**
   * PostgreSQL (`RateLimiterPostgres`): a `pg` Pool or Client. The table is created on first use
   * unless `tableCreated` is true.
   */
  | {
      readonly type: 'postgres';
      readonly client: unknown;
      /** Default `portcullis_rate_limits`. */
      readonly tableName?: string;
      readonly tableCreated?: boolean;
    };

/**
 * Options of {@link createFlexibleRateLimiter}. Give `store`, `limiters`, or both.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { createFlexibleRateLimiter, type FlexibleRateLimiterOptions } from 'portcullis/rate-limit';
 *
 * const options: FlexibleRateLimiterOptions = {
 *   store: { type: 'redis', client: new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') },
 *   onStoreError: 'refuse', // a Redis outage refuses requests instead of allowing them
 *   onError: (error, bucket) => console.error(`rate limiter store failed (${bucket})`, error),
 * };
 * const rateLimiter = createFlexibleRateLimiter(options);
 * ```
 * @see RFC 6749 §10.10
 * @group Rate Limiting
 */
export interface FlexibleRateLimiterOptions {
  /** Builds one limiter per bucket over this store, with `limits`. */
  store?: FlexibleStore;
  /** Ready limiters for some buckets; they win over `store`. A bucket with neither is not limited. */
  limiters?: Partial<Readonly<Record<RateLimitBucket, FlexibleLimiter>>>;
  /** Limits of the limiters built over `store`; missing buckets keep `DEFAULT_RATE_LIMITS`. */
  limits?: RateLimits;
  /** Prefix of the keys in the store, followed by the bucket. Default `portcullis`. */
  keyPrefix?: string;
  /**
   * What to do when the store fails (Redis down, query error): `allow` the request (default: an
   * outage of the limiter store does not take sign-in down; secrets are 256-bit, so guessing stays
   * hopeless) or `refuse` it with a 429 after 1 second.
   */
  onStoreError?: 'allow' | 'refuse';
  /** Told about each store failure (log it). */
  onError?: (error: unknown, bucket: RateLimitBucket) => void;
}

type FlexibleModule = typeof import('rate-limiter-flexible');

let loading: Promise<FlexibleModule> | undefined;

/** Loads the optional peer on first use, so `portcullis/rate-limit` imports without it. */
function loadFlexible(): Promise<FlexibleModule> {
  loading ??= import('rate-limiter-flexible').then(
    (m) => ((m as { default?: FlexibleModule }).default ?? m) as FlexibleModule,
    (error: unknown) => {
      loading = undefined;
      throw new Error(
        'createFlexibleRateLimiter needs the rate-limiter-flexible package: npm i rate-limiter-flexible',
        {
          cause: error,
        },
      );
    },
  );
  return loading;
}

async function build(
  store: FlexibleStore,
  bucket: RateLimitBucket,
  limit: RateLimit,
  keyPrefix: string,
): Promise<FlexibleLimiter> {
  const flexible = await loadFlexible();
  const base = { points: limit.points, duration: limit.durationSeconds, keyPrefix: `${keyPrefix}:${bucket}` };
  switch (store.type) {
    case 'memory':
      return new flexible.RateLimiterMemory(base);
    case 'redis':
      return new flexible.RateLimiterRedis({ ...base, storeClient: store.client });
    case 'postgres':
      // The constructor creates its table asynchronously and reports through the callback.
      return new Promise<FlexibleLimiter>((resolve, reject) => {
        const limiter: FlexibleLimiter = new flexible.RateLimiterPostgres(
          {
            ...base,
            storeClient: store.client,
            tableName: store.tableName ?? 'portcullis_rate_limits',
            tableCreated: store.tableCreated ?? false,
          },
          (error?: unknown) => (error === undefined || error === null ? resolve(limiter) : reject(error)),
        );
      });
  }
}

/** rate-limiter-flexible rejects with a `RateLimiterRes` when over the limit, with an `Error` when the store fails. */
function isLimiterResult(value: unknown): value is FlexibleLimiterResult {
  return (
    typeof value === 'object' &&
    value !== null &&
    !(value instanceof Error) &&
    typeof (value as FlexibleLimiterResult).msBeforeNext === 'number'
  );
}

const ALLOWED: RateLimitDecision = Object.freeze({ allowed: true });

/**
 * Creates a rate limiter over rate-limiter-flexible.
 *
 * @param options - a store or ready limiters, limits, key prefix, store-failure policy
 * @returns a {@link RateLimiter} with `consume` and `check`
 * @throws TypeError when neither `store` nor `limiters` is given, or a limit is invalid
 * @see RFC 6749 §10.10; RFC 7591 §3; RFC 7662 §4
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { createFlexibleRateLimiter } from 'portcullis/rate-limit';
 *
 * const rateLimiter = createFlexibleRateLimiter({
 *   store: { type: 'redis', client: new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') },
 *   limits: { client_auth_failure: { points: 5, durationSeconds: 600 } },
 * });
 * ```
 * @group Rate Limiting
 */
export function createFlexibleRateLimiter(options: FlexibleRateLimiterOptions): RateLimiter {
  if (options.store === undefined && options.limiters === undefined) {
    throw new TypeError('createFlexibleRateLimiter needs a store or limiters');
  }
  const limits = resolveRateLimits(options.limits);
  const keyPrefix = options.keyPrefix ?? 'portcullis';
  const refuseOnError = options.onStoreError === 'refuse';
  const built = new Map<RateLimitBucket, Promise<FlexibleLimiter | undefined>>();

  function limiterFor(bucket: RateLimitBucket): Promise<FlexibleLimiter | undefined> {
    let limiter = built.get(bucket);
    if (limiter === undefined) {
      const ready = options.limiters?.[bucket];
      const store = options.store;
      limiter =
        ready !== undefined
          ? Promise.resolve(ready)
          : store === undefined
            ? Promise.resolve(undefined)
            : build(store, bucket, limits[bucket], keyPrefix);
      // A failed build (table creation, missing package) is retried on the next request.
      limiter.catch(() => built.delete(bucket));
      built.set(bucket, limiter);
    }
    return limiter;
  }

  function storeFailure(error: unknown, bucket: RateLimitBucket): RateLimitDecision {
    options.onError?.(error, bucket);
    return refuseOnError ? { allowed: false, retryAfterSeconds: 1 } : ALLOWED;
  }

  return {
    async consume(bucket, key) {
      try {
        const limiter = await limiterFor(bucket);
        if (limiter === undefined) return ALLOWED;
        await limiter.consume(key);
        return ALLOWED;
      } catch (error) {
        if (isLimiterResult(error)) return { allowed: false, retryAfterSeconds: error.msBeforeNext / 1000 };
        return storeFailure(error, bucket);
      }
    },
    async check(bucket, key) {
      try {
        const limiter = await limiterFor(bucket);
        if (limiter === undefined) return ALLOWED;
        const state = await limiter.get(key);
        return state !== null && state.consumedPoints >= limiter.points
          ? { allowed: false, retryAfterSeconds: state.msBeforeNext / 1000 }
          : ALLOWED;
      } catch (error) {
        return storeFailure(error, bucket);
      }
    },
  };
}
