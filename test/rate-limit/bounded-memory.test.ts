/**
 * createBoundedMemoryLimiter: one limit over many keys, rate-limiter-flexible's limiter interface
 * (consume rejects with the state once past the limit), an optional block, bounded memory that a
 * flood can neither use to forget a key at its limit nor to go uncounted.
 */
import { describe, expect, it } from 'vitest';
import { createBoundedMemoryLimiter } from '../../src/rate-limit/bounded-memory.js';
import { createFlexibleRateLimiter } from '../../src/rate-limit/flexible.js';

function clock() {
  let now = 1_700_000_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('createBoundedMemoryLimiter', () => {
  it('allows `points` per window, then rejects with the state (not an Error) until the window ends', async () => {
    const time = clock();
    const limiter = createBoundedMemoryLimiter({ points: 2, durationSeconds: 60, clock: time.now });
    await expect(limiter.consume('k')).resolves.toEqual({ msBeforeNext: 60_000, consumedPoints: 1 });
    await limiter.consume('k');
    time.advance(10_000);
    const refused = await refusal(limiter.consume('k'));
    expect(refused).toEqual({ msBeforeNext: 50_000, consumedPoints: 3 });
    expect(refused).not.toBeInstanceOf(Error);
    await expect(limiter.get('k')).resolves.toEqual({ msBeforeNext: 50_000, consumedPoints: 3 });
    await expect(limiter.get('other')).resolves.toBeNull();
    time.advance(50_000);
    await expect(limiter.get('k')).resolves.toBeNull();
    await expect(limiter.consume('k')).resolves.toMatchObject({ consumedPoints: 1 });
  });

  it('blocks for blockSeconds from the consumption that passes the limit, then starts afresh', async () => {
    const time = clock();
    const limiter = createBoundedMemoryLimiter({
      points: 2,
      durationSeconds: 7 * 86_400,
      blockSeconds: 3600,
      clock: time.now,
    });
    await limiter.consume('k');
    time.advance(86_400_000);
    await limiter.consume('k');
    expect(await refusal(limiter.consume('k'))).toEqual({ msBeforeNext: 3_600_000, consumedPoints: 3 });
    time.advance(3_599_999);
    await expect(limiter.get('k')).resolves.toMatchObject({ msBeforeNext: 1 });
    time.advance(1);
    await expect(limiter.get('k')).resolves.toBeNull();
  });

  it('delete forgets a key', async () => {
    const limiter = createBoundedMemoryLimiter({ points: 1, durationSeconds: 60 });
    await limiter.consume('k');
    await expect(limiter.delete('k')).resolves.toBe(true);
    await expect(limiter.get('k')).resolves.toBeNull();
    await expect(limiter.delete('k')).resolves.toBe(false);
  });

  it('a flood of keys keeps a key at its limit, and new keys that find no slot are limited together', async () => {
    const time = clock();
    const limiter = createBoundedMemoryLimiter({
      points: 3,
      durationSeconds: 60,
      maxKeys: 50,
      clock: time.now,
    });
    for (let n = 0; n < 3; n++) await limiter.consume('victim');
    // Keys under their limit make room for newer ones; the key at its limit is never dropped.
    for (let i = 0; i < 1000; i++) await limiter.consume(`spray-${i}`);
    expect(limiter.size).toBe(50);
    await expect(limiter.get('victim')).resolves.toMatchObject({ consumedPoints: 3 });
    // The victim and 49 keys at their limit hold every slot: newcomers share one window, same limit.
    for (let i = 0; i < 49; i++) for (let n = 0; n < 3; n++) await limiter.consume(`full-${i}`);
    const outcomes: boolean[] = [];
    for (let i = 0; i < 10; i++) outcomes.push((await refusal(limiter.consume(`new-${i}`))) === undefined);
    expect(outcomes.filter(Boolean)).toHaveLength(3);
    await expect(limiter.get('never-seen')).resolves.toMatchObject({ consumedPoints: 10 });
    await expect(limiter.get('victim')).resolves.toMatchObject({ consumedPoints: 3 });
  });

  it('fits createFlexibleRateLimiter as a ready limiter', async () => {
    const time = clock();
    const rateLimiter = createFlexibleRateLimiter({
      limiters: {
        register: createBoundedMemoryLimiter({ points: 1, durationSeconds: 3600, clock: time.now }),
      },
    });
    expect((await rateLimiter.consume('register', '203.0.113.9')).allowed).toBe(true);
    expect(await rateLimiter.consume('register', '203.0.113.9')).toEqual({
      allowed: false,
      retryAfterSeconds: 3600,
    });
    expect((await rateLimiter.check?.('register', '203.0.113.9'))?.allowed).toBe(false);
  });

  it('refuses limits that are not whole numbers', () => {
    expect(() => createBoundedMemoryLimiter({ points: 0, durationSeconds: 60 })).toThrow(/points/);
    expect(() => createBoundedMemoryLimiter({ points: 1, durationSeconds: 1.5 })).toThrow(/durationSeconds/);
    expect(() => createBoundedMemoryLimiter({ points: 1, durationSeconds: 1, maxKeys: 0 })).toThrow(
      /maxKeys/,
    );
  });
});
