/**
 * What the SQL storage promises beyond the contract: how many statements each hot-path method
 * costs, cleanup in batches, and all-or-nothing writes. Runs on one PGlite instance (always
 * available), through a recording executor, one schema per test.
 */
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { pgliteStorage } from '../../src/storage/pglite.js';
import type { SqlExecutor, SqlQueryable, SqlStatement } from '../../src/storage/sql/executor.js';
import { SqlStorage } from '../../src/storage/sql/sql-storage.js';
import type {
  AuthorizationCodeRecord,
  CodeRedemption,
  InteractionCompletion,
  PendingAuthorizationRecord,
  RefreshRotation,
  RotateResult,
} from '../../src/storage/types.js';
import { StorageUnavailableError } from '../../src/storage/unavailable.js';
import { fixtures } from '../../src/testing/index.js';

const NOW = 1_800_000_000;
const db = await PGlite.create();
afterAll(() => db.close());

/** Statements run, as their first words (`WITH d AS (DELETE FROM ...` → table), newest last. */
let log: string[] = [];

/**
 * A failure to inject into the next statement whose text matches `match`: thrown before it runs,
 * or after it ran (its answer lost: it committed).
 */
let fault: { match: RegExp; error: Error; after: boolean } | undefined;

function recording(): SqlExecutor {
  const run = (target: Pick<PGlite, 'query'>): SqlQueryable => ({
    async query<Row>(statement: SqlStatement, params: unknown[]) {
      log.push(statement.text.replace(/\s+/g, ' ').trim());
      const injected = fault?.match.test(statement.text) ? fault : undefined;
      if (injected !== undefined) fault = undefined;
      if (injected !== undefined && !injected.after) throw injected.error;
      const rows = (await target.query<Row>(statement.text, params)).rows;
      if (injected !== undefined) throw injected.error;
      return rows;
    },
  });
  return {
    ...run(db),
    transaction: (body) => db.transaction((tx) => body(run(tx))),
    close: async () => {},
  };
}

let schemaCount = 0;
async function storage(deleteBatchSize = 1000): Promise<SqlStorage> {
  schemaCount++;
  const created = new SqlStorage(recording(), {
    schema: `sql_test_${schemaCount}`,
    autoMigrate: true,
    deleteBatchSize,
  });
  await created.keys.list(); // migrate now, so the logs below hold only the method under test
  log = [];
  return created;
}

beforeEach(() => {
  log = [];
  fault = undefined;
});

/** A stored code and what redeeming it writes. */
async function storedCode(s: SqlStorage) {
  const code = fixtures.code({ createdAt: NOW, expiresAt: NOW + 60 });
  await s.codes.create(code);
  const grant = fixtures.grantOf(code);
  return {
    code,
    redemption: {
      codeHash: code.codeHash,
      grant,
      accessToken: fixtures.accessToken(grant),
      refreshToken: fixtures.refreshToken(grant),
      now: NOW,
    },
  };
}

/** A grant redeemed from a code, with its refresh token. */
async function seededGrant(s: SqlStorage) {
  const { redemption } = await storedCode(s);
  expect(await s.codes.redeem(redemption)).toEqual({ outcome: 'redeemed' });
  return redemption;
}

describe('SQL storage: one statement per step on the hot paths', () => {
  it('code exchange: reading the code is one statement, redeeming it (code, grant, tokens) one more', async () => {
    const s = await storage();
    const { code, redemption } = await storedCode(s);
    log = [];
    expect(await s.codes.get(code.codeHash, NOW)).not.toBeNull();
    expect(await s.codes.redeem(redemption)).toEqual({ outcome: 'redeemed' });
    expect(log).toHaveLength(2);
    expect(log[1]).toMatch(/^WITH code AS \( UPDATE .*authorization_codes/);
  });

  it('refresh: a successful rotation is one statement; the revocation check of a request is one statement', async () => {
    const s = await storage();
    const { grant, refreshToken } = await seededGrant(s);
    const rotation = {
      tokenHash: refreshToken!.tokenHash,
      successor: fixtures.refreshToken(grant),
      accessToken: fixtures.accessToken(grant),
      now: NOW,
    };
    log = [];
    expect(await s.grants.rotateRefreshToken(rotation)).toEqual({ outcome: 'rotated' });
    expect(await s.grants.getAccessToken(rotation.accessToken.tokenHash, NOW)).not.toBeNull();
    expect(await s.interactions.consume('unknown', NOW)).toBeNull();
    expect(log).toHaveLength(3);
  });

  it('a replayed code costs one more read; so does a rotation that finds the token already rotated', async () => {
    const s = await storage();
    const { redemption } = await storedCode(s);
    await s.codes.redeem(redemption);
    log = [];
    expect((await s.codes.redeem(redemption)).outcome).toBe('replayed');
    expect(log).toHaveLength(2);

    const { grant, refreshToken } = await seededGrant(s);
    const next = () => ({
      tokenHash: refreshToken!.tokenHash,
      successor: fixtures.refreshToken(grant),
      accessToken: fixtures.accessToken(grant),
      now: NOW,
    });
    await s.grants.rotateRefreshToken(next());
    log = [];
    expect((await s.grants.rotateRefreshToken(next())).outcome).toBe('already_rotated');
    expect(log).toHaveLength(2);
    // Facts, not policy: nothing was revoked.
    expect((await s.grants.get(grant.grantId))?.revokedAt).toBeUndefined();
  });
});

/** Rotations of `count` grants' refresh tokens, each with a DPoP-bound successor and a sealed one. */
async function rotationsOf(s: SqlStorage, count: number): Promise<RefreshRotation[]> {
  const rotations: RefreshRotation[] = [];
  for (let i = 0; i < count; i++) {
    const { grant, refreshToken } = await seededGrant(s);
    rotations.push({
      tokenHash: refreshToken!.tokenHash,
      successor: fixtures.refreshToken(grant, { issuedAt: NOW + 1, dpopJkt: `jkt-${i}` }),
      accessToken: fixtures.accessToken(grant, { issuedAt: NOW + 1, dpopJkt: `jkt-${i}` }),
      sealedSuccessor: `sealed-${i}`,
      now: NOW + 1,
    });
  }
  return rotations;
}

const BATCH = /rotate_refresh_tokens\(/;
const ALONE = /^WITH old AS \( UPDATE .*refresh_tokens/;

/** Every rotation's successor and access token read back exactly as given, and the presented token rotated to it. */
async function expectRotated(s: SqlStorage, rotations: readonly RefreshRotation[]): Promise<void> {
  for (const rotation of rotations) {
    expect(await s.grants.getRefreshToken(rotation.successor.tokenHash, NOW + 1)).toEqual(rotation.successor);
    expect(await s.grants.getAccessToken(rotation.accessToken.tokenHash, NOW + 1)).toEqual(
      rotation.accessToken,
    );
    expect(
      await s.grants.rotateRefreshToken({
        ...rotation,
        successor: fixtures.refreshToken(await grantOf(s, rotation)),
      }),
    ).toEqual({
      outcome: 'already_rotated',
      grantId: rotation.successor.grantId,
      rotatedAt: NOW + 1,
      successorHash: rotation.successor.tokenHash,
      sealedSuccessor: rotation.sealedSuccessor,
    });
  }
}

async function grantOf(s: SqlStorage, rotation: RefreshRotation) {
  return (await s.grants.get(rotation.successor.grantId))!;
}

describe('SQL storage: rotations that arrive together are one statement (batched rotation)', () => {
  it('rotations of different tokens submitted together: one statement, and each successor and access token stored exactly as given', async () => {
    const s = await storage();
    const rotations = await rotationsOf(s, 8);
    log = [];
    const results = await Promise.all(rotations.map((rotation) => s.grants.rotateRefreshToken(rotation)));
    expect(results).toEqual(rotations.map(() => ({ outcome: 'rotated' })));
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(BATCH);
    await expectRotated(s, rotations);
  });

  it('a rotation submitted alone goes as the one-row statement, and rotations submitted together while it is out go as one batch (that they wait for it: sql-batch.test.ts)', async () => {
    const s = await storage();
    const [first, ...later] = await rotationsOf(s, 5);
    log = [];
    const alone = s.grants.rotateRefreshToken(first!);
    // Submitted after the first has left (a later callback), before it is answered.
    await Promise.resolve();
    await Promise.resolve();
    const together = Promise.all(later.map((rotation) => s.grants.rotateRefreshToken(rotation)));
    expect(await alone).toEqual({ outcome: 'rotated' });
    expect(await together).toEqual(later.map(() => ({ outcome: 'rotated' })));
    expect(log).toHaveLength(2);
    expect(log[0]).toMatch(ALONE);
    expect(log[1]).toMatch(BATCH);
  });

  it('ATOMIC rotate: rotations of one token in one batch, exactly one rotates and the others are told its successor; nothing is revoked', async () => {
    const s = await storage();
    const [base] = await rotationsOf(s, 1);
    const grant = await grantOf(s, base!);
    const rivals = Array.from({ length: 6 }, (_, i) => ({
      ...base!,
      successor: fixtures.refreshToken(grant, { issuedAt: NOW + 1 }),
      accessToken: fixtures.accessToken(grant, { issuedAt: NOW + 1 }),
      sealedSuccessor: `rival-${i}`,
    }));
    log = [];
    const results: RotateResult[] = await Promise.all(
      rivals.map((rotation) => s.grants.rotateRefreshToken(rotation)),
    );
    expect(log[0]).toMatch(BATCH);
    const winners = rivals.filter((_, i) => results[i]?.outcome === 'rotated');
    expect(winners).toHaveLength(1);
    const winner = winners[0]!;
    expect(results.filter((r) => r.outcome !== 'rotated')).toEqual(
      Array.from({ length: 5 }, () => ({
        outcome: 'already_rotated',
        grantId: grant.grantId,
        rotatedAt: NOW + 1,
        successorHash: winner.successor.tokenHash,
        sealedSuccessor: winner.sealedSuccessor,
      })),
    );
    for (const rival of rivals) {
      const won = rival === winner;
      expect((await s.grants.getRefreshToken(rival.successor.tokenHash, NOW + 1)) !== null).toBe(won);
      expect((await s.grants.getAccessToken(rival.accessToken.tokenHash, NOW + 1)) !== null).toBe(won);
    }
    expect((await s.grants.get(grant.grantId))?.revokedAt).toBeUndefined();
  });

  it('in one batch, a token of a revoked grant, an expired token and an unknown one are invalid and write nothing; the others rotate', async () => {
    const s = await storage();
    const rotations = await rotationsOf(s, 5);
    const [revoked, expired, unknown, ...fine] = rotations as [
      RefreshRotation,
      RefreshRotation,
      RefreshRotation,
      ...RefreshRotation[],
    ];
    await s.grants.revoke(revoked.successor.grantId, NOW);
    const late = { ...expired, now: NOW + 365 * 86400 };
    const made = { ...unknown, tokenHash: 'no-such-token' };
    log = [];
    const results = await Promise.all(
      [revoked, late, made, ...fine].map((r) => s.grants.rotateRefreshToken(r)),
    );
    expect(log[0]).toMatch(BATCH);
    expect(results).toEqual([
      { outcome: 'invalid' },
      { outcome: 'invalid' },
      { outcome: 'invalid' },
      { outcome: 'rotated' },
      { outcome: 'rotated' },
    ]);
    for (const rotation of [revoked, late, made]) {
      expect(await s.grants.getRefreshToken(rotation.successor.tokenHash, NOW + 1)).toBeNull();
      expect(await s.grants.getAccessToken(rotation.accessToken.tokenHash, NOW + 1)).toBeNull();
    }
    await expectRotated(s, fine);
  });

  it('a batch refused for one rotation (its access token clashes): each runs alone, only that one fails, the others rotate', async () => {
    const s = await storage();
    const rotations = await rotationsOf(s, 4);
    const taken = await seededGrant(s);
    const bad = {
      ...rotations[1]!,
      accessToken: { ...rotations[1]!.accessToken, tokenHash: taken.accessToken.tokenHash },
    };
    const batch = [rotations[0]!, bad, rotations[2]!, rotations[3]!];
    log = [];
    const results = await Promise.allSettled(batch.map((r) => s.grants.rotateRefreshToken(r)));
    expect(log[0]).toMatch(BATCH);
    expect(log.filter((text) => ALONE.test(text))).toHaveLength(4);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    // The refused rotation left its token as it was: it rotates once its values are right.
    expect((await s.grants.getRefreshToken(bad.tokenHash, NOW + 1))?.rotatedAt).toBeUndefined();
    await expectRotated(s, [rotations[0]!, rotations[2]!, rotations[3]!]);
  });

  it('FLT-03 a batch whose answer was lost after it committed: each rotation recognises its own successor (rotated, not a reuse)', async () => {
    const s = await storage();
    const rotations = await rotationsOf(s, 4);
    fault = {
      match: BATCH,
      error: new StorageUnavailableError('connection_lost', 'lost', { mayHaveApplied: true }),
      after: true,
    };
    log = [];
    const results = await Promise.all(rotations.map((r) => s.grants.rotateRefreshToken(r)));
    expect(results).toEqual(rotations.map(() => ({ outcome: 'rotated' })));
    // Each was tried alone and found its token rotated, to its own successor.
    expect(log.filter((text) => ALONE.test(text))).toHaveLength(4);
    await expectRotated(s, rotations);
  });

  it('FLT-03 a batch rolled back by a conflict (a deadlock, a serialization failure): each runs alone and rotates', async () => {
    const s = await storage();
    const rotations = await rotationsOf(s, 3);
    fault = { match: BATCH, error: new StorageUnavailableError('conflict', 'deadlock'), after: false };
    const results = await Promise.all(rotations.map((r) => s.grants.rotateRefreshToken(r)));
    expect(results).toEqual(rotations.map(() => ({ outcome: 'rotated' })));
    await expectRotated(s, rotations);
  });

  it('FLT-01 the database unreachable during a batch: every rotation of it fails as unavailable, none is tried again alone, nothing is written', async () => {
    const s = await storage();
    const rotations = await rotationsOf(s, 3);
    const down = new StorageUnavailableError('unreachable', 'connection refused');
    fault = { match: BATCH, error: down, after: false };
    log = [];
    const results = await Promise.allSettled(rotations.map((r) => s.grants.rotateRefreshToken(r)));
    expect(results).toEqual(rotations.map(() => ({ status: 'rejected', reason: down })));
    expect(log).toHaveLength(1);
    for (const rotation of rotations)
      expect((await s.grants.getRefreshToken(rotation.tokenHash, NOW + 1))?.rotatedAt).toBeUndefined();
  });
});

/**
 * One batched write step of the code flow, as the tests below drive it: `make` builds `count`
 * inputs ready to submit (what they act on stored first), `submit` runs one, `clash` gives an
 * input whose values the database refuses (a key already stored), `expectApplied` reads back
 * what an applied input wrote.
 */
interface CodeFlowStep<In> {
  readonly name: string;
  readonly batch: RegExp;
  readonly alone: RegExp;
  readonly applied: unknown;
  make(s: SqlStorage, count: number): Promise<In[]>;
  submit(s: SqlStorage, input: In): Promise<unknown>;
  clash(s: SqlStorage, input: In): Promise<In>;
  expectApplied(s: SqlStorage, input: In): Promise<void>;
}

/** The code without its (optional) nonce, as a flow without one stores it. */
function withoutNonce(code: AuthorizationCodeRecord): AuthorizationCodeRecord {
  const { nonce: _, ...rest } = code;
  return rest;
}

const creating: CodeFlowStep<PendingAuthorizationRecord> = {
  name: 'interactions.create',
  batch: /jsonb_populate_recordset\(NULL::"sql_test_\d+"\.pending_authorizations/,
  alone: /^INSERT INTO "sql_test_\d+"\.pending_authorizations \(/,
  applied: undefined,
  make: async (_s, count) => Array.from({ length: count }, () => fixtures.pending({ createdAt: NOW })),
  submit: (s, pending) => s.interactions.create(pending),
  async clash(s, pending) {
    const taken = fixtures.pending();
    await s.interactions.create(taken);
    return { ...pending, idHash: taken.idHash };
  },
  async expectApplied(s, pending) {
    expect(await s.interactions.get(pending.idHash, NOW)).toEqual(pending);
  },
};

/** Pending authorizations bound to a user and consent form, with the code and consent that complete each. */
const completing: CodeFlowStep<InteractionCompletion> = {
  name: 'interactions.complete',
  batch: /complete_pending_authorizations\(/,
  alone: /^WITH done AS \( DELETE FROM .*pending_authorizations/,
  applied: true,
  async make(s, count) {
    const completions: InteractionCompletion[] = [];
    for (let i = 0; i < count; i++) {
      const pending = fixtures.pending({ userId: `user-${i}`, sessionId: 's1', csrfHash: `csrf-${i}` });
      await s.interactions.create(pending);
      const clientId = pending.request.clientId;
      const consent = {
        userId: `user-${i}`,
        clientId,
        scope: ['openid', `scope-${i}`],
        resources: [],
        createdAt: NOW,
        updatedAt: NOW,
      };
      completions.push({
        idHash: pending.idHash,
        code:
          i % 2 === 0
            ? fixtures.code({ userId: `user-${i}`, clientId })
            : withoutNonce(fixtures.code({ userId: `user-${i}`, clientId })),
        // Every other one remembers a consent, so a batch holds both kinds.
        ...(i % 2 === 0 ? { consent } : {}),
        boundTo: { userId: `user-${i}`, sessionId: 's1', csrfHash: `csrf-${i}` },
        now: NOW,
      });
    }
    return completions;
  },
  submit: (s, completion) => s.interactions.complete(completion),
  async clash(s, completion) {
    const taken = fixtures.code();
    await s.codes.create(taken);
    return { ...completion, code: { ...completion.code, codeHash: taken.codeHash } };
  },
  async expectApplied(s, completion) {
    expect(await s.codes.get(completion.code.codeHash, NOW)).toEqual(completion.code);
    expect(await s.interactions.get(completion.idHash, NOW)).toBeNull();
    const { consent } = completion;
    if (consent !== undefined)
      expect(await s.consents.get(consent.userId, consent.clientId)).toEqual(consent);
  },
};

const redeeming: CodeFlowStep<CodeRedemption> = {
  name: 'codes.redeem',
  batch: /redeem_codes\(/,
  alone: /^WITH code AS \( UPDATE .*authorization_codes/,
  applied: { outcome: 'redeemed' },
  async make(s, count) {
    const redemptions: CodeRedemption[] = [];
    for (let i = 0; i < count; i++) {
      const { redemption } = await storedCode(s);
      // Every other one without a refresh token, so a batch holds both kinds.
      const { refreshToken: _, ...withoutRefresh } = redemption;
      redemptions.push(i % 2 === 0 ? redemption : withoutRefresh);
    }
    return redemptions;
  },
  submit: (s, redemption) => s.codes.redeem(redemption),
  async clash(s, redemption) {
    const taken = await seededGrant(s);
    return {
      ...redemption,
      accessToken: { ...redemption.accessToken, tokenHash: taken.accessToken.tokenHash },
    };
  },
  async expectApplied(s, { grant, accessToken, refreshToken }) {
    expect(await s.grants.get(grant.grantId)).toEqual(grant);
    expect(await s.grants.getAccessToken(accessToken.tokenHash, NOW)).toEqual(accessToken);
    if (refreshToken !== undefined)
      expect(await s.grants.getRefreshToken(refreshToken.tokenHash, NOW)).toEqual(refreshToken);
  },
};

describe.each([creating, completing, redeeming] as CodeFlowStep<unknown>[])(
  'SQL storage: $name calls that arrive together are one statement (batched code flow)',
  (step) => {
    it('calls submitted together: one statement, and each writes exactly what it would alone', async () => {
      const s = await storage();
      const inputs = await step.make(s, 6);
      log = [];
      expect(await Promise.all(inputs.map((input) => step.submit(s, input)))).toEqual(
        inputs.map(() => step.applied),
      );
      expect(log).toHaveLength(1);
      expect(log[0]).toMatch(step.batch);
      for (const input of inputs) await step.expectApplied(s, input);
    });

    it('a batch refused for one call (a key already stored): each runs alone, only that one fails', async () => {
      const s = await storage();
      const [a, b, c] = await step.make(s, 3);
      const bad = await step.clash(s, b);
      log = [];
      const results = await Promise.allSettled([a, bad, c].map((input) => step.submit(s, input)));
      expect(log[0]).toMatch(step.batch);
      expect(log.filter((text) => step.alone.test(text))).toHaveLength(3);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      await step.expectApplied(s, a);
      await step.expectApplied(s, c);
    });

    it('FLT-03 a batch whose answer was lost after it committed: each call recognises its own write (applied, not a replay)', async () => {
      const s = await storage();
      const inputs = await step.make(s, 4);
      fault = {
        match: step.batch,
        error: new StorageUnavailableError('connection_lost', 'lost', { mayHaveApplied: true }),
        after: true,
      };
      log = [];
      expect(await Promise.all(inputs.map((input) => step.submit(s, input)))).toEqual(
        inputs.map(() => step.applied),
      );
      expect(log.filter((text) => step.alone.test(text))).toHaveLength(4);
      for (const input of inputs) await step.expectApplied(s, input);
    });

    it('FLT-03 a batch rolled back by a conflict: each runs alone and is applied', async () => {
      const s = await storage();
      const inputs = await step.make(s, 3);
      fault = { match: step.batch, error: new StorageUnavailableError('conflict', 'deadlock'), after: false };
      expect(await Promise.all(inputs.map((input) => step.submit(s, input)))).toEqual(
        inputs.map(() => step.applied),
      );
      for (const input of inputs) await step.expectApplied(s, input);
    });

    it('FLT-01 the database unreachable during a batch: every call fails as unavailable, none is tried again alone', async () => {
      const s = await storage();
      const inputs = await step.make(s, 3);
      const down = new StorageUnavailableError('unreachable', 'connection refused');
      fault = { match: step.batch, error: down, after: false };
      log = [];
      const results = await Promise.allSettled(inputs.map((input) => step.submit(s, input)));
      expect(results).toEqual(inputs.map(() => ({ status: 'rejected', reason: down })));
      expect(log).toHaveLength(1);
    });
  },
);

describe("SQL storage: the code flow's batches decide each call as alone", () => {
  it('ATOMIC complete: completions of one pending authorization in one batch, exactly one stores its code; the others write nothing', async () => {
    const s = await storage();
    const [base] = await completing.make(s, 1);
    const rivals = Array.from({ length: 5 }, () => ({
      ...base!,
      code: { ...base!.code, codeHash: fixtures.code().codeHash },
    }));
    log = [];
    const results = await Promise.all(rivals.map((rival) => s.interactions.complete(rival)));
    expect(log[0]).toMatch(completing.batch);
    expect(results.filter((done) => done)).toHaveLength(1);
    for (const [i, rival] of rivals.entries())
      expect((await s.codes.get(rival.code.codeHash, NOW)) !== null).toBe(results[i]);
  });

  it('ATOMIC redeem: redemptions of one code in one batch, exactly one is redeemed and the others are told it is a replay of that grant', async () => {
    const s = await storage();
    const [base] = await redeeming.make(s, 1);
    const rivals = Array.from({ length: 5 }, () => ({
      ...base!,
      accessToken: fixtures.accessToken(base!.grant),
      refreshToken: fixtures.refreshToken(base!.grant),
    }));
    log = [];
    const results = await Promise.all(rivals.map((rival) => s.codes.redeem(rival)));
    expect(log[0]).toMatch(redeeming.batch);
    expect(results.filter((r) => r.outcome === 'redeemed')).toHaveLength(1);
    expect(results.filter((r) => r.outcome !== 'redeemed')).toEqual(
      Array.from({ length: 4 }, () => ({
        outcome: 'replayed',
        grantId: base!.grant.grantId,
        consumedAt: NOW,
      })),
    );
    for (const [i, rival] of rivals.entries()) {
      const won = results[i]?.outcome === 'redeemed';
      expect((await s.grants.getAccessToken(rival.accessToken.tokenHash, NOW)) !== null).toBe(won);
      expect((await s.grants.getRefreshToken(rival.refreshToken.tokenHash, NOW)) !== null).toBe(won);
    }
  });

  it('in one batch, completions bound to another user, CSRF token or session, an expired one and an unknown one complete nothing; the others complete', async () => {
    const s = await storage();
    const inputs = await completing.make(s, 6);
    const [otherUser, otherCsrf, otherSession, expired, unknown, fine] = inputs as [
      InteractionCompletion,
      InteractionCompletion,
      InteractionCompletion,
      InteractionCompletion,
      InteractionCompletion,
      InteractionCompletion,
    ];
    const refused = [
      { ...otherUser, boundTo: { ...otherUser.boundTo!, userId: 'someone-else' } },
      { ...otherCsrf, boundTo: { ...otherCsrf.boundTo!, csrfHash: 'another-form' } },
      { ...otherSession, boundTo: { ...otherSession.boundTo!, sessionId: 's2' } },
      { ...expired, now: NOW + 600 },
      { ...unknown, idHash: 'no-such-request' },
    ];
    log = [];
    const results = await Promise.all([...refused, fine].map((c) => s.interactions.complete(c)));
    expect(log[0]).toMatch(completing.batch);
    expect(results).toEqual([false, false, false, false, false, true]);
    for (const completion of refused) expect(await s.codes.get(completion.code.codeHash, NOW)).toBeNull();
    expect(await s.consents.get(otherUser.consent!.userId, otherUser.consent!.clientId)).toBeNull();
    await completing.expectApplied(s, fine);
  });

  it('two completions in one batch for the same user and client: the remembered consent is the union of both', async () => {
    const s = await storage();
    const clientId = 'client-union';
    const completions: InteractionCompletion[] = [];
    for (const scope of [
      ['openid', 'a'],
      ['openid', 'b'],
    ]) {
      const pending = fixtures.pending({ userId: 'ada', sessionId: 's1', csrfHash: `csrf-${scope[1]}` });
      await s.interactions.create(pending);
      completions.push({
        idHash: pending.idHash,
        code: fixtures.code({ userId: 'ada', clientId }),
        consent: { userId: 'ada', clientId, scope, resources: [], createdAt: NOW, updatedAt: NOW },
        boundTo: { userId: 'ada', sessionId: 's1', csrfHash: `csrf-${scope[1]}` },
        now: NOW,
      });
    }
    log = [];
    expect(await Promise.all(completions.map((c) => s.interactions.complete(c)))).toEqual([true, true]);
    expect(log[0]).toMatch(completing.batch);
    const union = (await s.consents.get('ada', clientId))?.scope;
    // Each completion is applied as alone, in the batch's order: the second adds its scope to the first's.
    expect(union?.[0]).toBe('openid');
    expect([...(union ?? [])].sort()).toEqual(['a', 'b', 'openid']);
  });

  it('in one batch, an expired code and an unknown one are invalid and write nothing; the others are redeemed', async () => {
    const s = await storage();
    const [expired, unknown, fine] = (await redeeming.make(s, 3)) as [
      CodeRedemption,
      CodeRedemption,
      CodeRedemption,
    ];
    const refused = [
      { ...expired, now: NOW + 60 },
      { ...unknown, codeHash: 'no-such-code' },
    ];
    log = [];
    const results = await Promise.all([...refused, fine].map((r) => s.codes.redeem(r)));
    expect(log[0]).toMatch(redeeming.batch);
    expect(results).toEqual([{ outcome: 'invalid' }, { outcome: 'invalid' }, { outcome: 'redeemed' }]);
    for (const redemption of refused) expect(await s.grants.get(redemption.grant.grantId)).toBeNull();
    await redeeming.expectApplied(s, fine);
  });
});

describe('SQL storage: writes are all or nothing', () => {
  it('a redemption whose token cannot be stored leaves the code unconsumed and no grant behind', async () => {
    const s = await storage();
    const taken = await seededGrant(s);
    const { code, redemption } = await storedCode(s);
    // The same token hash: the token insert fails, and with it the whole statement.
    const clash = {
      ...redemption,
      accessToken: { ...redemption.accessToken, tokenHash: taken.accessToken.tokenHash },
    };
    await expect(s.codes.redeem(clash)).rejects.toThrow();
    expect(await s.grants.get(redemption.grant.grantId)).toBeNull();
    expect((await s.codes.get(code.codeHash, NOW))?.consumedAt).toBeUndefined();
    // The retry redeems: nothing of the failed attempt was left behind.
    expect(await s.codes.redeem(redemption)).toEqual({ outcome: 'redeemed' });
  });

  it('a failed rotation writes neither the successor nor the access token, and leaves the presented token active', async () => {
    const s = await storage();
    const { grant, refreshToken, accessToken } = await seededGrant(s);
    const successor = fixtures.refreshToken(grant);
    const clash = { ...fixtures.accessToken(grant), tokenHash: accessToken.tokenHash };
    await expect(
      s.grants.rotateRefreshToken({
        tokenHash: refreshToken!.tokenHash,
        successor,
        accessToken: clash,
        now: NOW,
      }),
    ).rejects.toThrow();
    expect(await s.grants.getRefreshToken(successor.tokenHash, NOW)).toBeNull();
    expect((await s.grants.getRefreshToken(refreshToken!.tokenHash, NOW))?.rotatedAt).toBeUndefined();
  });
});

describe('FLT-05 SQL storage: deleteExpired', () => {
  it('deletes in batches of deleteBatchSize, one short statement each, until a batch comes back short', async () => {
    const s = await storage(10);
    const { grant } = await seededGrant(s);
    for (let i = 0; i < 24; i++)
      expect(await s.grants.addAccessToken(fixtures.accessToken(grant, { expiresAt: NOW + 1 }), NOW)).toBe(
        true,
      );
    const live = fixtures.accessToken(grant, { expiresAt: NOW + 10_000 });
    await s.grants.addAccessToken(live, NOW);
    log = [];
    // 24 short-lived access tokens plus the first one (15 minutes): 25 expired by NOW + 1000, and
    // the redeemed code, whose tombstone time (expiry + 600 s) has passed too.
    expect(await s.deleteExpired(NOW + 1000)).toBe(26);
    const accessDeletes = log.filter((text) => /DELETE FROM "sql_test_\d+"\.access_tokens/.test(text));
    expect(accessDeletes).toHaveLength(3); // 10, 10, 5
    expect(log.every((text) => /LIMIT \$2/.test(text))).toBe(true);
    expect(await s.grants.getAccessToken(live.tokenHash, NOW + 1000)).not.toBeNull();
    expect(await s.grants.get(grant.grantId)).not.toBeNull();
  });

  it('removes what expired in every table, and keeps consumed codes and revoked grants for their tombstone time', async () => {
    const s = await storage();
    const client = fixtures.client({ expiresAt: NOW + 5 });
    await s.clients.create(client);
    const { code, redemption } = await storedCode(s);
    await s.codes.redeem(redemption);
    await s.grants.revoke(redemption.grant.grantId, NOW);

    await s.deleteExpired(NOW + 599);
    expect(await s.clients.clearExpiry(client.clientId)).toBe(false);
    expect((await s.codes.redeem({ ...redemption, now: NOW + 599 })).outcome).toBe('replayed');
    expect((await s.grants.get(redemption.grant.grantId))?.revokedAt).toBe(NOW);

    // Ten minutes past the code's expiry and the revocation, both are gone (the grant with its two tokens).
    expect(await s.deleteExpired(NOW + 660)).toBe(2);
    expect(await s.codes.get(code.codeHash, NOW)).toBeNull();
    expect(await s.grants.get(redemption.grant.grantId)).toBeNull();
  });
});

describe('pgliteStorage on a PGlite instance the host passes in', () => {
  it('uses it and leaves it open; storages in two schemas keep separate data', async () => {
    const a = pgliteStorage({ pglite: db }, { schema: 'tenant_a' });
    const b = pgliteStorage({ pglite: db }, { schema: 'tenant_b' });
    const client = fixtures.client();
    await a.clients.create(client);
    expect(await b.clients.get(client.clientId, client.createdAt)).toBeNull();
    // A second storage on a migrated schema starts without migrating again.
    const again = pgliteStorage({ pglite: db }, { schema: 'tenant_a' });
    expect(await again.clients.get(client.clientId, client.createdAt)).toEqual(client);
    await Promise.all([a.close(), b.close(), again.close()]);
    const versions = await db.query<{ version: number }>(
      'SELECT version FROM tenant_a.portcullis_migrations',
    );
    expect(versions.rows).toEqual([
      { version: 1 },
      { version: 2 },
      { version: 3 },
      { version: 4 },
      { version: 5 },
      { version: 6 },
      { version: 7 },
    ]);
  });
});
