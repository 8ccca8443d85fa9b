/**
 * The in-memory limiter: fixed windows, 429 semantics through `enforceRateLimit`, `check` for
 * failure-only buckets (ATK-25), window reset with the clock, bounded memory.
 */
import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../src/core/errors.js';
import { assertWithinRateLimit, enforceRateLimit } from '../../src/core/rate-limit.js';
import { DEFAULT_RATE_LIMITS, resolveRateLimits } from '../../src/rate-limit/limits.js';
import { createMemoryRateLimiter } from '../../src/rate-limit/memory.js';

function clock() {
  let now = 1_700_000_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

async function tooMany(promise: Promise<unknown>): Promise<OAuthError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OAuthError);
  const e = error as OAuthError;
  expect(e.code).toBe('too_many_requests');
  expect(e.status).toBe(429);
  return e;
}

describe('memory rate limiter', () => {
  it('allows `points` requests per window, then refuses with 429 and Retry-After', async () => {
    const time = clock();
    const limiter = createMemoryRateLimiter({
      clock: time.now,
      limits: { revoke: { points: 3, durationSeconds: 60 } },
    });
    for (let i = 0; i < 3; i++) await enforceRateLimit(limiter, 'revoke', '203.0.113.5');
    time.advance(20_500);
    const error = await tooMany(enforceRateLimit(limiter, 'revoke', '203.0.113.5'));
    expect(error.headers['retry-after']).toBe('40');
    expect(error.toJSON()).toEqual({
      error: 'too_many_requests',
      error_description: 'too many requests; retry after 40 seconds',
    });
  });

  it('starts a new window when the clock passes the old one', async () => {
    const time = clock();
    const limiter = createMemoryRateLimiter({
      clock: time.now,
      limits: { authorize: { points: 2, durationSeconds: 10 } },
    });
    await limiter.consume('authorize', 'ip');
    await limiter.consume('authorize', 'ip');
    expect((await limiter.consume('authorize', 'ip')).allowed).toBe(false);
    time.advance(9_999);
    expect((await limiter.consume('authorize', 'ip')).allowed).toBe(false);
    time.advance(1);
    expect((await limiter.consume('authorize', 'ip')).allowed).toBe(true);
    expect((await limiter.consume('authorize', 'ip')).allowed).toBe(true);
    expect((await limiter.consume('authorize', 'ip')).allowed).toBe(false);
  });

  it('counts buckets and keys separately', async () => {
    const limiter = createMemoryRateLimiter({
      limits: { token: { points: 1, durationSeconds: 60 }, revoke: { points: 1, durationSeconds: 60 } },
    });
    expect((await limiter.consume('token', 'ip:a')).allowed).toBe(true);
    expect((await limiter.consume('token', 'client:a')).allowed).toBe(true);
    expect((await limiter.consume('revoke', 'ip:a')).allowed).toBe(true);
    expect((await limiter.consume('token', 'ip:a')).allowed).toBe(false);
  });

  it('ATK-25: after 10 failed authentications a client is refused before its secret is checked', async () => {
    const time = clock();
    const limiter = createMemoryRateLimiter({ clock: time.now });
    expect(DEFAULT_RATE_LIMITS.client_auth_failure).toEqual({ points: 10, durationSeconds: 300 });
    // The token endpoint's recipe: check (no count), verify, count only failures.
    const authenticate = async (secretIsRight: boolean) => {
      await assertWithinRateLimit(limiter, 'client_auth_failure', 'client-1');
      if (!secretIsRight) {
        await enforceRateLimit(limiter, 'client_auth_failure', 'client-1');
        return 'invalid_client';
      }
      return 'ok';
    };
    for (let i = 0; i < 10; i++) expect(await authenticate(false)).toBe('invalid_client');
    // The right secret now gets the same 429 as a wrong one: the limit cannot be used as an oracle.
    const error = await tooMany(authenticate(true));
    expect(Number(error.headers['retry-after'])).toBe(300);
    await tooMany(authenticate(false));
    // Other clients are unaffected; successes never count.
    await assertWithinRateLimit(limiter, 'client_auth_failure', 'client-2');
    time.advance(300_000);
    expect(await authenticate(true)).toBe('ok');
    expect(await authenticate(true)).toBe('ok');
  });

  it('check never counts', async () => {
    const limiter = createMemoryRateLimiter({ limits: { introspect: { points: 1, durationSeconds: 60 } } });
    for (let i = 0; i < 5; i++) expect((await limiter.check?.('introspect', 'rs'))?.allowed).toBe(true);
    expect((await limiter.consume('introspect', 'rs')).allowed).toBe(true);
    expect((await limiter.check?.('introspect', 'rs'))?.allowed).toBe(false);
  });

  it('ABU-02 keeps at most maxKeys windows: a new key replaces the oldest window under its limit, never one over it', async () => {
    const time = clock();
    const limiter = createMemoryRateLimiter({
      clock: time.now,
      maxKeys: 3,
      limits: { register: { points: 2, durationSeconds: 60 } },
    });
    await limiter.consume('register', 'a');
    await limiter.consume('register', 'blocked');
    await limiter.consume('register', 'blocked');
    expect((await limiter.consume('register', 'blocked')).allowed).toBe(false);
    time.advance(1);
    await limiter.consume('register', 'b');
    // A fourth key evicts the oldest window under its limit (a), whose count is forgotten.
    await limiter.consume('register', 'c');
    await limiter.consume('register', 'a');
    expect((await limiter.consume('register', 'a')).allowed).toBe(true);
    // The key over its limit survives any spray.
    for (let i = 0; i < 1000; i++) await limiter.consume('register', `spray-${i}`);
    expect((await limiter.consume('register', 'blocked')).allowed).toBe(false);
    expect((await limiter.check?.('register', 'blocked'))?.allowed).toBe(false);
    // Its window ends on time.
    time.advance(60_000);
    expect((await limiter.consume('register', 'blocked')).allowed).toBe(true);
  });

  it('ABU-02 when every remembered key is over its limit, a new key is still limited: it shares its bucket’s overflow window', async () => {
    const time = clock();
    const limiter = createMemoryRateLimiter({
      clock: time.now,
      maxKeys: 2,
      limits: { register: { points: 1, durationSeconds: 60 } },
    });
    // A flood fills the table with keys that used their budget.
    await limiter.consume('register', 'x');
    await limiter.consume('register', 'y');
    // A new address gets one key's budget, shared with every other key that finds no slot.
    expect((await limiter.consume('register', 'z')).allowed).toBe(true);
    expect(await limiter.consume('register', 'z')).toEqual({ allowed: false, retryAfterSeconds: 60 });
    expect((await limiter.consume('register', 'w')).allowed).toBe(false);
    expect((await limiter.check?.('register', 'v'))?.allowed).toBe(false);
    // Nobody's counter was dropped to make room.
    expect((await limiter.consume('register', 'x')).allowed).toBe(false);
    expect((await limiter.consume('register', 'y')).allowed).toBe(false);
    // Once the windows end, new keys get windows of their own.
    time.advance(60_000);
    expect((await limiter.consume('register', 'z')).allowed).toBe(true);
    expect((await limiter.consume('register', 'z')).allowed).toBe(false);
    expect((await limiter.consume('register', 'w')).allowed).toBe(true);
  });

  it('ABU-02 a flood of 10 000 addresses over their limit does not let the next addresses through unlimited', async () => {
    const time = clock();
    const limiter = createMemoryRateLimiter({
      clock: time.now,
      maxKeys: 1_000,
      limits: { token: { points: 5, durationSeconds: 60 } },
    });
    for (let i = 0; i < 10_000; i++) {
      for (let n = 0; n < 6; n++) await limiter.consume('token', `ip:198.51.${i >> 8}.${i & 255}`);
    }
    // Each new address still meets a limit: together they get one address's budget this minute.
    let allowed = 0;
    for (let i = 0; i < 1_000; i++) {
      if ((await limiter.consume('token', `ip:2001:db8:${i.toString(16)}::/64`)).allowed) allowed++;
    }
    expect(allowed).toBeLessThanOrEqual(5);
  });

  it('refuses invalid limits', () => {
    expect(() => resolveRateLimits({ token: { points: 0, durationSeconds: 60 } })).toThrow(/token/);
    expect(() => resolveRateLimits({ token: { points: 1.5, durationSeconds: 60 } })).toThrow(TypeError);
    expect(() =>
      createMemoryRateLimiter({ limits: { nope: { points: 1, durationSeconds: 1 } } as never }),
    ).toThrow(/unknown bucket 'nope'/);
  });

  it('does nothing without a limiter or a key', async () => {
    await expect(enforceRateLimit(undefined, 'token', 'x')).resolves.toBeUndefined();
    const limiter = createMemoryRateLimiter({ limits: { token: { points: 1, durationSeconds: 60 } } });
    for (let i = 0; i < 3; i++)
      await expect(enforceRateLimit(limiter, 'token', undefined)).resolves.toBeUndefined();
  });
});
