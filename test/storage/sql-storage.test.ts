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
import { fixtures } from '../../src/testing/index.js';

const NOW = 1_800_000_000;
const db = await PGlite.create();
afterAll(() => db.close());

/** Statements run, as their first words (`WITH d AS (DELETE FROM ...` → table), newest last. */
let log: string[] = [];

function recording(): SqlExecutor {
  const run = (target: Pick<PGlite, 'query'>): SqlQueryable => ({
    async query<Row>(statement: SqlStatement, params: unknown[]) {
      log.push(statement.text.replace(/\s+/g, ' ').trim());
      return (await target.query<Row>(statement.text, params)).rows;
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
    ]);
  });
});
