/**
 * The kit's tests of the clients aggregate (`ClientStore`).
 * @module
 */
import { fixtures, NOW, randomHash } from './fixtures.js';
import type { Kit } from './runner.js';

/** Registers the tests of the clients aggregate. */
export function clientsSuite(kit: Kit): void {
  const { describe, expect } = kit.runner;
  describe('clients (RFC 7591 §3.2.1)', () => {
    kit.test('stores a client and reads it back unchanged, secret hash included', async ({ storage }) => {
      const client = fixtures.client({ secretHash: randomHash() });
      await storage.clients.create(client);
      expect(await storage.clients.get(client.clientId, NOW)).toEqual(client);
      expect(await storage.clients.get(fixtures.client().clientId, NOW)).toBeNull();
    });

    kit.test('refuses a duplicate client id by throwing', async ({ storage }) => {
      const client = fixtures.client();
      await storage.clients.create(client);
      await kit.rejects(storage.clients.create(client));
    });

    kit.test('hides a client at exactly its expiresAt, and keeps one without expiry', async ({ storage }) => {
      const expiring = fixtures.client({ expiresAt: NOW + 100 });
      const lasting = fixtures.client();
      await storage.clients.create(expiring);
      await storage.clients.create(lasting);
      expect(await storage.clients.get(expiring.clientId, NOW + 99)).not.toBeNull();
      expect(await storage.clients.get(expiring.clientId, NOW + 100)).toBeNull();
      expect(await storage.clients.get(lasting.clientId, NOW + 10 ** 8)).not.toBeNull();
    });

    kit.test('clearExpiry keeps a used client for good; false for an unknown one', async ({ storage }) => {
      const client = fixtures.client({ expiresAt: NOW + 100 });
      await storage.clients.create(client);
      expect(await storage.clients.clearExpiry(client.clientId)).toBe(true);
      const kept = await storage.clients.get(client.clientId, NOW + 10 ** 6);
      expect(kept?.expiresAt).toBeUndefined();
      expect(kept?.metadata).toEqual(client.metadata);
      await storage.deleteExpired(NOW + 10 ** 6);
      expect(await storage.clients.get(client.clientId, NOW + 10 ** 6)).not.toBeNull();
      expect(await storage.clients.clearExpiry(fixtures.client().clientId)).toBe(false);
    });

    kit.test('deleting a client revokes its grants and forgets its consents', async ({ storage }) => {
      const client = fixtures.client();
      await storage.clients.create(client);
      const { grant, accessToken, refreshToken } = await kit.seedGrant(storage, {
        clientId: client.clientId,
      });
      await storage.consents.save({
        userId: grant.userId,
        clientId: client.clientId,
        scope: ['openid'],
        resources: [],
        createdAt: NOW,
        updatedAt: NOW,
      });
      expect(await storage.clients.delete(client.clientId, NOW)).toBe(true);
      expect(await storage.clients.get(client.clientId, NOW)).toBeNull();
      expect(await storage.grants.getAccessToken(accessToken.tokenHash, NOW)).toBeNull();
      expect(await storage.grants.getRefreshToken(refreshToken.tokenHash, NOW)).toBeNull();
      expect((await storage.grants.get(grant.grantId))?.revokedAt).toBe(NOW);
      expect(await storage.consents.get(grant.userId, client.clientId)).toBeNull();
      expect(await storage.clients.delete(client.clientId, NOW)).toBe(false);
    });
  });
}
