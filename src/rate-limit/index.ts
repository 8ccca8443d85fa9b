/**
 * `portcullis/rate-limit`: rate limiters for the server's `rateLimiter` option. The in-memory one
 * needs nothing; the rate-limiter-flexible one loads that optional peer dependency on first use.
 * `createBoundedMemoryLimiter` is one limit over many keys for the host's own limits (a login form).
 * @module portcullis/rate-limit
 */

export type { RateLimitBucket, RateLimitDecision, RateLimiter } from '../core/rate-limit.js';
export type { BoundedMemoryLimiter, BoundedMemoryLimiterOptions } from './bounded-memory.js';
export { createBoundedMemoryLimiter } from './bounded-memory.js';
export type {
  FlexibleLimiter,
  FlexibleLimiterResult,
  FlexibleRateLimiterOptions,
  FlexibleStore,
} from './flexible.js';
export { createFlexibleRateLimiter } from './flexible.js';
export type { RateLimit, RateLimits } from './limits.js';
export { DEFAULT_RATE_LIMITS, RATE_LIMIT_BUCKETS, resolveRateLimits } from './limits.js';
export type { MemoryRateLimiterOptions } from './memory.js';
export { createMemoryRateLimiter } from './memory.js';
