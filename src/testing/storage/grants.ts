/**
 * The kit's tests of the grants aggregate (`GrantStore`): grants, their access tokens, their
 * refresh tokens and rotation, revocation that wins.
 * @module
 */
import type {
  AccessTokenRecord,
  GrantRecord,
  RefreshRotation,
  RefreshTokenRecord,
  Storage,
} from '../../storage/types.js';
import { fixtures, NOW, randomHash, randomId } from './fixtures.js';
import type { Kit } from './runner.js';

/** A rotation of `token` to a fresh successor, at `now`. */
export function rotationOf(
  grant: GrantRecord,
  token: RefreshTokenRecord,
  now = NOW,
  sealedSuccessor?: string,
): RefreshRotation {
  return {
    tokenHash: token.tokenHash,
    successor: fixtures.refreshToken(grant, { issuedAt: now }),
    accessToken: fixtures.accessToken(grant, { issuedAt: now }),
    ...(sealedSuccessor === undefined ? {} : { sealedSuccessor }),
    now,
  };
}

/** Registers the tests of the grants aggregate. */
export function grantsSuite(kit: Kit): void {
  const { describe, expect } = kit.runner;

  describe('grants and access tokens (RFC 6749 §1.3, §10.4; RFC 7009 §2.1)', () => {
    kit.test('lists only the active grants of a user, newest first', async ({ storage }) => {
      const userId = randomId('user');
      const old = await kit.seedGrant(storage, { userId, createdAt: NOW - 100 });
      const recent = await kit.seedGrant(storage, { userId, createdAt: NOW - 10 });
      const revoked = await kit.seedGrant(storage, { userId, createdAt: NOW - 5 });
      await kit.seedGrant(storage, { userId, createdAt: NOW - 200, expiresAt: NOW - 1 });
      await kit.seedGrant(storage);
      await storage.grants.revoke(revoked.grant.grantId, NOW);
      const listed = await storage.grants.listByUser(userId, NOW);
      expect(listed.map((g) => g.grantId)).toEqual([recent.grant.grantId, old.grant.grantId]);
      expect(await storage.grants.get(randomId('grant'))).toBeNull();
    });

    kit.test(
      'revoking a grant revokes every token it issued; revoking again or an unknown id is false',
      async ({ storage }) => {
        const { grant, accessToken, refreshToken } = await kit.seedGrant(storage);
        const extra = fixtures.accessToken(grant);
        expect(await storage.grants.addAccessToken(extra, NOW)).toBe(true);
        expect(await storage.grants.revoke(grant.grantId, NOW + 5)).toBe(true);
        expect(await storage.grants.revoke(grant.grantId, NOW + 6)).toBe(false);
        expect(await storage.grants.getAccessToken(accessToken.tokenHash, NOW + 5)).toBeNull();
        expect(await storage.grants.getAccessToken(extra.tokenHash, NOW + 5)).toBeNull();
        expect(await storage.grants.getRefreshToken(refreshToken.tokenHash, NOW + 5)).toBeNull();
        expect((await storage.grants.get(grant.grantId))?.revokedAt).toBe(NOW + 5);
        expect(await storage.grants.listByUser(grant.userId, NOW + 5)).toHaveLength(0);
        expect(
          (await storage.grants.rotateRefreshToken(rotationOf(grant, refreshToken, NOW + 5))).outcome,
        ).toBe('invalid');
        expect(await storage.grants.revoke(randomId('grant'), NOW)).toBe(false);
      },
    );

    kit.test(
      'an access token expires at exactly its expiresAt and can be revoked alone',
      async ({ storage }) => {
        const { grant, accessToken } = await kit.seedGrant(storage);
        expect(
          await storage.grants.getAccessToken(accessToken.tokenHash, accessToken.expiresAt - 1),
        ).not.toBeNull();
        expect(await storage.grants.getAccessToken(accessToken.tokenHash, accessToken.expiresAt)).toBeNull();
        const second = fixtures.accessToken(grant);
        expect(await storage.grants.addAccessToken(second, NOW)).toBe(true);
        expect(await storage.grants.revokeAccessToken(second.tokenHash, NOW)).toBe(true);
        expect(await storage.grants.revokeAccessToken(second.tokenHash, NOW)).toBe(false);
        expect(await storage.grants.getAccessToken(second.tokenHash, NOW)).toBeNull();
        expect(await storage.grants.getAccessToken(accessToken.tokenHash, NOW)).not.toBeNull();
        expect(await storage.grants.revokeAccessToken(randomHash(), NOW)).toBe(false);
      },
    );

    // An adapter may keep what it read (the SQLite one keeps access-token records per connection):
    // a token read a moment ago, on either instance, must be refused as soon as a revocation on
    // either instance has returned.
    for (const [how, revoke] of [
      [
        'the token alone',
        (s: Storage, _grant: GrantRecord, token: AccessTokenRecord) =>
          s.grants.revokeAccessToken(token.tokenHash, NOW + 1),
      ],
      ['its grant', (s: Storage, grant: GrantRecord) => s.grants.revoke(grant.grantId, NOW + 1)],
      ['its client, deleted', (s: Storage, grant: GrantRecord) => s.clients.delete(grant.clientId, NOW + 1)],
    ] as const) {
      kit.test(
        `an access token read just before is refused by both instances once ${how} is revoked, on either (RFC 7009 §2.1)`,
        async ({ storage, second }) => {
          for (const [revoker, other] of [
            [storage, second],
            [second, storage],
          ] as const) {
            const client = fixtures.client();
            await storage.clients.create(client);
            const { grant, accessToken } = await kit.seedGrant(storage, { clientId: client.clientId });
            const untouched = await kit.seedGrant(storage);
            for (const instance of [storage, second, storage, second]) {
              expect(await instance.grants.getAccessToken(accessToken.tokenHash, NOW + 1)).toEqual(
                accessToken,
              );
              expect(await instance.grants.getAccessToken(untouched.accessToken.tokenHash, NOW + 1)).toEqual(
                untouched.accessToken,
              );
            }
            expect(await revoke(revoker, grant, accessToken)).toBe(true);
            for (const instance of [revoker, other]) {
              expect(await instance.grants.getAccessToken(accessToken.tokenHash, NOW + 1)).toBeNull();
              expect(await instance.grants.getAccessToken(untouched.accessToken.tokenHash, NOW + 1)).toEqual(
                untouched.accessToken,
              );
            }
          }
        },
      );
    }

    kit.test(
      'an access token read while active is refused from its expiry on, however often it was read before',
      async ({ storage, second }) => {
        const { accessToken } = await kit.seedGrant(storage);
        for (const instance of [storage, second, storage]) {
          expect(
            await instance.grants.getAccessToken(accessToken.tokenHash, accessToken.expiresAt - 1),
          ).toEqual(accessToken);
        }
        for (const instance of [storage, second]) {
          expect(
            await instance.grants.getAccessToken(accessToken.tokenHash, accessToken.expiresAt),
          ).toBeNull();
        }
      },
    );

    kit.test(
      'addAccessToken refuses, writing nothing, a grant that is revoked, past its expiry or unknown',
      async ({ storage }) => {
        const revoked = await kit.seedGrant(storage);
        await storage.grants.revoke(revoked.grant.grantId, NOW);
        const late = fixtures.accessToken(revoked.grant);
        expect(await storage.grants.addAccessToken(late, NOW)).toBe(false);
        expect(await storage.grants.getAccessToken(late.tokenHash, NOW)).toBeNull();
        const ending = await kit.seedGrant(storage, { expiresAt: NOW + 10 });
        expect(await storage.grants.addAccessToken(fixtures.accessToken(ending.grant), NOW + 10)).toBe(false);
        expect(await storage.grants.addAccessToken(fixtures.accessToken(fixtures.grant()), NOW)).toBe(false);
      },
    );
  });

  describe('refresh tokens (RFC 6749 §6, RFC 9700 §4.14.2)', () => {
    kit.test(
      'rotation marks the presented token, stores the successor and its access token',
      async ({ storage }) => {
        const { grant, refreshToken } = await kit.seedGrant(storage);
        const rotation = rotationOf(grant, refreshToken, NOW + 1, 'sealed');
        expect(await storage.grants.rotateRefreshToken(rotation)).toEqual({ outcome: 'rotated' });
        const old = await storage.grants.getRefreshToken(refreshToken.tokenHash, NOW + 1);
        expect(old?.rotatedAt).toBe(NOW + 1);
        expect(old?.successorHash).toBe(rotation.successor.tokenHash);
        expect(old?.sealedSuccessor).toBe('sealed');
        expect(await storage.grants.getRefreshToken(rotation.successor.tokenHash, NOW + 1)).toEqual(
          rotation.successor,
        );
        expect(await storage.grants.getAccessToken(rotation.accessToken.tokenHash, NOW + 1)).toEqual(
          rotation.accessToken,
        );
      },
    );

    kit.test(
      'a rotated token reports already_rotated with the facts of the rotation, and writes and revokes nothing',
      async ({ storage }) => {
        const { grant, refreshToken, accessToken } = await kit.seedGrant(storage);
        const first = rotationOf(grant, refreshToken, NOW, 'sealed-r2');
        await storage.grants.rotateRefreshToken(first);
        const again = rotationOf(grant, refreshToken, NOW + 100);
        expect(await storage.grants.rotateRefreshToken(again)).toEqual({
          outcome: 'already_rotated',
          grantId: grant.grantId,
          rotatedAt: NOW,
          successorHash: first.successor.tokenHash,
          sealedSuccessor: 'sealed-r2',
        });
        expect(await storage.grants.getRefreshToken(again.successor.tokenHash, NOW + 100)).toBeNull();
        expect(await storage.grants.getAccessToken(again.accessToken.tokenHash, NOW + 100)).toBeNull();
        // Reuse is the grant's to decide: storage revoked nothing.
        expect((await storage.grants.get(grant.grantId))?.revokedAt).toBeUndefined();
        expect(await storage.grants.getAccessToken(accessToken.tokenHash, NOW + 100)).not.toBeNull();
        expect(await storage.grants.getRefreshToken(first.successor.tokenHash, NOW + 100)).not.toBeNull();
      },
    );

    kit.test(
      'keeps the DPoP binding (dpopJkt) of tokens through redeem, addAccessToken and rotation (RFC 9449 §5, §6)',
      async ({ storage }) => {
        const jkt = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs';
        const code = fixtures.code();
        await storage.codes.create(code);
        const grant = fixtures.grant({ grantId: code.grantId });
        const accessToken = fixtures.accessToken(grant, { dpopJkt: jkt });
        const refreshToken = fixtures.refreshToken(grant, { dpopJkt: jkt });
        const redeemed = await storage.codes.redeem({
          codeHash: code.codeHash,
          grant,
          accessToken,
          refreshToken,
          now: code.createdAt,
        });
        expect(redeemed).toEqual({ outcome: 'redeemed' });
        expect((await storage.grants.getAccessToken(accessToken.tokenHash, NOW))?.dpopJkt).toBe(jkt);
        expect((await storage.grants.getRefreshToken(refreshToken.tokenHash, NOW))?.dpopJkt).toBe(jkt);
        const added = fixtures.accessToken(grant, { dpopJkt: jkt });
        expect(await storage.grants.addAccessToken(added, NOW)).toBe(true);
        expect(await storage.grants.getAccessToken(added.tokenHash, NOW)).toEqual(added);
        const rotation: RefreshRotation = {
          tokenHash: refreshToken.tokenHash,
          successor: fixtures.refreshToken(grant, { issuedAt: NOW + 1, dpopJkt: jkt }),
          accessToken: fixtures.accessToken(grant, { issuedAt: NOW + 1, dpopJkt: jkt }),
          now: NOW + 1,
        };
        expect(await storage.grants.rotateRefreshToken(rotation)).toEqual({ outcome: 'rotated' });
        expect(await storage.grants.getRefreshToken(rotation.successor.tokenHash, NOW + 1)).toEqual(
          rotation.successor,
        );
        expect(await storage.grants.getAccessToken(rotation.accessToken.tokenHash, NOW + 1)).toEqual(
          rotation.accessToken,
        );
        // A bearer token stays unbound: no dpopJkt, not even undefined.
        const bearer = await kit.seedGrant(storage);
        const read = await storage.grants.getAccessToken(bearer.accessToken.tokenHash, NOW);
        expect(read !== null && 'dpopJkt' in read).toBe(false);
      },
    );

    kit.test('a rotation without a sealed successor reports none', async ({ storage }) => {
      const { grant, refreshToken } = await kit.seedGrant(storage);
      await storage.grants.rotateRefreshToken(rotationOf(grant, refreshToken));
      const again = await storage.grants.rotateRefreshToken(rotationOf(grant, refreshToken, NOW + 1));
      expect(again.outcome).toBe('already_rotated');
      if (again.outcome === 'already_rotated') expect(again.sealedSuccessor).toBeUndefined();
    });

    kit.test(
      'an expired, revoked or unknown token, or one of a grant past its expiry, does not rotate',
      async ({ storage }) => {
        const { grant, refreshToken } = await kit.seedGrant(storage);
        const expired = rotationOf(grant, refreshToken, refreshToken.expiresAt);
        expect(await storage.grants.rotateRefreshToken(expired)).toEqual({ outcome: 'invalid' });
        expect(await storage.grants.getRefreshToken(expired.successor.tokenHash, NOW)).toBeNull();
        expect(
          await storage.grants.getRefreshToken(refreshToken.tokenHash, refreshToken.expiresAt),
        ).toBeNull();
        const unknown = { ...rotationOf(grant, refreshToken), tokenHash: randomHash() };
        expect(await storage.grants.rotateRefreshToken(unknown)).toEqual({ outcome: 'invalid' });
        const ending = await kit.seedGrant(storage, { expiresAt: NOW + 10 });
        expect(
          await storage.grants.rotateRefreshToken(rotationOf(ending.grant, ending.refreshToken, NOW + 10)),
        ).toEqual({ outcome: 'invalid' });
        // The token itself lives on, but its grant has reached its absolute expiry.
        expect(await storage.grants.getRefreshToken(ending.refreshToken.tokenHash, NOW + 9)).not.toBeNull();
        expect(await storage.grants.getRefreshToken(ending.refreshToken.tokenHash, NOW + 10)).toBeNull();
      },
    );
  });
}
