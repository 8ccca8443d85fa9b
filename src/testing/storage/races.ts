/**
 * The kit's race tests: each atomic step under parallel callers, split across two instances of
 * the adapter when the options give a second one. Every race asserts exactly one winner and that
 * every loser is told what happened (a replay, an earlier rotation), never merely "at most one".
 * @module
 */
import type { RefreshRotation, Storage } from '../../storage/types.js';
import { fixtures, NOW } from './fixtures.js';
import { rotationOf } from './grants.js';
import { replayKeyFixture } from './replay.js';
import type { Kit } from './runner.js';

/** Registers the race tests. */
export function racesSuite(kit: Kit): void {
  const { describe, expect } = kit.runner;
  const where = kit.twoInstances ? 'across two instances' : 'on one instance';
  const n = kit.parallel;
  const r = kit.parallelRefreshes;

  describe(`races ${where}`, () => {
    kit.test(
      `ATOMIC checkAndStore: ${n} parallel stores of one replay key, exactly one is told it is new (RFC 7523 §3, RFC 9449 §11.1)`,
      async ({ at }) => {
        const key = replayKeyFixture();
        const results = await Promise.all(
          Array.from({ length: n }, (_, i) => at(i).replay.checkAndStore(key, NOW + 60, NOW)),
        );
        expect(results.filter((fresh) => fresh)).toHaveLength(1);
        // Expired, the key is taken over again: by exactly one of the next racers.
        const again = await Promise.all(
          Array.from({ length: n }, (_, i) => at(i).replay.checkAndStore(key, NOW + 200, NOW + 60)),
        );
        expect(again.filter((fresh) => fresh)).toHaveLength(1);
      },
    );

    kit.test(
      `ATOMIC redeem: ${n} parallel redemptions of one code, exactly one wins and every other is told it is a replay of that grant (RFC 6749 §4.1.2)`,
      async ({ storage, at }) => {
        const code = fixtures.code();
        await storage.codes.create(code);
        const grant = fixtures.grantOf(code);
        const attempts = Array.from({ length: n }, () => ({
          codeHash: code.codeHash,
          grant,
          accessToken: fixtures.accessToken(grant),
          refreshToken: fixtures.refreshToken(grant),
          now: NOW,
        }));
        const results = await Promise.all(attempts.map((attempt, i) => at(i).codes.redeem(attempt)));
        const winners = results.flatMap((result, i) => (result.outcome === 'redeemed' ? [i] : []));
        expect(winners).toHaveLength(1);
        const replays = results.filter((result) => result.outcome === 'replayed');
        expect(replays).toEqual(
          Array.from({ length: n - 1 }, () => ({
            outcome: 'replayed',
            grantId: code.grantId,
            consumedAt: NOW,
          })),
        );
        // Only the winner's tokens exist, and each instance sees them.
        for (const [i, attempt] of attempts.entries()) {
          const won = i === winners[0];
          expect((await at(i + 1).grants.getAccessToken(attempt.accessToken.tokenHash, NOW)) !== null).toBe(
            won,
          );
          expect((await at(i).grants.getRefreshToken(attempt.refreshToken.tokenHash, NOW)) !== null).toBe(
            won,
          );
        }
      },
    );

    kit.test(
      `TOK-13 a replay racing the first redemption: once each loser revokes the grant it is told of, every token the winner got reads revoked on every instance`,
      async ({ storage, second, at }) => {
        const code = fixtures.code();
        await storage.codes.create(code);
        const grant = fixtures.grantOf(code);
        const attempts = Array.from({ length: 4 }, () => ({
          codeHash: code.codeHash,
          grant,
          accessToken: fixtures.accessToken(grant),
          refreshToken: fixtures.refreshToken(grant),
          now: NOW,
        }));
        await Promise.all(
          attempts.map(async (attempt, i) => {
            const result = await at(i).codes.redeem(attempt);
            // What the grant does with a replay.
            if (result.outcome === 'replayed') await at(i + 1).grants.revoke(result.grantId, NOW);
          }),
        );
        for (const instance of [storage, second]) {
          for (const attempt of attempts) {
            expect(await instance.grants.getAccessToken(attempt.accessToken.tokenHash, NOW)).toBeNull();
            expect(await instance.grants.getRefreshToken(attempt.refreshToken.tokenHash, NOW)).toBeNull();
          }
          expect((await instance.grants.get(grant.grantId))?.revokedAt).toBe(NOW);
        }
      },
    );

    kit.test(
      `ATOMIC consume: ${n} parallel consumers of one pending authorization, exactly one gets it`,
      async ({ storage, at }) => {
        const pending = fixtures.pending();
        await storage.interactions.create(pending);
        const results = await Promise.all(
          Array.from({ length: n }, (_, i) => at(i).interactions.consume(pending.idHash, NOW)),
        );
        expect(results.filter((record) => record !== null)).toEqual([pending]);
        expect(await storage.interactions.get(pending.idHash, NOW)).toBeNull();
      },
    );

    kit.test(
      `ATOMIC complete: ${n} parallel completions of one pending authorization, exactly one stores its code`,
      async ({ storage, at }) => {
        const pending = fixtures.pending();
        await storage.interactions.create(pending);
        const codes = Array.from({ length: n }, () => fixtures.code({ clientId: pending.request.clientId }));
        const results = await Promise.all(
          codes.map((code, i) => at(i).interactions.complete({ idHash: pending.idHash, code, now: NOW })),
        );
        const winners = results.flatMap((done, i) => (done ? [i] : []));
        expect(winners).toHaveLength(1);
        for (const [i, code] of codes.entries()) {
          expect((await at(i + 1).codes.get(code.codeHash, NOW)) !== null).toBe(i === winners[0]);
        }
        expect(await storage.interactions.get(pending.idHash, NOW)).toBeNull();
      },
    );

    kit.test(
      `ATOMIC rotate: ${r} parallel rotations of one refresh token, exactly one rotates and every other is told it was already rotated, with that successor (RFC 9700 §4.14.2)`,
      async ({ storage, at }) => {
        const { grant, refreshToken } = await kit.seedGrant(storage);
        const rotations = Array.from({ length: r }, (_, i) =>
          rotationOf(grant, refreshToken, NOW, `sealed-${i}`),
        );
        const results = await Promise.all(
          rotations.map((rotation, i) => at(i).grants.rotateRefreshToken(rotation)),
        );
        const winners = results.flatMap((result, i) => (result.outcome === 'rotated' ? [i] : []));
        expect(winners).toHaveLength(1);
        const winner = rotations[winners[0] ?? 0] as RefreshRotation;
        const told = results.filter((result) => result.outcome === 'already_rotated');
        expect(told).toEqual(
          Array.from({ length: r - 1 }, () => ({
            outcome: 'already_rotated',
            grantId: grant.grantId,
            rotatedAt: NOW,
            successorHash: winner.successor.tokenHash,
            sealedSuccessor: winner.sealedSuccessor,
          })),
        );
        // Exactly the winner's successor and access token exist; the grant is untouched.
        for (const [i, rotation] of rotations.entries()) {
          const won = rotation === winner;
          expect((await at(i + 1).grants.getRefreshToken(rotation.successor.tokenHash, NOW)) !== null).toBe(
            won,
          );
          expect((await at(i).grants.getAccessToken(rotation.accessToken.tokenHash, NOW)) !== null).toBe(won);
        }
        expect((await storage.grants.get(grant.grantId))?.revokedAt).toBeUndefined();
      },
    );

    kit.test(
      'a revocation racing rotations: afterwards the grant and every token of it read revoked on every instance, successors included',
      async ({ storage, second, at }) => {
        // Several rounds, the revocation started at a different point among the rotations each time.
        for (let round = 0; round < 6; round++) {
          const { grant, refreshToken, accessToken } = await kit.seedGrant(storage);
          const rotations: RefreshRotation[] = [];
          let current = refreshToken;
          // A chain: each rotation presents the successor of the one before, as a client would.
          const chain = async (instance: Storage) => {
            for (let step = 0; step < 3; step++) {
              const rotation = rotationOf(grant, current, NOW + step);
              rotations.push(rotation);
              const result = await instance.grants.rotateRefreshToken(rotation);
              if (result.outcome !== 'rotated') return;
              current = rotation.successor;
            }
          };
          const revoke = async () => {
            for (let wait = 0; wait < round; wait++) await Promise.resolve();
            await second.grants.revoke(grant.grantId, NOW + 1);
          };
          await Promise.all([chain(at(round)), revoke()]);
          for (const instance of [storage, second]) {
            expect((await instance.grants.get(grant.grantId))?.revokedAt).toBe(NOW + 1);
            expect(await instance.grants.getAccessToken(accessToken.tokenHash, NOW + 1)).toBeNull();
            expect(await instance.grants.getRefreshToken(refreshToken.tokenHash, NOW + 1)).toBeNull();
            for (const rotation of rotations) {
              expect(await instance.grants.getRefreshToken(rotation.successor.tokenHash, NOW + 1)).toBeNull();
              expect(
                await instance.grants.getAccessToken(rotation.accessToken.tokenHash, NOW + 1),
              ).toBeNull();
              expect(
                (await instance.grants.rotateRefreshToken(rotationOf(grant, rotation.successor, NOW + 2)))
                  .outcome,
              ).toBe('invalid');
            }
          }
        }
      },
    );
  });
}
