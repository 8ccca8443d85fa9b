/**
 * What the PostgreSQL storage does when a connection breaks under a statement (FLT-01, FLT-02): the
 * statement either never ran, or ran and committed with only its answer lost; the storage cannot
 * tell which from the error. A `pg.Pool` whose `query` fails on cue (before or after running the
 * statement, with PostgreSQL's "terminating connection" error) stages both.
 *
 * Reads and idempotent writes are tried once more on another connection. The atomic steps are tried
 * once more and recognise their own commit (a redemption finds its access token, a rotation its
 * successor, a completion its code) instead of reporting a replay. Consuming a pending
 * authorization is never repeated: its answer is the record it removed.
 */
import pg from 'pg';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { postgresStorage } from '../../src/storage/postgres.js';
import type { Storage } from '../../src/storage/types.js';
import { StorageUnavailableError } from '../../src/storage/unavailable.js';
import { fixtures, NOW } from '../../src/testing/storage/fixtures.js';
import { rotationOf } from '../../src/testing/storage/grants.js';
import { randomSchemaName, requirePostgres } from '../helpers/services.js';

const postgres = await requirePostgres('lost answers of PostgreSQL statements');

type When = 'before' | 'after';

/** A fault to inject into the next statements whose text matches. */
interface Fault {
  readonly match: RegExp;
  readonly when: When;
  /** How many matching statements fail (default 1). */
  times?: number;
  readonly code?: string;
}

/** The error PostgreSQL sends to a backend that pg_terminate_backend ends. */
function terminated(code = '57P01'): Error {
  return Object.assign(new Error('terminating connection due to administrator command'), { code });
}

describe.skipIf(postgres === undefined)('lost answers on PostgreSQL', () => {
  const schema = randomSchemaName();
  const faults: Fault[] = [];
  /** Statements sent to the database, by their first line. */
  const sent: string[] = [];
  let real: pg.Pool | undefined;
  let storage: Storage;

  afterAll(async () => {
    await storage?.close();
    await real?.end();
    await postgres?.dropSchema(schema);
  });

  beforeEach(async () => {
    if (real === undefined) {
      real = new pg.Pool({ connectionString: postgres!.url, max: 4 });
      const pool = real;
      const query = async (config: pg.QueryConfig) => {
        const fault = faults.find((f) => f.match.test(config.text) && (f.times ?? 1) > 0);
        sent.push(config.text.split('\n', 1)[0]!.trim());
        if (fault === undefined) return pool.query(config);
        fault.times = (fault.times ?? 1) - 1;
        if (fault.when === 'before') throw terminated(fault.code);
        await pool.query(config);
        throw terminated(fault.code);
      };
      const faulty = new Proxy(pool, {
        get(target, name) {
          if (name === 'query') return query;
          const value = Reflect.get(target, name) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      storage = postgresStorage({ pool: faulty }, { schema });
      await storage.keys.list(); // migrates
    }
    faults.length = 0;
    sent.length = 0;
  });

  const fail = (match: RegExp, when: When, more: Partial<Fault> = {}) => {
    faults.push({ match, when, ...more });
  };

  for (const when of ['before', 'after'] as const) {
    it(`a code redemption whose connection breaks ${when} it commits is reported redeemed, never a replay (TOK-13 stays for real replays)`, async () => {
      const code = fixtures.code();
      await storage.codes.create(code);
      const grant = fixtures.grantOf(code);
      const redemption = {
        codeHash: code.codeHash,
        grant,
        accessToken: fixtures.accessToken(grant),
        refreshToken: fixtures.refreshToken(grant),
        now: NOW,
      };
      fail(/^WITH code AS/, when);
      expect(await storage.codes.redeem(redemption)).toEqual({ outcome: 'redeemed' });
      expect(await storage.grants.getAccessToken(redemption.accessToken.tokenHash, NOW)).not.toBeNull();
      // Another redemption of the same code is still a replay.
      const again = {
        ...redemption,
        accessToken: fixtures.accessToken(grant),
        refreshToken: fixtures.refreshToken(grant),
      };
      expect(await storage.codes.redeem(again)).toEqual({
        outcome: 'replayed',
        grantId: grant.grantId,
        consumedAt: NOW,
      });
    });

    it(`a refresh rotation whose connection breaks ${when} it commits is reported rotated; a rival's rotation still reads already_rotated`, async () => {
      const { grant, refreshToken } = await seedGrant(storage);
      const rotation = rotationOf(grant, refreshToken, NOW, 'sealed');
      fail(/^WITH old AS/, when);
      expect(await storage.grants.rotateRefreshToken(rotation)).toEqual({ outcome: 'rotated' });
      expect(await storage.grants.getRefreshToken(rotation.successor.tokenHash, NOW)).not.toBeNull();
      const rival = rotationOf(grant, refreshToken, NOW);
      expect((await storage.grants.rotateRefreshToken(rival)).outcome).toBe('already_rotated');
    });

    it(`a batch of rotations whose connection breaks ${when} it commits: each is reported rotated, to its own successor; rivals still read already_rotated`, async () => {
      const seeded = await Promise.all([1, 2, 3, 4].map(() => seedGrant(storage)));
      const rotations = seeded.map(({ grant, refreshToken }, i) =>
        rotationOf(grant, refreshToken, NOW, `sealed-${i}`),
      );
      fail(/rotate_refresh_tokens\(/, when);
      const results = await Promise.all(rotations.map((r) => storage.grants.rotateRefreshToken(r)));
      expect(results).toEqual(rotations.map(() => ({ outcome: 'rotated' })));
      // The batch was sent once, then each rotation alone.
      expect(sent.filter((text) => /rotate_refresh_tokens\(/.test(text))).toHaveLength(1);
      expect(sent.filter((text) => /^WITH old AS/.test(text))).toHaveLength(4);
      for (const [i, rotation] of rotations.entries()) {
        expect(await storage.grants.getRefreshToken(rotation.successor.tokenHash, NOW)).not.toBeNull();
        const { grant, refreshToken } = seeded[i]!;
        expect(await storage.grants.rotateRefreshToken(rotationOf(grant, refreshToken, NOW))).toMatchObject({
          outcome: 'already_rotated',
          successorHash: rotation.successor.tokenHash,
        });
      }
    });

    it(`batches of the code flow whose connection breaks ${when} they commit: each completion is reported complete, each redemption redeemed; rivals are still refused`, async () => {
      const pendings = [1, 2, 3].map(() => fixtures.pending());
      fail(/jsonb_populate_recordset/, when);
      await Promise.all(pendings.map((pending) => storage.interactions.create(pending)));
      const codes = pendings.map(() => fixtures.code());
      fail(/complete_pending_authorizations\(/, when);
      const completed = await Promise.all(
        pendings.map((pending, i) =>
          storage.interactions.complete({ idHash: pending.idHash, code: codes[i]!, now: NOW }),
        ),
      );
      expect(completed).toEqual([true, true, true]);
      const redemptions = codes.map((code) => {
        const grant = fixtures.grantOf(code);
        return {
          codeHash: code.codeHash,
          grant,
          accessToken: fixtures.accessToken(grant),
          refreshToken: fixtures.refreshToken(grant),
          now: NOW,
        };
      });
      fail(/redeem_codes\(/, when);
      const redeemed = await Promise.all(redemptions.map((r) => storage.codes.redeem(r)));
      expect(redeemed).toEqual(redemptions.map(() => ({ outcome: 'redeemed' })));
      // Each batch was sent once, then each of its calls alone.
      // (The batch insert's first line names only its table.)
      for (const batch of [/pending_authorizations$/, /complete_pending_authorizations\(/, /redeem_codes\(/])
        expect(sent.filter((text) => batch.test(text))).toHaveLength(1);
      expect(
        sent.filter((text) => /^INSERT INTO "[a-z_0-9]+"\.pending_authorizations \(/.test(text)),
      ).toHaveLength(3);
      expect(sent.filter((text) => /^WITH done AS/.test(text))).toHaveLength(3);
      expect(sent.filter((text) => /^WITH code AS/.test(text))).toHaveLength(3);
      for (const [i, redemption] of redemptions.entries()) {
        expect(await storage.grants.getAccessToken(redemption.accessToken.tokenHash, NOW)).not.toBeNull();
        expect(
          await storage.interactions.complete({
            idHash: pendings[i]!.idHash,
            code: fixtures.code(),
            now: NOW,
          }),
        ).toBe(false);
        const rival = { ...redemption, accessToken: fixtures.accessToken(redemption.grant) };
        expect((await storage.codes.redeem(rival)).outcome).toBe('replayed');
      }
    });

    it(`completing a pending authorization whose connection breaks ${when} it commits stores the code once and reports it`, async () => {
      const pending = fixtures.pending();
      await storage.interactions.create(pending);
      const code = fixtures.code();
      fail(/^WITH done AS/, when);
      expect(await storage.interactions.complete({ idHash: pending.idHash, code, now: NOW })).toBe(true);
      expect(await storage.codes.get(code.codeHash, NOW)).toEqual(code);
      expect(
        await storage.interactions.complete({ idHash: pending.idHash, code: fixtures.code(), now: NOW }),
      ).toBe(false);
    });

    it(`inserts of fresh keys whose connection breaks ${when} they commit succeed once (codes, clients, access tokens of a retry)`, async () => {
      const code = fixtures.code();
      fail(/^INSERT INTO "[a-z_0-9]+"\.authorization_codes/, when);
      await storage.codes.create(code);
      expect(await storage.codes.get(code.codeHash, NOW)).toEqual(code);
      const client = fixtures.client();
      fail(/^INSERT INTO "[a-z_0-9]+"\.clients/, when);
      await storage.clients.create(client);
      expect(await storage.clients.get(client.clientId, NOW)).toEqual(client);
      const { grant } = await seedGrant(storage);
      const extra = fixtures.accessToken(grant);
      fail(/^INSERT INTO "[a-z_0-9]+"\.access_tokens/, when);
      expect(await storage.grants.addAccessToken(extra, NOW)).toBe(true);
    });
  }

  it('a read whose connection breaks is read again on another connection', async () => {
    const { accessToken } = await seedGrant(storage);
    fail(/^SELECT t\.token_hash, t\.jti/, 'before');
    expect(await storage.grants.getAccessToken(accessToken.tokenHash, NOW)).toEqual(accessToken);
    expect(sent.filter((text) => text.startsWith('SELECT t.token_hash, t.jti'))).toHaveLength(2);
  });

  it('consuming a pending authorization is not repeated after a lost connection: the call fails as unavailable', async () => {
    const pending = fixtures.pending();
    await storage.interactions.create(pending);
    fail(/^DELETE FROM "[a-z_0-9]+"\.pending_authorizations/, 'after');
    const failure = await storage.interactions.consume(pending.idHash, NOW).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StorageUnavailableError);
    expect((failure as StorageUnavailableError).reason).toBe('connection_lost');
    expect(sent.filter((text) => text.startsWith('DELETE FROM'))).toHaveLength(1);
  });

  it('a serialization failure or deadlock (rolled back for certain) is repeated, also for a consumption', async () => {
    const pending = fixtures.pending();
    await storage.interactions.create(pending);
    fail(/^DELETE FROM "[a-z_0-9]+"\.pending_authorizations/, 'before', { code: '40P01' });
    expect(await storage.interactions.consume(pending.idHash, NOW)).toEqual(pending);
  });

  it('a second failure in a row is reported as unavailable, without the statement parameters in the message', async () => {
    const { refreshToken } = await seedGrant(storage);
    fail(/^SELECT t\.token_hash, t\.grant_id/, 'before', { times: 2 });
    const failure = await storage.grants
      .getRefreshToken(refreshToken.tokenHash, NOW)
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StorageUnavailableError);
    expect((failure as Error).message).toBe(
      'the storage is unavailable (connection_lost: 57P01 terminating connection due to administrator command)',
    );
    expect((failure as Error).message).not.toContain(refreshToken.tokenHash);
  });

  it('an error that is not transient (a duplicate key: a caller bug) is thrown as it is, once', async () => {
    const client = fixtures.client();
    await storage.clients.create(client);
    sent.length = 0;
    const failure = await storage.clients.create(client).catch((error: unknown) => error);
    expect(failure).not.toBeInstanceOf(StorageUnavailableError);
    expect((failure as { code?: string }).code).toBe('23505');
    expect(sent).toHaveLength(1);
  });
});

async function seedGrant(storage: Storage) {
  const code = fixtures.code();
  await storage.codes.create(code);
  const grant = fixtures.grantOf(code);
  const accessToken = fixtures.accessToken(grant);
  const refreshToken = fixtures.refreshToken(grant);
  expect(
    await storage.codes.redeem({ codeHash: code.codeHash, grant, accessToken, refreshToken, now: NOW }),
  ).toEqual({ outcome: 'redeemed' });
  return { grant, accessToken, refreshToken };
}
