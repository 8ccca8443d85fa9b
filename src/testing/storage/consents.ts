/**
 * The kit's tests of the consents aggregate (`ConsentStore`).
 * @module
 */
import { NOW, randomId } from './fixtures.js';
import type { Kit } from './runner.js';

/** Registers the tests of the consents aggregate. */
export function consentsSuite(kit: Kit): void {
  const { describe, expect } = kit.runner;
  describe('consents (RFC 6749 §10.2)', () => {
    kit.test('saves, replaces and forgets the consent of one user for one client', async ({ storage }) => {
      const userId = randomId('user');
      const clientId = randomId('client');
      const consent = {
        userId,
        clientId,
        scope: ['openid'],
        resources: ['https://as.example'],
        createdAt: NOW,
        updatedAt: NOW,
      };
      expect(await storage.consents.get(userId, clientId)).toBeNull();
      await storage.consents.save(consent);
      expect(await storage.consents.get(userId, clientId)).toEqual(consent);
      const wider = { ...consent, scope: ['openid', 'email'], updatedAt: NOW + 1 };
      await storage.consents.save(wider);
      expect(await storage.consents.get(userId, clientId)).toEqual(wider);
      expect(await storage.consents.get(userId, randomId('client'))).toBeNull();
      expect(await storage.consents.delete(userId, clientId)).toBe(true);
      expect(await storage.consents.delete(userId, clientId)).toBe(false);
      expect(await storage.consents.get(userId, clientId)).toBeNull();
    });
  });
}
