/**
 * The kit's tests of the signing keys aggregate (`SigningKeyStore`).
 * @module
 */
import { fixtures, NOW } from './fixtures.js';
import type { Kit } from './runner.js';

/** Registers the tests of the signing keys aggregate. */
export function keysSuite(kit: Kit): void {
  const { describe, expect } = kit.runner;
  describe('signing keys (RFC 7517)', () => {
    kit.test(
      'adds keys, lists them in creation order, updates them, and refuses a duplicate kid',
      async ({ storage }) => {
        const first = fixtures.signingKey({ createdAt: NOW - 10 });
        const second = fixtures.signingKey({ alg: 'RS256', createdAt: NOW });
        await storage.keys.add(first);
        await storage.keys.add(second);
        const mine = (await storage.keys.list()).filter((k) => k.kid === first.kid || k.kid === second.kid);
        expect(mine).toEqual([first, second]);
        const retired = { ...first, retiresAt: NOW, expiresAt: NOW + 3600 };
        expect(await storage.keys.update(retired)).toBe(true);
        expect((await storage.keys.list()).find((k) => k.kid === first.kid)).toEqual(retired);
        expect(await storage.keys.update(fixtures.signingKey())).toBe(false);
        await kit.rejects(storage.keys.add(first));
      },
    );
  });
}
