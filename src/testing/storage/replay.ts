/**
 * The kit's tests of the replay aggregate (`ReplayStore`): one-time values accepted once until
 * they expire, and purged by the housekeeping. The race is in `races.ts`.
 * @module
 */
import { NOW, randomHash } from './fixtures.js';
import type { Kit } from './runner.js';

/** A key shaped like the server's: a namespace and a base64url SHA-256 digest. */
export const replayKeyFixture = (): string => `pkj:${randomHash()}`;

/** Registers the tests of the replay aggregate. */
export function replaySuite(kit: Kit): void {
  const { describe, expect } = kit.runner;
  describe('replay keys (RFC 7523 §3, RFC 9449 §11.1)', () => {
    kit.test(
      'checkAndStore accepts a key once while it is unexpired, and other keys independently',
      async ({ storage }) => {
        const key = replayKeyFixture();
        expect(await storage.replay.checkAndStore(key, NOW + 60, NOW)).toBe(true);
        expect(await storage.replay.checkAndStore(key, NOW + 60, NOW)).toBe(false);
        expect(await storage.replay.checkAndStore(key, NOW + 120, NOW + 59)).toBe(false);
        expect(await storage.replay.checkAndStore(replayKeyFixture(), NOW + 60, NOW)).toBe(true);
      },
    );

    kit.test(
      'a key whose expiresAt is at or before now counts as absent: it is stored again, until its new expiry',
      async ({ storage }) => {
        const key = replayKeyFixture();
        expect(await storage.replay.checkAndStore(key, NOW + 60, NOW)).toBe(true);
        expect(await storage.replay.checkAndStore(key, NOW + 120, NOW + 60)).toBe(true);
        expect(await storage.replay.checkAndStore(key, NOW + 200, NOW + 119)).toBe(false);
      },
    );

    kit.test('deleteExpired purges expired replay keys and keeps unexpired ones', async ({ storage }) => {
      const expired = replayKeyFixture();
      const live = replayKeyFixture();
      expect(await storage.replay.checkAndStore(expired, NOW + 5, NOW)).toBe(true);
      expect(await storage.replay.checkAndStore(live, NOW + 50, NOW)).toBe(true);
      expect(await storage.deleteExpired(NOW + 10)).toBeGreaterThan(0);
      // Asked with an earlier clock, a kept key is still a replay; a purged one is new again.
      expect(await storage.replay.checkAndStore(expired, NOW + 5, NOW)).toBe(true);
      expect(await storage.replay.checkAndStore(live, NOW + 50, NOW)).toBe(false);
    });
  });
}
