/**
 * The rate-limiter-flexible limiter over its memory store (always) and real Redis
 * (127.0.0.1:6379, or REDIS_URL; skipped with a message when unreachable, failing under CI=true).
 */
import { Redis } from 'ioredis';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { OAuthError } from '../../src/core/errors.js';
import type { RateLimiter } from '../../src/core/rate-limit.js';
import { assertWithinRateLimit, enforceRateLimit } from '../../src/core/rate-limit.js';
import { createFlexibleRateLimiter, type FlexibleStore } from '../../src/rate-limit/flexible.js';
import type { RateLimits } from '../../src/rate-limit/limits.js';
import { requireRedis } from '../helpers/services.js';

const redisProbe = await requireRedis();
const runId = `portcullis-test-${process.pid}-${Date.now()}`;
const clients: Redis[] = [];
const brokenClients: Redis[] = [];

afterAll(async () => {
  for (const client of clients) {
    const keys = await client.keys(`${runId}*`);
    if (keys.length > 0) await client.del(...keys);
    client.disconnect();
  }
  for (const client of brokenClients) client.disconnect();
});

/** How a test gets to the end of a store's window without waiting for it. */
interface WindowEnd {
  /** Before the first count: take over the clock, where the store reads it. */
  readonly begin: () => void;
  /** Moves past the end of the window of the store key `key`, which lasts `ms`. */
  readonly end: (key: string, ms: number) => Promise<void>;
  /** Gives the clock back. */
  readonly finish: () => void;
}

/** The memory store reads `Date.now()` and deletes a window's record with a timer: fake both. */
const memoryWindowEnd: WindowEnd = {
  begin: () => vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] }),
  end: async (_key, ms) => {
    await vi.advanceTimersByTimeAsync(ms);
  },
  finish: () => vi.useRealTimers(),
};

/**
 * Redis ends a window itself: the limiter gives the window's key a time to live. Check that the key
 * expires within the window, then expire it now, as Redis does when that time comes.
 */
const redisWindowEnd = (client: Redis): WindowEnd => ({
  begin: () => {},
  end: async (key, ms) => {
    const ttl = await client.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(ms);
    await client.pexpire(key, 0);
  },
  finish: () => {},
});

function limiterBehaviour(name: string, store: () => FlexibleStore, windowEnd: WindowEnd) {
  describe(`flexible limiter over ${name}`, () => {
    let counter = 0;
    let keyPrefix = '';
    const make = (limits: RateLimits): RateLimiter => {
      keyPrefix = `${runId}-${name}-${++counter}`;
      return createFlexibleRateLimiter({ store: store(), limits, keyPrefix });
    };

    it('trips at the limit with 429 and Retry-After', async () => {
      const limiter = make({ register: { points: 3, durationSeconds: 60 } });
      for (let i = 0; i < 3; i++) await enforceRateLimit(limiter, 'register', '198.51.100.7');
      const error = await enforceRateLimit(limiter, 'register', '198.51.100.7').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OAuthError);
      expect((error as OAuthError).status).toBe(429);
      expect((error as OAuthError).code).toBe('too_many_requests');
      const retryAfter = Number((error as OAuthError).headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(59);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // Another key of the same bucket is independent.
      await enforceRateLimit(limiter, 'register', '198.51.100.8');
    });

    it('starts a new window when the window ends', async () => {
      windowEnd.begin();
      try {
        const limiter = make({ authorize: { points: 1, durationSeconds: 60 } });
        expect((await limiter.consume('authorize', 'k')).allowed).toBe(true);
        expect((await limiter.consume('authorize', 'k')).allowed).toBe(false);
        // The store's key: the limiter's prefix, the bucket, the caller's key.
        await windowEnd.end(`${keyPrefix}:authorize:k`, 60_000);
        expect((await limiter.consume('authorize', 'k')).allowed).toBe(true);
        expect((await limiter.consume('authorize', 'k')).allowed).toBe(false);
      } finally {
        windowEnd.finish();
      }
    });

    it('check reports the limit without counting (ATK-25)', async () => {
      const limiter = make({ client_auth_failure: { points: 2, durationSeconds: 60 } });
      for (let i = 0; i < 3; i++) await assertWithinRateLimit(limiter, 'client_auth_failure', 'c1');
      await enforceRateLimit(limiter, 'client_auth_failure', 'c1');
      await assertWithinRateLimit(limiter, 'client_auth_failure', 'c1');
      await enforceRateLimit(limiter, 'client_auth_failure', 'c1');
      const error = await assertWithinRateLimit(limiter, 'client_auth_failure', 'c1').catch(
        (e: unknown) => e,
      );
      expect((error as OAuthError).status).toBe(429);
    });
  });
}

limiterBehaviour('memory', () => ({ type: 'memory' }), memoryWindowEnd);

describe.skipIf(!redisProbe.available)('Redis', () => {
  const connect = () => {
    const client = new Redis(redisProbe.available ? redisProbe.url : '', { lazyConnect: false });
    clients.push(client);
    return client;
  };
  const shared = connect();
  limiterBehaviour('redis', () => ({ type: 'redis', client: shared }), redisWindowEnd(shared));

  it('shares one count between two server instances', async () => {
    const keyPrefix = `${runId}-shared`;
    const limits = { token: { points: 2, durationSeconds: 60 } };
    const a = createFlexibleRateLimiter({ store: { type: 'redis', client: connect() }, limits, keyPrefix });
    const b = createFlexibleRateLimiter({ store: { type: 'redis', client: connect() }, limits, keyPrefix });
    expect((await a.consume('token', 'client:x')).allowed).toBe(true);
    expect((await b.consume('token', 'client:x')).allowed).toBe(true);
    expect((await a.consume('token', 'client:x')).allowed).toBe(false);
  });
});

describe('store failures', () => {
  function brokenRedis() {
    // Nothing listens on port 1; no offline queue and no retries, so commands fail at once.
    const client = new Redis({
      port: 1,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => {});
    brokenClients.push(client);
    return client;
  }

  it('allows requests by default and reports the error', async () => {
    const errors: string[] = [];
    const limiter = createFlexibleRateLimiter({
      store: { type: 'redis', client: brokenRedis() },
      onError: (_error, bucket) => errors.push(bucket),
    });
    expect(await limiter.consume('register', 'ip')).toEqual({ allowed: true });
    expect(await limiter.check?.('client_auth_failure', 'c')).toEqual({ allowed: true });
    expect(errors).toEqual(['register', 'client_auth_failure']);
  });

  it('refuses with 429 when configured to', async () => {
    const limiter = createFlexibleRateLimiter({
      store: { type: 'redis', client: brokenRedis() },
      onStoreError: 'refuse',
    });
    const error = await enforceRateLimit(limiter, 'register', 'ip').catch((e: unknown) => e);
    expect((error as OAuthError).status).toBe(429);
    expect((error as OAuthError).headers['retry-after']).toBe('1');
  });
});

describe('ready limiters', () => {
  it('uses a limiter the host built, and leaves buckets without one unlimited', async () => {
    const limiter = createFlexibleRateLimiter({
      limiters: { revoke: new RateLimiterMemory({ points: 1, duration: 60, keyPrefix: 'host' }) },
    });
    expect((await limiter.consume('revoke', 'ip')).allowed).toBe(true);
    expect((await limiter.consume('revoke', 'ip')).allowed).toBe(false);
    for (let i = 0; i < 50; i++) expect((await limiter.consume('register', 'ip')).allowed).toBe(true);
  });

  it('needs a store or limiters', () => {
    expect(() => createFlexibleRateLimiter({})).toThrow(/store or limiters/);
  });
});

describe('requireRedis', () => {
  it('fails instead of skipping when CI=true and Redis is unreachable', async () => {
    const saved = { ci: process.env.CI, url: process.env.REDIS_URL };
    process.env.CI = 'true';
    process.env.REDIS_URL = 'redis://127.0.0.1:1';
    try {
      await expect(requireRedis()).rejects.toThrow(/CI requires it/);
    } finally {
      if (saved.ci === undefined) delete process.env.CI;
      else process.env.CI = saved.ci;
      if (saved.url === undefined) delete process.env.REDIS_URL;
      else process.env.REDIS_URL = saved.url;
    }
  });
});
