/**
 * ABU-02: the limiter's state is bounded, each request costs a bounded amount of work however full
 * the table is, and spraying keys never lifts a refusal in force (an attacker cannot reset a
 * lockout, their own or anyone's, by sending requests from many addresses).
 */
import { describe, expect, it } from 'vitest';
import { assertWithinRateLimit, enforceRateLimit } from '../../src/core/rate-limit.js';
import { createMemoryRateLimiter } from '../../src/rate-limit/memory.js';
import { WindowTable } from '../../src/rate-limit/window-table.js';

const SPRAY = 100_000;
const MAX_KEYS = 10_000;

describe('ABU-02 bounded limiter state with O(1) eviction', () => {
  it('a spray of 100 000 keys keeps the table at maxKeys, with at most two entries examined per new key', () => {
    const table = new WindowTable(MAX_KEYS);
    const now = 1_000_000;
    // Ten keys over their limit (a lockout in force), among ordinary traffic.
    for (let i = 0; i < 10; i++) for (let n = 0; n < 10; n++) table.count(`locked-${i}`, 10, 300_000, now);
    const stepsAt: number[] = [];
    let largest = 0;
    for (let i = 0; i < SPRAY; i++) {
      table.count(`spray-${i}`, 120, 60_000, now + i);
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
    table.count('blocked', 1, 1000, 0);
    table.count('open', 5, 60_000, 0);
    // The blocked window ended at 1000: it makes room; the open one stays.
    table.count('new', 5, 60_000, 1000);
    expect(table.size).toBe(2);
    expect(table.peek('open', 1000)?.count).toBe(1);
    expect(table.peek('new', 1000)?.count).toBe(1);
  });
});
