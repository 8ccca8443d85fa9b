/**
 * The kit's tests of the interactions aggregate (`InteractionStore`): pending authorizations.
 * @module
 */
import type { ConsentRecord } from '../../storage/types.js';
import { fixtures, NOW, randomHash, randomId } from './fixtures.js';
import type { Kit } from './runner.js';

/** A consent to `openid` alone, given at {@link NOW}. */
function openidConsent(userId: string, clientId: string): ConsentRecord {
  return { userId, clientId, scope: ['openid'], resources: [], createdAt: NOW, updatedAt: NOW };
}

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

    kit.test(
      'complete removes the pending authorization and stores its code, once; a second completion writes nothing',
      async ({ storage }) => {
        const pending = fixtures.pending();
        await storage.interactions.create(pending);
        const code = fixtures.code({ clientId: pending.request.clientId });
        expect(await storage.interactions.complete({ idHash: pending.idHash, code, now: NOW })).toBe(true);
        expect(await storage.interactions.get(pending.idHash, NOW)).toBeNull();
        expect(await storage.codes.get(code.codeHash, NOW)).toEqual(code);
        const late = fixtures.code({ clientId: pending.request.clientId });
        expect(await storage.interactions.complete({ idHash: pending.idHash, code: late, now: NOW })).toBe(
          false,
        );
        expect(await storage.codes.get(late.codeHash, NOW)).toBeNull();
        expect(await storage.interactions.consume(pending.idHash, NOW)).toBeNull();
        const unknown = fixtures.code();
        expect(await storage.interactions.complete({ idHash: randomHash(), code: unknown, now: NOW })).toBe(
          false,
        );
        expect(await storage.codes.get(unknown.codeHash, NOW)).toBeNull();
      },
    );

    kit.test(
      'complete with a binding completes only a record bound to that user, consent form and session (or to no session), and otherwise writes nothing',
      async ({ storage }) => {
        const userId = randomId('user');
        const csrfHash = randomHash();
        const pending = fixtures.pending();
        await storage.interactions.create(pending);
        expect(
          await storage.interactions.bind(pending.idHash, { userId, sessionId: 's1', csrfHash }, NOW),
        ).toBe(true);
        const consent = openidConsent(userId, pending.request.clientId);
        const refused = [
          { userId: randomId('user'), sessionId: 's1', csrfHash },
          { userId, sessionId: 's1', csrfHash: randomHash() },
          { userId, sessionId: 's2', csrfHash },
          // The record has a session; a form answered without one is not its form.
          { userId, csrfHash },
        ];
        for (const boundTo of refused) {
          const code = fixtures.code({ userId, clientId: pending.request.clientId });
          expect(
            await storage.interactions.complete({ idHash: pending.idHash, code, consent, boundTo, now: NOW }),
          ).toBe(false);
          expect(await storage.codes.get(code.codeHash, NOW)).toBeNull();
        }
        expect(await storage.consents.get(userId, pending.request.clientId)).toBeNull();
        expect(await storage.interactions.get(pending.idHash, NOW)).not.toBeNull();
        const code = fixtures.code({ userId, clientId: pending.request.clientId });
        const boundTo = { userId, sessionId: 's1', csrfHash };
        expect(
          await storage.interactions.complete({ idHash: pending.idHash, code, consent, boundTo, now: NOW }),
        ).toBe(true);
        expect(await storage.codes.get(code.codeHash, NOW)).toEqual(code);
        expect(await storage.interactions.get(pending.idHash, NOW)).toBeNull();

        // Bound without a session: any session of that user, or none, answers its form.
        const sessionless = fixtures.pending();
        await storage.interactions.create(sessionless);
        expect(await storage.interactions.bind(sessionless.idHash, { userId, csrfHash }, NOW)).toBe(true);
        const next = fixtures.code({ userId, clientId: sessionless.request.clientId });
        expect(
          await storage.interactions.complete({
            idHash: sessionless.idHash,
            code: next,
            boundTo: { userId, sessionId: 's9', csrfHash },
            now: NOW,
          }),
        ).toBe(true);
        // Never bound: no form of anyone's completes it.
        const unbound = fixtures.pending();
        await storage.interactions.create(unbound);
        expect(
          await storage.interactions.complete({
            idHash: unbound.idHash,
            code: fixtures.code({ userId }),
            boundTo: { userId, csrfHash },
            now: NOW,
          }),
        ).toBe(false);
      },
    );

    kit.test(
      'complete refuses an expired pending authorization (at exactly expiresAt) and writes nothing',
      async ({ storage }) => {
        const pending = fixtures.pending({ expiresAt: NOW + 10 });
        await storage.interactions.create(pending);
        const userId = randomId('user');
        const consent = openidConsent(userId, pending.request.clientId);
        const code = fixtures.code({ userId, clientId: pending.request.clientId });
        expect(
          await storage.interactions.complete({ idHash: pending.idHash, code, consent, now: NOW + 10 }),
        ).toBe(false);
        expect(await storage.codes.get(code.codeHash, NOW)).toBeNull();
        expect(await storage.consents.get(userId, pending.request.clientId)).toBeNull();
      },
    );

    kit.test(
      'complete remembers the consent: stored when new, grown (union, earlier entries first, createdAt kept) when one exists, untouched when none is given',
      async ({ storage }) => {
        const userId = randomId('user');
        const clientId = randomId('client');
        const completeWith = async (consent?: ConsentRecord) => {
          const pending = fixtures.pending();
          await storage.interactions.create(pending);
          const code = fixtures.code({ userId, clientId });
          const completion = {
            idHash: pending.idHash,
            code,
            now: NOW,
            ...(consent === undefined ? {} : { consent }),
          };
          expect(await storage.interactions.complete(completion)).toBe(true);
        };
        const first: ConsentRecord = {
          userId,
          clientId,
          scope: ['openid', 'courses:read'],
          resources: ['https://as.example/a'],
          createdAt: NOW,
          updatedAt: NOW,
        };
        await completeWith(first);
        expect(await storage.consents.get(userId, clientId)).toEqual(first);
        await completeWith({
          ...first,
          scope: ['email', 'openid', 'profile'],
          resources: ['https://as.example/b', 'https://as.example/a'],
          createdAt: NOW + 5,
          updatedAt: NOW + 5,
        });
        const grown = {
          ...first,
          scope: ['openid', 'courses:read', 'email', 'profile'],
          resources: ['https://as.example/a', 'https://as.example/b'],
          updatedAt: NOW + 5,
        };
        expect(await storage.consents.get(userId, clientId)).toEqual(grown);
        await completeWith();
        expect(await storage.consents.get(userId, clientId)).toEqual(grown);
      },
    );

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
