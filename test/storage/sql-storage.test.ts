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
import { fixtures } from '../../src/testing/storage-conformance.js';

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
  await created.listSigningKeys(); // migrate now, so the logs below hold only the method under test
  log = [];
  return created;
}

beforeEach(() => {
  log = [];
});

describe('SQL storage: one statement per step on the hot paths', () => {
  it('code exchange: consuming the code and creating the grant with its tokens are one statement each', async () => {
    const s = await storage();
    const code = fixtures.code({ createdAt: NOW, expiresAt: NOW + 60 });
    await s.createAuthorizationCode(code);
    log = [];
    expect((await s.consumeAuthorizationCode(code.codeHash, NOW))?.outcome).toBe('consumed');
    const grant = fixtures.grant({ grantId: code.grantId });
    const issuance = {
      grant,
      accessToken: fixtures.accessToken(grant),
      refreshToken: fixtures.refreshToken(grant),
    };
    expect(await s.createGrant(issuance)).toBe(true);
    expect(log).toHaveLength(2);
    expect(log[0]).toMatch(/^UPDATE .*authorization_codes/);
    expect(log[1]).toMatch(/^WITH g AS \( INSERT INTO .*grants/);
  });

  it('refresh: a successful rotation is one statement; the revocation check of a request is one statement', async () => {
    const s = await storage();
    const grant = fixtures.grant();
    const refreshToken = fixtures.refreshToken(grant);
    await s.createGrant({ grant, accessToken: fixtures.accessToken(grant), refreshToken });
    const next = { refreshToken: fixtures.refreshToken(grant), accessToken: fixtures.accessToken(grant) };
    log = [];
    expect((await s.rotateRefreshToken(refreshToken.tokenHash, next, NOW, 0)).outcome).toBe('rotated');
    expect(await s.getAccessToken(next.accessToken.tokenHash, NOW)).not.toBeNull();
    expect(await s.consumePendingAuthorization('unknown', NOW)).toBeNull();
    expect(log).toHaveLength(3);
  });

  it('a replayed code costs one more read, and a reused refresh token a read and the revocation', async () => {
    const s = await storage();
    const code = fixtures.code({ createdAt: NOW, expiresAt: NOW + 60 });
    await s.createAuthorizationCode(code);
    await s.consumeAuthorizationCode(code.codeHash, NOW);
    log = [];
    expect((await s.consumeAuthorizationCode(code.codeHash, NOW))?.outcome).toBe('replayed');
    expect(log).toHaveLength(2);

    const grant = fixtures.grant();
    const refreshToken = fixtures.refreshToken(grant);
    await s.createGrant({ grant, accessToken: fixtures.accessToken(grant), refreshToken });
    const next = () => ({
      refreshToken: fixtures.refreshToken(grant),
      accessToken: fixtures.accessToken(grant),
    });
    await s.rotateRefreshToken(refreshToken.tokenHash, next(), NOW, 0);
    log = [];
    expect((await s.rotateRefreshToken(refreshToken.tokenHash, next(), NOW + 1, 0)).outcome).toBe('reused');
    expect(log).toHaveLength(3);
    expect((await s.getGrant(grant.grantId))?.revokedAt).toBe(NOW + 1);
  });
});

describe('SQL storage: writes are all or nothing', () => {
  it('createGrant writes no grant when one of its tokens cannot be stored', async () => {
    const s = await storage();
    const existing = fixtures.grant();
    const taken = fixtures.accessToken(existing);
    await s.createGrant({ grant: existing, accessToken: taken });
    const grant = fixtures.grant();
    // The same token hash: the token insert fails, and with it the whole statement.
    const clash = { ...fixtures.accessToken(grant), tokenHash: taken.tokenHash };
    await expect(
      s.createGrant({ grant, accessToken: clash, refreshToken: fixtures.refreshToken(grant) }),
    ).rejects.toThrow();
    expect(await s.getGrant(grant.grantId)).toBeNull();
    // The id is still free: the failed attempt left no row behind.
    expect(await s.createGrant({ grant, accessToken: fixtures.accessToken(grant) })).toBe(true);
  });

  it('a failed rotation writes neither the successor nor the access token, and leaves the old token active', async () => {
    const s = await storage();
    const grant = fixtures.grant();
    const refreshToken = fixtures.refreshToken(grant);
    const accessToken = fixtures.accessToken(grant);
    await s.createGrant({ grant, accessToken, refreshToken });
    const successor = fixtures.refreshToken(grant);
    const clash = { ...fixtures.accessToken(grant), tokenHash: accessToken.tokenHash };
    await expect(
      s.rotateRefreshToken(refreshToken.tokenHash, { refreshToken: successor, accessToken: clash }, NOW, 0),
    ).rejects.toThrow();
    expect(await s.getRefreshToken(successor.tokenHash, NOW)).toBeNull();
    expect((await s.getRefreshToken(refreshToken.tokenHash, NOW))?.rotatedAt).toBeUndefined();
  });
});

describe('SQL storage: deleteExpired', () => {
  it('deletes in batches of deleteBatchSize, one short statement each, until a batch comes back short', async () => {
    const s = await storage(10);
    const grant = fixtures.grant();
    await s.createGrant({ grant, accessToken: fixtures.accessToken(grant, { expiresAt: NOW + 900 }) });
    for (let i = 0; i < 24; i++)
      await s.createAccessToken(fixtures.accessToken(grant, { expiresAt: NOW + 1 }));
    const live = fixtures.accessToken(grant, { expiresAt: NOW + 10_000 });
    await s.createAccessToken(live);
    log = [];
    // 24 short-lived tokens plus the first one: 25 expired by NOW + 1000.
    expect(await s.deleteExpired(NOW + 1000)).toBe(25);
    const accessDeletes = log.filter((text) => /DELETE FROM "sql_test_\d+"\.access_tokens/.test(text));
    expect(accessDeletes).toHaveLength(3); // 10, 10, 5
    expect(log.every((text) => /LIMIT \$2/.test(text))).toBe(true);
    expect(await s.getAccessToken(live.tokenHash, NOW + 1000)).not.toBeNull();
    expect(await s.getGrant(grant.grantId)).not.toBeNull();
  });

  it('removes what expired in every table, keeps consumed codes and revoked placeholders for their tombstone time', async () => {
    const s = await storage();
    const client = fixtures.client({ expiresAt: NOW + 5 });
    await s.createClient(client);
    const code = fixtures.code({ expiresAt: NOW + 60 });
    await s.createAuthorizationCode(code);
    await s.consumeAuthorizationCode(code.codeHash, NOW);
    const placeholder = fixtures.grant();
    await s.revokeGrant(placeholder.grantId, NOW);

    await s.deleteExpired(NOW + 599);
    expect(await s.updateClient(client)).toBe(false);
    expect((await s.consumeAuthorizationCode(code.codeHash, NOW + 59))?.outcome).toBe('replayed');
    expect(await s.createGrant({ grant: placeholder, accessToken: fixtures.accessToken(placeholder) })).toBe(
      false,
    );

    // Ten minutes past the code's expiry and the revocation, both are gone.
    expect(await s.deleteExpired(NOW + 660)).toBe(2);
    expect(await s.createGrant({ grant: placeholder, accessToken: fixtures.accessToken(placeholder) })).toBe(
      true,
    );
  });
});

describe('pgliteStorage on a PGlite instance the host passes in', () => {
  it('uses it and leaves it open; storages in two schemas keep separate data', async () => {
    const a = pgliteStorage({ pglite: db }, { schema: 'tenant_a' });
    const b = pgliteStorage({ pglite: db }, { schema: 'tenant_b' });
    const client = fixtures.client();
    await a.createClient(client);
    expect(await b.getClient(client.clientId, client.createdAt)).toBeNull();
    // A second storage on a migrated schema starts without migrating again.
    const again = pgliteStorage({ pglite: db }, { schema: 'tenant_a' });
    expect(await again.getClient(client.clientId, client.createdAt)).toEqual(client);
    await Promise.all([a.close(), b.close(), again.close()]);
    const versions = await db.query<{ version: number }>(
      'SELECT version FROM tenant_a.portcullis_migrations',
    );
    expect(versions.rows).toEqual([{ version: 1 }]);
  });
});
