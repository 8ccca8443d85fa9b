/**
 * The kit's tests of the codes aggregate (`CodeStore`): single use, redemption all or nothing,
 * tombstones that outlive the code's expiry.
 * @module
 */
import { CODE_TOMBSTONE_SECONDS, type Storage } from '../../storage/types.js';
import { fixtures, NOW, randomId } from './fixtures.js';
import type { Kit } from './runner.js';

/** Registers the tests of the codes aggregate. */
export function codesSuite(kit: Kit): void {
  const { describe, expect } = kit.runner;

  /** A stored code and everything a redemption of it writes. */
  async function storedCode(storage: Storage, expiresAt = NOW + 60) {
    const code = fixtures.code({ expiresAt });
    await storage.codes.create(code);
    const grant = fixtures.grantOf(code);
    const accessToken = fixtures.accessToken(grant);
    const refreshToken = fixtures.refreshToken(grant);
    return { code, grant, accessToken, refreshToken };
  }

  describe('authorization codes (RFC 6749 §4.1.2, §10.5)', () => {
    kit.test('stores a code with all its bindings and reads it back unchanged', async ({ storage }) => {
      const { code } = await storedCode(storage);
      expect(await storage.codes.get(code.codeHash, NOW)).toEqual(code);
    });

    kit.test(
      'redeem consumes the code and stores the grant with its access and refresh tokens at once',
      async ({ storage }) => {
        const { code, grant, accessToken, refreshToken } = await storedCode(storage);
        const result = await storage.codes.redeem({
          codeHash: code.codeHash,
          grant,
          accessToken,
          refreshToken,
          now: NOW + 1,
        });
        expect(result).toEqual({ outcome: 'redeemed' });
        expect((await storage.codes.get(code.codeHash, NOW + 1))?.consumedAt).toBe(NOW + 1);
        expect(await storage.grants.get(grant.grantId)).toEqual(grant);
        expect(await storage.grants.getAccessToken(accessToken.tokenHash, NOW + 1)).toEqual(accessToken);
        // The refresh token carries the grant's auth_time, for an ID token minted on refresh.
        expect(await storage.grants.getRefreshToken(refreshToken.tokenHash, NOW + 1)).toEqual(refreshToken);
        expect((await storage.grants.listByUser(grant.userId, NOW + 1)).map((g) => g.grantId)).toEqual([
          grant.grantId,
        ]);
      },
    );

    kit.test('redeem without a refresh token stores the grant and its access token', async ({ storage }) => {
      const { code, grant, accessToken } = await storedCode(storage);
      expect(await storage.codes.redeem({ codeHash: code.codeHash, grant, accessToken, now: NOW })).toEqual({
        outcome: 'redeemed',
      });
      expect(await storage.grants.getAccessToken(accessToken.tokenHash, NOW)).toEqual(accessToken);
    });

    kit.test(
      'a second redemption is a replay naming the grant, writes nothing and revokes nothing',
      async ({ storage }) => {
        const { code, grant, accessToken, refreshToken } = await storedCode(storage);
        await storage.codes.redeem({ codeHash: code.codeHash, grant, accessToken, refreshToken, now: NOW });
        const again = fixtures.accessToken(grant);
        const replay = await storage.codes.redeem({
          codeHash: code.codeHash,
          grant,
          accessToken: again,
          now: NOW + 5,
        });
        expect(replay).toEqual({ outcome: 'replayed', grantId: code.grantId, consumedAt: NOW });
        expect(await storage.grants.getAccessToken(again.tokenHash, NOW + 5)).toBeNull();
        // Revoking is the grant's decision, not the storage's.
        expect(await storage.grants.getAccessToken(accessToken.tokenHash, NOW + 5)).not.toBeNull();
      },
    );

    kit.test(
      'an unknown code, or one expired unconsumed, is invalid: null to read, and nothing written',
      async ({ storage }) => {
        const { code, grant, accessToken } = await storedCode(storage, NOW + 60);
        expect(await storage.codes.get(code.codeHash, NOW + 59)).not.toBeNull();
        expect(await storage.codes.get(code.codeHash, NOW + 60)).toBeNull();
        expect(
          await storage.codes.redeem({ codeHash: code.codeHash, grant, accessToken, now: NOW + 60 }),
        ).toEqual({
          outcome: 'invalid',
        });
        expect(await storage.grants.get(grant.grantId)).toBeNull();
        expect(await storage.grants.getAccessToken(accessToken.tokenHash, NOW)).toBeNull();
        const unknown = fixtures.code();
        expect(await storage.codes.get(unknown.codeHash, NOW)).toBeNull();
        const other = fixtures.grantOf(unknown);
        expect(
          await storage.codes.redeem({
            codeHash: unknown.codeHash,
            grant: other,
            accessToken: fixtures.accessToken(other),
            now: NOW,
          }),
        ).toEqual({ outcome: 'invalid' });
      },
    );

    kit.test(
      "a redemption under another grant id than the code's is invalid and leaves the code usable",
      async ({ storage }) => {
        const { code, grant, accessToken } = await storedCode(storage);
        const stranger = { ...grant, grantId: randomId('grant') };
        const wrong = {
          codeHash: code.codeHash,
          grant: stranger,
          accessToken: { ...accessToken, grantId: stranger.grantId },
          now: NOW,
        };
        expect(await storage.codes.redeem(wrong)).toEqual({ outcome: 'invalid' });
        expect(await storage.grants.get(stranger.grantId)).toBeNull();
        expect(await storage.codes.redeem({ codeHash: code.codeHash, grant, accessToken, now: NOW })).toEqual(
          {
            outcome: 'redeemed',
          },
        );
      },
    );

    kit.test(
      `TOK-13 a consumed code is kept past its expiry for ${CODE_TOMBSTONE_SECONDS} s, through cleanup: a late replay still names its grant`,
      async ({ storage }) => {
        const { code, grant, accessToken } = await storedCode(storage, NOW + 60);
        await storage.codes.redeem({ codeHash: code.codeHash, grant, accessToken, now: NOW + 1 });
        const late = NOW + 60 + CODE_TOMBSTONE_SECONDS - 1;
        await storage.deleteExpired(late);
        expect((await storage.codes.get(code.codeHash, late))?.consumedAt).toBe(NOW + 1);
        const replay = await storage.codes.redeem({
          codeHash: code.codeHash,
          grant,
          accessToken: fixtures.accessToken(grant),
          now: late,
        });
        expect(replay).toEqual({ outcome: 'replayed', grantId: code.grantId, consumedAt: NOW + 1 });
        const gone = NOW + 60 + CODE_TOMBSTONE_SECONDS;
        expect(await storage.codes.get(code.codeHash, gone)).toBeNull();
        await storage.deleteExpired(gone);
        expect(await storage.codes.get(code.codeHash, NOW + 1)).toBeNull();
      },
    );
  });
}
