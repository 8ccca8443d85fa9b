/**
 * The kit's tests of the interactions aggregate (`InteractionStore`): pending authorizations.
 * @module
 */
import { fixtures, NOW, randomHash } from './fixtures.js';
import type { Kit } from './runner.js';

/** Registers the tests of the interactions aggregate. */
export function interactionsSuite(kit: Kit): void {
  const { describe, expect } = kit.runner;
  describe('interactions: pending authorizations (RFC 6749 §4.1.1, §10.12)', () => {
    kit.test(
      'stores a pending authorization, binds it to one user, and never rebinds it to another',
      async ({ storage }) => {
        const pending = fixtures.pending();
        await storage.interactions.create(pending);
        expect(await storage.interactions.get(pending.idHash, NOW)).toEqual(pending);
        const csrfHash = randomHash();
        expect(
          await storage.interactions.bind(pending.idHash, { userId: 'u1', sessionId: 's1', csrfHash }, NOW),
        ).toBe(true);
        const bound = await storage.interactions.get(pending.idHash, NOW);
        expect(bound?.userId).toBe('u1');
        expect(bound?.sessionId).toBe('s1');
        expect(bound?.csrfHash).toBe(csrfHash);
        expect(
          await storage.interactions.bind(pending.idHash, { userId: 'u2', csrfHash: randomHash() }, NOW),
        ).toBe(false);
        const again = randomHash();
        expect(await storage.interactions.bind(pending.idHash, { userId: 'u1', csrfHash: again }, NOW)).toBe(
          true,
        );
        const rebound = await storage.interactions.get(pending.idHash, NOW);
        expect(rebound?.csrfHash).toBe(again);
        // Binding without a session keeps the one bound before.
        expect(rebound?.sessionId).toBe('s1');
      },
    );

    kit.test('a pending authorization expires at exactly its expiresAt', async ({ storage }) => {
      const pending = fixtures.pending({ expiresAt: NOW + 10 });
      await storage.interactions.create(pending);
      expect(await storage.interactions.get(pending.idHash, NOW + 9)).not.toBeNull();
      expect(await storage.interactions.get(pending.idHash, NOW + 10)).toBeNull();
      expect(
        await storage.interactions.bind(pending.idHash, { userId: 'u', csrfHash: randomHash() }, NOW + 10),
      ).toBe(false);
      expect(await storage.interactions.consume(pending.idHash, NOW + 10)).toBeNull();
    });

    kit.test('consume returns the record once; afterwards it is gone', async ({ storage }) => {
      const pending = fixtures.pending();
      await storage.interactions.create(pending);
      expect(await storage.interactions.consume(pending.idHash, NOW)).toEqual(pending);
      expect(await storage.interactions.consume(pending.idHash, NOW)).toBeNull();
      expect(await storage.interactions.get(pending.idHash, NOW)).toBeNull();
      expect(await storage.interactions.consume(randomHash(), NOW)).toBeNull();
    });
  });
}
