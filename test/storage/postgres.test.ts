import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresStorage } from '../../src/storage/postgres.js';
import { pgExecutor } from '../../src/storage/postgres-executor.js';
import { SqlStorage } from '../../src/storage/sql/sql-storage.js';
import type { GrantRecord, RefreshTokenRecord, Storage } from '../../src/storage/types.js';
import { fixtures, runStorageConformance } from '../../src/testing/index.js';
import { randomSchemaName, requirePostgres } from '../helpers/services.js';

/** The kit's clock (fixtures are valid at this epoch second). */
const NOW = 1_800_000_000;

/** `count` grants redeemed from codes on `storage`, each with its refresh token. */
async function seedGrants(storage: Storage, count: number) {
  const seeded: { grant: GrantRecord; refreshToken: RefreshTokenRecord }[] = [];
  for (let i = 0; i < count; i++) {
    const code = fixtures.code();
    await storage.codes.create(code);
    const grant = fixtures.grantOf(code);
    const refreshToken = fixtures.refreshToken(grant);
    await storage.codes.redeem({
      codeHash: code.codeHash,
      grant,
      accessToken: fixtures.accessToken(grant),
      refreshToken,
      now: NOW,
    });
    seeded.push({ grant, refreshToken });
  }
  return seeded;
}

/** A rotation of `refreshToken` to a new successor and access token, DPoP-bound to `jkt` when given. */
function rotationOf(grant: GrantRecord, refreshToken: RefreshTokenRecord, jkt?: string) {
  const bound = jkt === undefined ? {} : { dpopJkt: jkt };
  return {
    tokenHash: refreshToken.tokenHash,
    successor: fixtures.refreshToken(grant, bound),
    accessToken: fixtures.accessToken(grant, bound),
    ...(jkt === undefined ? {} : { sealedSuccessor: `sealed-${jkt}` }),
    now: NOW,
  };
}

const postgres = await requirePostgres('storage tests on PostgreSQL');

describe.skipIf(postgres === undefined)('PostgreSQL storage', () => {
  const url = postgres?.url ?? '';
  const schemas: string[] = [];
  const fresh = () => {
    const name = randomSchemaName();
    schemas.push(name);
    return name;
  };
  // A pool owned by the "host": the storage must use it and leave it open. Made lazily: the body
  // of a skipped suite still runs to collect its tests.
  let pool: pg.Pool | undefined;
  const hostPool = () => (pool ??= new pg.Pool({ connectionString: url, max: 10 }));
  const opened: Storage[] = [];
  const open = (storage: Storage) => {
    opened.push(storage);
    return storage;
  };

  afterAll(async () => {
    for (const storage of opened) await storage.close();
    await pool?.end();
    await secondPool?.end();
    for (const name of schemas) await postgres?.dropSchema(name);
  });

  // Shared per suite (tests use random ids); a fresh schema per run. The races run across two
  // instances: a second storage with its own pool on the same schema, as a second server would.
  const ownPoolSchema = fresh();
  let ownPool: Storage | undefined;
  let ownPoolSecond: Storage | undefined;
  runStorageConformance(
    { describe, it, expect },
    {
      name: 'PostgreSQL, own pool, prepared statements',
      create: () => (ownPool ??= open(postgresStorage({ connectionString: url }, { schema: ownPoolSchema }))),
      createSecond: () =>
        (ownPoolSecond ??= open(postgresStorage({ connectionString: url }, { schema: ownPoolSchema }))),
    },
  );

  const hostPoolSchema = fresh();
  let onHostPool: Storage | undefined;
  let onSecondPool: Storage | undefined;
  let secondPool: pg.Pool | undefined;
  runStorageConformance(
    { describe, it, expect },
    {
      name: 'PostgreSQL, host pool, unnamed statements',
      create: () =>
        (onHostPool ??= open(
          postgresStorage({ pool: hostPool() }, { schema: hostPoolSchema, preparedStatements: false }),
        )),
      createSecond: () => {
        secondPool ??= new pg.Pool({ connectionString: url, max: 10 });
        onSecondPool ??= open(
          postgresStorage({ pool: secondPool }, { schema: hostPoolSchema, preparedStatements: false }),
        );
        return onSecondPool;
      },
    },
  );

  // Every write step as its batch's statement, even alone (`batchAlone`): the whole kit, races
  // across two instances included, checks the functions of schemas 6 and 7 step by step.
  const batchSchema = fresh();
  const batching = () =>
    open(
      new SqlStorage(
        pgExecutor({ connectionString: url }, true, {
          connectionTimeoutMillis: 5000,
          queryTimeoutMillis: 10_000,
        }),
        { schema: batchSchema, autoMigrate: true, deleteBatchSize: 1000, batchAlone: true },
      ),
    );
  let batched: Storage | undefined;
  let batchedSecond: Storage | undefined;
  runStorageConformance(
    { describe, it, expect },
    {
      name: 'PostgreSQL, every write step as a batch statement',
      create: () => (batched ??= batching()),
      createSecond: () => (batchedSecond ??= batching()),
    },
  );

  it('rotations that arrive together go as one call of the schema-6 function; each is rotated, its successor and access token stored as given', async () => {
    const schema = fresh();
    const spied = new pg.Pool({ connectionString: url, max: 4 });
    const texts: string[] = [];
    const query = spied.query.bind(spied) as (config: { text: string }) => Promise<unknown>;
    (spied as unknown as { query: typeof query }).query = (config) => {
      texts.push(config.text);
      return query(config);
    };
    const storage = open(postgresStorage({ pool: spied }, { schema }));
    try {
      const rotations = (await seedGrants(storage, 20)).map(({ grant, refreshToken }, i) =>
        rotationOf(grant, refreshToken, `jkt-${i}`),
      );
      texts.length = 0;
      const results = await Promise.all(rotations.map((r) => storage.grants.rotateRefreshToken(r)));
      expect(results).toEqual(rotations.map(() => ({ outcome: 'rotated' })));
      expect(texts).toHaveLength(1);
      expect(texts[0]).toMatch(/rotate_refresh_tokens\(\$1::jsonb\)/);
      for (const rotation of rotations) {
        expect(await storage.grants.getRefreshToken(rotation.successor.tokenHash, NOW)).toEqual(
          rotation.successor,
        );
        expect(await storage.grants.getAccessToken(rotation.accessToken.tokenHash, NOW)).toEqual(
          rotation.accessToken,
        );
      }
    } finally {
      await storage.close();
      await spied.end();
    }
  });

  it('ATOMIC rotate: two instances rotating the same tokens in batches, in opposite orders: exactly one rotation of each token wins, the others are told its successor', async () => {
    const schema = fresh();
    const a = open(postgresStorage({ connectionString: url }, { schema }));
    const b = open(postgresStorage({ connectionString: url }, { schema }));
    for (let round = 0; round < 5; round++) {
      const seeded = await seedGrants(a, 12);
      const rotationsFor = () => seeded.map(({ grant, refreshToken }) => rotationOf(grant, refreshToken));
      const onA = rotationsFor();
      const onB = rotationsFor().reverse();
      const [fromA, fromB] = await Promise.all([
        Promise.all(onA.map((r) => a.grants.rotateRefreshToken(r))),
        Promise.all(onB.map((r) => b.grants.rotateRefreshToken(r))),
      ]);
      const byToken = new Map<string, { rotation: (typeof onA)[number]; result: (typeof fromA)[number] }[]>();
      for (const [rotations, results] of [
        [onA, fromA],
        [onB, fromB],
      ] as const) {
        rotations.forEach((rotation, i) => {
          const entry = { rotation, result: results[i]! };
          byToken.set(rotation.tokenHash, [...(byToken.get(rotation.tokenHash) ?? []), entry]);
        });
      }
      for (const entries of byToken.values()) {
        const winners = entries.filter((e) => e.result.outcome === 'rotated');
        expect(winners).toHaveLength(1);
        const loser = entries.find((e) => e !== winners[0])!;
        expect(loser.result).toMatchObject({
          outcome: 'already_rotated',
          successorHash: winners[0]!.rotation.successor.tokenHash,
        });
        expect(await a.grants.getRefreshToken(loser.rotation.successor.tokenHash, NOW)).toBeNull();
      }
    }
  });

  it('ATOMIC complete and redeem: two instances in batches, in opposite orders, growing shared consents: exactly one completion of each request and one redemption of each code wins, and no batch deadlocks (falls back to its steps alone)', async () => {
    const schema = fresh();
    /** Statements each instance sent, by their first line. */
    const sent: string[][] = [[], []];
    const instance = (i: 0 | 1) => {
      const spied = new pg.Pool({ connectionString: url, max: 4 });
      const query = spied.query.bind(spied) as (config: { text: string }) => Promise<unknown>;
      (spied as unknown as { query: typeof query }).query = (config) => {
        sent[i]!.push(config.text.trim().split('\n', 1)[0]!);
        return query(config);
      };
      const storage = open(postgresStorage({ pool: spied }, { schema }));
      return { storage, end: () => spied.end() };
    };
    const [a, b] = [instance(0), instance(1)];
    const admin = new pg.Pool({ connectionString: url, max: 2 });
    try {
      await a.storage.keys.list();
      await b.storage.keys.list();
      for (let round = 0; round < 5; round++) {
        const clientId = `client-${round}`;
        const pendings = Array.from({ length: 12 }, () =>
          fixtures.pending({ userId: 'ada', sessionId: 's1', csrfHash: 'csrf' }),
        );
        for (const pending of pendings) await a.storage.interactions.create(pending);
        // Every completion grows the same remembered consent: the one row both batches lock.
        const completionsOf = () =>
          pendings.map((pending, i) => ({
            idHash: pending.idHash,
            code: fixtures.code({ userId: 'ada', clientId }),
            consent: {
              userId: 'ada',
              clientId,
              scope: ['openid', `scope-${i}`],
              resources: [],
              createdAt: NOW,
              updatedAt: NOW,
            },
            boundTo: { userId: 'ada', sessionId: 's1', csrfHash: 'csrf' },
            now: NOW,
          }));
        for (const list of sent) list.length = 0;
        const onA = completionsOf();
        const onB = completionsOf().reverse();
        const [doneA, doneB] = await Promise.all([
          Promise.all(onA.map((c) => a.storage.interactions.complete(c))),
          Promise.all(onB.map((c) => b.storage.interactions.complete(c))),
        ]);
        const codes = pendings.map((_, i) => {
          const [fromA, fromB] = [doneA[i]!, doneB[pendings.length - 1 - i]!];
          expect([fromA, fromB].filter(Boolean)).toHaveLength(1);
          return fromA ? onA[i]!.code : onB[pendings.length - 1 - i]!.code;
        });
        expect((await a.storage.consents.get('ada', clientId))?.scope).toHaveLength(13);

        // Different requests whose consents cross: in order of request id, the first instance's
        // grow ada's consent then grace's, the second's grace's then ada's. Visited by request id
        // alone, the two batches would lock the two consent rows in opposite orders.
        const crossing = Array.from({ length: 32 }, (_, i) =>
          fixtures.pending({ userId: `u-${i}`, sessionId: 's1', csrfHash: 'csrf' }),
        ).sort((x, y) => (x.idHash < y.idHash ? -1 : 1));
        for (const pending of crossing) await a.storage.interactions.create(pending);
        const crossed = crossing.map((pending, i) => {
          // Alternate requests go to each instance; each one's first eight grow one user's
          // consent, its last eight the other's.
          const first = i % 2 === 0;
          const early = Math.floor(i / 2) < 8;
          const user = early === first ? 'ada' : 'grace';
          return {
            idHash: pending.idHash,
            code: fixtures.code({ userId: user, clientId }),
            consent: {
              userId: user,
              clientId,
              scope: [`x-${i}`],
              resources: [],
              createdAt: NOW,
              updatedAt: NOW,
            },
            boundTo: { userId: pending.userId!, sessionId: 's1', csrfHash: 'csrf' },
            now: NOW,
          };
        });
        // Make them meet: ada's consent row is held while both batches start, so each waits for
        // it where its order first needs it, and both are at the database when it is released.
        // (Visited by request id, the second batch would by then hold grace's row: a deadlock.)
        await a.storage.consents.save({
          userId: 'grace',
          clientId,
          scope: [],
          resources: [],
          createdAt: NOW,
          updatedAt: NOW,
        });
        const holder = await admin.connect();
        let running: Promise<[boolean[], boolean[]]>;
        try {
          await holder.query('BEGIN');
          await holder.query(
            `SELECT 1 FROM "${schema}".consents WHERE user_id = 'ada' AND client_id = $1 FOR UPDATE`,
            [clientId],
          );
          running = Promise.all([
            Promise.all(crossed.filter((_, i) => i % 2 === 0).map((c) => a.storage.interactions.complete(c))),
            Promise.all(crossed.filter((_, i) => i % 2 === 1).map((c) => b.storage.interactions.complete(c))),
          ]);
          const deadline = Date.now() + 10_000;
          for (;;) {
            const { rows } = await admin.query<{ waiting: number }>(
              `SELECT count(*)::int AS waiting FROM pg_stat_activity
               WHERE wait_event_type = 'Lock' AND query LIKE $1`,
              [`%"${schema}".complete_pending_authorizations(%`],
            );
            if (rows[0]!.waiting >= 2) break;
            if (Date.now() > deadline)
              throw new Error('the two batches never both waited for the held consent');
            await new Promise((resolve) => setImmediate(resolve));
          }
        } finally {
          await holder.query('COMMIT');
          holder.release();
        }
        const [crossA, crossB] = await running;
        expect([...crossA, ...crossB]).toEqual(crossed.map(() => true));

        const redemptionOf = (code: (typeof codes)[number]) => {
          const grant = fixtures.grantOf(code);
          return { codeHash: code.codeHash, grant, accessToken: fixtures.accessToken(grant), now: NOW };
        };
        const [fromA, fromB] = await Promise.all([
          Promise.all(codes.map((code) => a.storage.codes.redeem(redemptionOf(code)))),
          Promise.all([...codes].reverse().map((code) => b.storage.codes.redeem(redemptionOf(code)))),
        ]);
        codes.forEach((code, i) => {
          const outcomes = [fromA[i]!, fromB[codes.length - 1 - i]!];
          expect(outcomes.filter((o) => o.outcome === 'redeemed')).toHaveLength(1);
          expect(outcomes.find((o) => o.outcome !== 'redeemed')).toEqual({
            outcome: 'replayed',
            grantId: code.grantId,
            consumedAt: NOW,
          });
        });
        // Each instance sent each kind as one batch, and no batch failed over to its steps alone
        // (a deadlock between the two would have).
        for (const list of sent) {
          expect(list.filter((text) => /complete_pending_authorizations\(/.test(text))).toHaveLength(2);
          expect(list.filter((text) => /redeem_codes\(/.test(text))).toHaveLength(1);
          expect(list.filter((text) => /^WITH (done|code) AS/.test(text))).toEqual([]);
        }
      }
    } finally {
      await a.storage.close();
      await b.storage.close();
      await a.end();
      await b.end();
      await admin.end();
    }
  });

  it('a role that may not execute the batch functions still rotates, completes and redeems: each batch is refused and its steps run alone', async () => {
    const schema = fresh();
    const owner = open(postgresStorage({ connectionString: url }, { schema }));
    await owner.keys.list(); // migrated
    const role = `pc_noexec_${schema.slice(-12)}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const limitedUrl = new URL(url);
    limitedUrl.username = role;
    limitedUrl.password = '';
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN`);
      await admin.query(`GRANT USAGE ON SCHEMA "${schema}" TO ${role}`);
      await admin.query(
        `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "${schema}" TO ${role}`,
      );
      await admin.query(`REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA "${schema}" FROM PUBLIC`);
      const limited = postgresStorage({ connectionString: limitedUrl.href }, { schema, autoMigrate: false });
      try {
        const rotations = (await seedGrants(owner, 4)).map(({ grant, refreshToken }) =>
          rotationOf(grant, refreshToken),
        );
        // The refusal is real: the role cannot call the function.
        await expect(
          admin.query(`SET ROLE ${role}; SELECT "${schema}".rotate_refresh_tokens('[]'::jsonb)`),
        ).rejects.toThrow(/permission denied/);
        await admin.query('RESET ROLE');
        const results = await Promise.all(rotations.map((r) => limited.grants.rotateRefreshToken(r)));
        expect(results).toEqual(rotations.map(() => ({ outcome: 'rotated' })));
        for (const rotation of rotations)
          expect(await owner.grants.getRefreshToken(rotation.successor.tokenHash, NOW)).toEqual(
            rotation.successor,
          );

        // The code flow's batches: pending authorizations (a plain insert), completions, redemptions.
        const pendings = [1, 2, 3].map(() => fixtures.pending());
        await Promise.all(pendings.map((pending) => limited.interactions.create(pending)));
        const codes = pendings.map(() => fixtures.code());
        const completed = await Promise.all(
          pendings.map((pending, i) =>
            limited.interactions.complete({ idHash: pending.idHash, code: codes[i]!, now: NOW }),
          ),
        );
        expect(completed).toEqual([true, true, true]);
        const redeemed = await Promise.all(
          codes.map((code) => {
            const grant = fixtures.grantOf(code);
            return limited.codes.redeem({
              codeHash: code.codeHash,
              grant,
              accessToken: fixtures.accessToken(grant),
              now: NOW,
            });
          }),
        );
        expect(redeemed).toEqual(codes.map(() => ({ outcome: 'redeemed' })));
        for (const code of codes) expect((await owner.grants.get(code.grantId))?.userId).toBe(code.userId);
      } finally {
        await limited.close();
      }
    } finally {
      await admin.query('RESET ROLE');
      await admin.query(`DROP OWNED BY ${role}`).catch(() => {});
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
  });

  it('keeps its data when closed and reopened with a new pool', async () => {
    const schema = fresh();
    const first = open(postgresStorage({ connectionString: url }, { schema }));
    const client = fixtures.client();
    const code = fixtures.code({ clientId: client.clientId });
    const grant = fixtures.grantOf(code);
    const accessToken = fixtures.accessToken(grant);
    const key = fixtures.signingKey();
    await first.clients.create(client);
    await first.codes.create(code);
    expect(
      await first.codes.redeem({ codeHash: code.codeHash, grant, accessToken, now: code.createdAt }),
    ).toEqual({
      outcome: 'redeemed',
    });
    await first.keys.add(key);
    await first.close();

    const second = open(postgresStorage({ connectionString: url }, { schema }));
    expect(await second.clients.get(client.clientId, client.createdAt)).toEqual(client);
    expect(await second.grants.get(grant.grantId)).toEqual(grant);
    expect(await second.grants.getAccessToken(accessToken.tokenHash, accessToken.issuedAt)).toEqual(
      accessToken,
    );
    expect(await second.keys.list()).toEqual([key]);
  });

  it('shares a host pool between schemas without mixing data or prepared statements, and leaves it open', async () => {
    const [a, b] = [fresh(), fresh()].map((schema) => postgresStorage({ pool: hostPool() }, { schema }));
    const client = fixtures.client();
    await a!.clients.create(client);
    // Same statement on the same connections, other schema: a distinct prepared statement.
    expect(await b!.clients.get(client.clientId, client.createdAt)).toBeNull();
    expect(await a!.clients.get(client.clientId, client.createdAt)).toEqual(client);
    await a!.close();
    await b!.close();
    expect((await hostPool().query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });
});
