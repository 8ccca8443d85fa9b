/**
 * The kit's tests of `deleteExpired`: what goes, what stays, and the tombstones that must outlive
 * what they describe.
 * @module
 */
import { CODE_TOMBSTONE_SECONDS } from '../../storage/types.js';
import { fixtures, NOW } from './fixtures.js';
import { rotationOf } from './grants.js';
import type { Kit } from './runner.js';

/** Registers the tests of housekeeping. */
export function expirySuite(kit: Kit): void {
  const { describe, expect } = kit.runner;
  describe('expiry and housekeeping (FLT-05)', () => {
    kit.test(
      'deleteExpired removes what has expired in every aggregate and keeps the rest',
      async ({ storage }) => {
        const later = NOW + 10 ** 7;
        const pending = fixtures.pending({ expiresAt: NOW + 5 });
        await storage.interactions.create(pending);
        const unusedClient = fixtures.client({ expiresAt: NOW + 5 });
        const lastingClient = fixtures.client();
        await storage.clients.create(unusedClient);
        await storage.clients.create(lastingClient);
        const stale = await kit.seedGrant(storage, { expiresAt: NOW + 100 });
        const key = fixtures.signingKey({ expiresAt: NOW + 50 });
        await storage.keys.add(key);
        const keep = await kit.seedGrant(storage, { expiresAt: later + 10 ** 6 });
        const rotation = rotationOf(keep.grant, keep.refreshToken);
        const lasting = { ...rotation, successor: { ...rotation.successor, expiresAt: later + 100 } };
        expect(await storage.grants.rotateRefreshToken(lasting)).toEqual({ outcome: 'rotated' });

        expect(await storage.deleteExpired(later)).toBeGreaterThan(0);
        expect(await storage.interactions.get(pending.idHash, NOW)).toBeNull();
        // clearExpiry ignores expiry: false means the record is gone, not merely hidden.
        expect(await storage.clients.clearExpiry(unusedClient.clientId)).toBe(false);
        expect(await storage.clients.clearExpiry(lastingClient.clientId)).toBe(true);
        expect(await storage.grants.get(stale.grant.grantId)).toBeNull();
        expect((await storage.keys.list()).some((k) => k.kid === key.kid)).toBe(false);
        expect(await storage.grants.get(keep.grant.grantId)).not.toBeNull();
        expect(await storage.grants.getRefreshToken(lasting.successor.tokenHash, later)).not.toBeNull();
        // The rotated-out token expired: gone, while its successor lives on.
        expect(await storage.grants.getRefreshToken(keep.refreshToken.tokenHash, NOW)).toBeNull();
      },
    );

    kit.test(
      'a rotated refresh token is kept until its own expiry (its reuse must still be detected), then deleted',
      async ({ storage }) => {
        const { grant, refreshToken } = await kit.seedGrant(storage);
        const rotation = rotationOf(grant, refreshToken);
        const lasting = {
          ...rotation,
          successor: { ...rotation.successor, expiresAt: refreshToken.expiresAt + 10 ** 6 },
        };
        expect(await storage.grants.rotateRefreshToken(lasting)).toEqual({ outcome: 'rotated' });
        await storage.deleteExpired(refreshToken.expiresAt - 1);
        expect(
          (await storage.grants.getRefreshToken(refreshToken.tokenHash, refreshToken.expiresAt - 1))
            ?.rotatedAt,
        ).toBe(NOW);
        await storage.deleteExpired(refreshToken.expiresAt);
        expect(await storage.grants.getRefreshToken(refreshToken.tokenHash, NOW)).toBeNull();
        expect(
          await storage.grants.getRefreshToken(lasting.successor.tokenHash, refreshToken.expiresAt),
        ).not.toBeNull();
      },
    );

    kit.test(
      'a grant left without any unexpired token goes, long before its absolute expiry; one with a live token stays',
      async ({ storage }) => {
        const idle = await kit.seedGrant(storage, { expiresAt: NOW + 10 ** 8 });
        const active = await kit.seedGrant(storage, { expiresAt: NOW + 10 ** 8 });
        const rotation = rotationOf(active.grant, active.refreshToken);
        const lasting = { ...rotation, successor: { ...rotation.successor, expiresAt: NOW + 10 ** 7 } };
        expect(await storage.grants.rotateRefreshToken(lasting)).toEqual({ outcome: 'rotated' });
        const after = Math.max(idle.accessToken.expiresAt, idle.refreshToken.expiresAt);
        expect(await storage.deleteExpired(after)).toBeGreaterThan(0);
        expect(await storage.grants.get(idle.grant.grantId)).toBeNull();
        expect(await storage.grants.get(active.grant.grantId)).not.toBeNull();
        expect(await storage.grants.getRefreshToken(lasting.successor.tokenHash, after)).not.toBeNull();
      },
    );

    kit.test(
      `a revoked grant stays readable as revoked for ${CODE_TOMBSTONE_SECONDS} s, then goes with its tokens`,
      async ({ storage }) => {
        const { grant, accessToken } = await kit.seedGrant(storage);
        await storage.grants.revoke(grant.grantId, NOW);
        await storage.deleteExpired(NOW + CODE_TOMBSTONE_SECONDS - 1);
        expect((await storage.grants.get(grant.grantId))?.revokedAt).toBe(NOW);
        await storage.deleteExpired(NOW + CODE_TOMBSTONE_SECONDS);
        expect(await storage.grants.get(grant.grantId)).toBeNull();
        expect(await storage.grants.getAccessToken(accessToken.tokenHash, NOW)).toBeNull();
      },
    );
  });
}
