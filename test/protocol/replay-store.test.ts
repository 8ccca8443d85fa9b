/**
 * The replay store that makes client assertion and DPoP proof `jti`s single use (RFC 7523 §3,
 * RFC 9449 §11.1; PKJ-02, DPOP-01): one atomic "record if new", expiry, bounded memory that fails
 * closed, and fixed-length namespaced keys.
 */
import { describe, expect, it } from 'vitest';
import { isOAuthError } from '../../src/core/errors.js';
import { memoryReplayStore, replayKey } from '../../src/protocol/replay-store.js';

const NOW = 1_900_000_000;

describe('memoryReplayStore', () => {
  it('accepts a key once and refuses it while it is unexpired (PKJ-02)', async () => {
    const store = memoryReplayStore();
    expect(await store.checkAndStore('k', NOW + 60, NOW)).toBe(true);
    expect(await store.checkAndStore('k', NOW + 60, NOW)).toBe(false);
    expect(await store.checkAndStore('k', NOW + 60, NOW + 59)).toBe(false);
    expect(await store.checkAndStore('other', NOW + 60, NOW)).toBe(true);
  });

  it('treats a key whose expiry has passed as absent', async () => {
    const store = memoryReplayStore();
    expect(await store.checkAndStore('k', NOW + 60, NOW)).toBe(true);
    expect(await store.checkAndStore('k', NOW + 120, NOW + 60)).toBe(true);
    expect(await store.checkAndStore('k', NOW + 120, NOW + 61)).toBe(false);
  });

  it('lets exactly one of 50 concurrent calls with one key win (RFC 9449 §11.1)', async () => {
    const store = memoryReplayStore();
    const results = await Promise.all(
      Array.from({ length: 50 }, () => store.checkAndStore('k', NOW + 60, NOW)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('fails closed with temporarily_unavailable and Retry-After when full of live keys, never forgetting one', async () => {
    const store = memoryReplayStore({ maxEntries: 3 });
    for (const key of ['a', 'b', 'c']) expect(await store.checkAndStore(key, NOW + 30, NOW)).toBe(true);
    const error = await store.checkAndStore('d', NOW + 30, NOW + 10).catch((e: unknown) => e);
    expect(isOAuthError(error) && error.code).toBe('temporarily_unavailable');
    expect(isOAuthError(error) && error.status).toBe(503);
    expect(isOAuthError(error) && error.headers['retry-after']).toBe('20');
    // The keys it holds are still refused: a full store never lets a replay through.
    expect(await store.checkAndStore('a', NOW + 30, NOW + 10)).toBe(false);
  });

  it('purges expired keys when full, making room again', async () => {
    const store = memoryReplayStore({ maxEntries: 2 });
    await store.checkAndStore('a', NOW + 10, NOW);
    await store.checkAndStore('b', NOW + 100, NOW);
    expect(await store.checkAndStore('c', NOW + 100, NOW + 11)).toBe(true);
    expect(await store.checkAndStore('b', NOW + 100, NOW + 11)).toBe(false);
  });
});

describe('replayKey', () => {
  it('is the purpose and a 43-character digest, whatever the length of the parts', async () => {
    const key = await replayKey('pkj', ['client', 'x'.repeat(10_000)]);
    expect(key).toMatch(/^pkj:[A-Za-z0-9_-]{43}$/);
  });

  it('keeps parts apart (a + bc differs from ab + c) and purposes apart', async () => {
    expect(await replayKey('pkj', ['a', 'bc'])).not.toBe(await replayKey('pkj', ['ab', 'c']));
    expect(await replayKey('pkj', ['a', 'b'])).not.toBe(await replayKey('dpop', ['a', 'b']));
    expect(await replayKey('pkj', ['a', 'b'])).toBe(await replayKey('pkj', ['a', 'b']));
  });
});
