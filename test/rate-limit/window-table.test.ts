/**
 * ABU-02: the limiter's state is bounded, each request costs a bounded amount of work however full
 * the table is, spraying keys never lifts a refusal in force (an attacker cannot reset a lockout,
 * their own or anyone's, by sending requests from many addresses), and a table full of refusals
 * never lets a new key through uncounted (it shares its kind's overflow window).
 */
import { describe, expect, it } from 'vitest';
import { assertWithinRateLimit, enforceRateLimit } from '../../src/core/rate-limit.js';
import { createMemoryRateLimiter } from '../../src/rate-limit/memory.js';
import { type WindowLimit, WindowTable } from '../../src/rate-limit/window-table.js';

const SPRAY = 100_000;
const MAX_KEYS = 10_000;

const limit = (points: number, durationMs: number, overflow = 'test'): WindowLimit => ({
  points,
  durationMs,
  overflow,
});

describe('ABU-02 bounded limiter state with O(1) eviction', () => {
  it('a spray of 100 000 keys keeps the table at maxKeys, with at most two entries examined per new key', () => {
    const table = new WindowTable(MAX_KEYS);
    const now = 1_000_000;
    // Ten keys over their limit (a lockout in force), among ordinary traffic.
    for (let i = 0; i < 10; i++)
      for (let n = 0; n < 10; n++) table.count(`locked-${i}`, limit(10, 300_000), now);
    const stepsAt: number[] = [];
    let largest = 0;
    for (let i = 0; i < SPRAY; i++) {
      table.count(`spray-${i}`, limit(120, 60_000), now + i);
      if (i % 10_000 === 9_999) stepsAt.push(table.evictionSteps);
      largest = Math.max(largest, table.size);
    }
    expect(largest).toBe(MAX_KEYS);
    // Flat cost: every 10 000 new keys beyond the first examined the same number of entries.
    const perBatch = stepsAt.slice(1).map((steps, i) => steps - stepsAt[i]!);
    expect(new Set(perBatch).size).toBe(1);
    expect(perBatch[0]).toBeLessThanOrEqual(2 * 10_000);
    // Every lockout survived the spray.
    for (let i = 0; i < 10; i++) expect(table.peek(`locked-${i}`, now + SPRAY)?.count).toBe(10);
  });

  it('a lockout survives 100 000 sprayed addresses through the memory limiter', async () => {
    let now = 1_700_000_000_000;
    const limiter = createMemoryRateLimiter({ maxKeys: MAX_KEYS, clock: () => now });
    const lockout = 'client:billing-app ip:198.51.100.66';
    for (let i = 0; i < 10; i++) await enforceRateLimit(limiter, 'client_auth_failure', lockout);
    await expect(assertWithinRateLimit(limiter, 'client_auth_failure', lockout)).rejects.toMatchObject({
      code: 'too_many_requests',
    });
    for (let i = 0; i < SPRAY; i++) {
      await limiter.consume('token', `ip:2001:db8::${i.toString(16)}`);
      now += 1;
    }
    // 100 s later, still inside the 300 s window: the lockout holds.
    await expect(assertWithinRateLimit(limiter, 'client_auth_failure', lockout)).rejects.toMatchObject({
      code: 'too_many_requests',
    });
  });

  it('reclaims ended windows over their limit before evicting open ones', () => {
    const table = new WindowTable(2);
    table.count('blocked', limit(1, 1000), 0);
    table.count('open', limit(5, 60_000), 0);
    // The blocked window ended at 1000: it makes room; the open one stays.
    table.count('new', limit(5, 60_000), 1000);
    expect(table.size).toBe(2);
    expect(table.peek('open', 1000)?.count).toBe(1);
    expect(table.peek('new', 1000)?.count).toBe(1);
  });

  it('a table full of refusals in force counts new keys in one shared overflow window, with the same limit', () => {
    const table = new WindowTable(100);
    const register = limit(3, 60_000, 'register');
    // A flood holds every slot with a key over its limit.
    for (let i = 0; i < 100; i++) for (let n = 0; n < 4; n++) table.count(`flood-${i}`, register, 0);
    expect(table.size).toBe(100);
    // New keys are not let through: together they get one key's budget for the window.
    const counts = Array.from({ length: 5 }, (_, i) => table.count(`new-${i}`, register, 10).count);
    expect(counts).toEqual([1, 2, 3, 4, 5]);
    expect(table.peek('another-new-key', 10, 'register')?.count).toBe(5);
    expect(table.overflowCounts).toBe(5);
    // Another kind of key has its own overflow window.
    expect(table.count('new-0', limit(3, 60_000, 'token'), 10).count).toBe(1);
    // No victim was dropped to make room.
    for (let i = 0; i < 100; i++) expect(table.peek(`flood-${i}`, 10)?.count).toBe(4);
    expect(table.size).toBe(100);
    // Once the flood's windows end, new keys get windows of their own again.
    expect(table.count('new-0', register, 60_000).count).toBe(1);
    expect(table.peek('new-0', 60_000)?.durationMs).toBe(60_000);
    expect(table.size).toBe(100);
  });

  it('a block replaces the window once the limit is passed, and ends on its own', () => {
    const table = new WindowTable(10);
    const pair = { points: 2, durationMs: 7 * 86_400_000, blockMs: 3_600_000, overflow: 'pair' };
    table.count('k', pair, 0);
    table.count('k', pair, 1000);
    expect(table.count('k', pair, 5000)).toMatchObject({ count: 3, start: 5000, durationMs: 3_600_000 });
    // Counting while blocked does not extend the block.
    expect(table.count('k', pair, 6000)).toMatchObject({ count: 4, start: 5000 });
    expect(table.peek('k', 5000 + 3_600_000)).toBeUndefined();
    expect(table.count('k', pair, 5000 + 3_600_000).count).toBe(1);
  });

  it('delete forgets a key', () => {
    const table = new WindowTable(10);
    table.count('k', limit(1, 60_000), 0);
    table.count('k', limit(1, 60_000), 0);
    expect(table.delete('k')).toBe(true);
    expect(table.peek('k', 0)).toBeUndefined();
    expect(table.delete('k')).toBe(false);
    expect(table.size).toBe(0);
  });
});
