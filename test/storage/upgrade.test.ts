/**
 * A database created by the previous release (schema version 1, with the rows it wrote) upgrades in
 * place to this release's schema, and everything in it keeps working: a refresh token issued
 * before the upgrade rotates through the token endpoint, a token rotated before it is reuse, a
 * consumed code is still a tombstone, and version 1's revoked placeholders are ignored.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/core/crypto.js';
import { migrate, postgresStorage } from '../../src/storage/postgres.js';
import type { SqlExecutor, SqlQueryable } from '../../src/storage/sql/executor.js';
import { migrateSchema } from '../../src/storage/sql/migrations.js';
import type { Storage } from '../../src/storage/types.js';
import { fixtures } from '../../src/testing/index.js';
import { Harness, json, START } from '../helpers/harness.js';
import { randomSchemaName, requirePostgres } from '../helpers/services.js';

const postgres = await requirePostgres('upgrade of a version-1 schema on PostgreSQL');

/** A minimal executor over a pool, as the storage's driver has. */
function poolExecutor(pool: pg.Pool): SqlExecutor {
  const on = (target: pg.Pool | pg.PoolClient): SqlQueryable => ({
    query: async <Row>(statement: { text: string }, params: unknown[]) =>
      (await target.query(statement.text, params)).rows as Row[],
  });
  return {
    ...on(pool),
    async transaction(body) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await body(on(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        client.release();
      }
    },
    close: async () => {},
  };
}

describe.skipIf(postgres === undefined)(
  'upgrading a schema created by the previous release (PostgreSQL)',
  () => {
    const url = postgres?.url ?? '';
    const schema = randomSchemaName();
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const opened: Storage[] = [];
    afterAll(async () => {
      for (const storage of opened) await storage.close();
      await pool.end();
      await postgres?.dropSchema(schema);
    });

    it('upgrades in place with its data: an existing refresh token rotates, a rotated one is reuse, a consumed code replays', async () => {
      // Version 1, and the rows the previous release wrote into it.
      expect(await migrateSchema(poolExecutor(pool), schema, START - 3600, 1)).toMatchObject({
        toVersion: 1,
      });
      const s = `"${schema}"`;
      const clientId = 'client-before-upgrade';
      const live = 'refresh-token-issued-before-the-upgrade-0123456789';
      const rotated = 'refresh-token-rotated-before-the-upgrade-012345678';
      const codeHash = await sha256('code-consumed-before-the-upgrade');
      const metadata = {
        redirect_uris: ['http://127.0.0.1:49152/cb'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        application_type: 'native',
      };
      const t = START - 600;
      await pool.query(
        `INSERT INTO ${s}.clients (client_id, metadata, origin, created_at) VALUES ($1, $2, 'dynamic', $3)`,
        [clientId, JSON.stringify(metadata), t],
      );
      await pool.query(
        `INSERT INTO ${s}.grants (grant_id, client_id, user_id, scope, resources, auth_time, created_at, expires_at)
       VALUES ('g1', $1, 'ada', $2, $3, $4, $4, $5)`,
        [clientId, ['openid', 'courses:read'], ['https://school.example'], t, t + 90 * 86400],
      );
      const refreshRow = `INSERT INTO ${s}.refresh_tokens
      (token_hash, grant_id, client_id, user_id, scope, resources, issued_at, expires_at, rotated_at, successor_hash)
      VALUES ($1, 'g1', $2, 'ada', $3, $4, $5, $6, $7, $8)`;
      const scope = ['openid', 'courses:read'];
      const resources = ['https://school.example'];
      await pool.query(refreshRow, [
        await sha256(rotated),
        clientId,
        scope,
        resources,
        t,
        t + 86400,
        t + 1,
        await sha256(live),
      ]);
      await pool.query(refreshRow, [
        await sha256(live),
        clientId,
        scope,
        resources,
        t + 1,
        t + 86400,
        null,
        null,
      ]);
      await pool.query(
        `INSERT INTO ${s}.authorization_codes (code_hash, grant_id, client_id, user_id, redirect_uri, redirect_uri_sent,
         code_challenge, code_challenge_method, scope, resources, auth_time, created_at, expires_at, consumed_at)
       VALUES ($1, 'g1', $2, 'ada', 'http://127.0.0.1:49152/cb', true, 'x', 'S256', $3, $4, $5, $5, $6, $5)`,
        [codeHash, clientId, scope, resources, t, START + 30],
      );
      // A revoked placeholder, as version 1's revokeGrant left for a grant id not created yet.
      await pool.query(`INSERT INTO ${s}.grants (grant_id, revoked_at) VALUES ('placeholder', $1)`, [t]);

      expect(await migrate({ connectionString: url }, { schema })).toEqual({
        schema,
        fromVersion: 1,
        toVersion: 7,
        applied: [2, 3, 4, 5, 6, 7],
      });

      const storage = postgresStorage({ connectionString: url }, { schema, autoMigrate: false });
      opened.push(storage);
      // The refresh token carries its grant's auth_time, read from the grant.
      expect((await storage.grants.getRefreshToken(await sha256(live), START))?.authTime).toBe(t);
      expect(await storage.grants.get('placeholder')).toBeNull();
      expect((await storage.grants.listByUser('ada', START)).map((g) => g.grantId)).toEqual(['g1']);
      // The consumed code is a tombstone: a replay names its grant.
      expect((await storage.codes.get(codeHash, START))?.consumedAt).toBe(t);
      const grant = (await storage.grants.get('g1'))!;
      const accessToken = fixtures.accessToken(grant);
      expect(await storage.codes.redeem({ codeHash, grant, accessToken, now: START })).toEqual({
        outcome: 'replayed',
        grantId: 'g1',
        consumedAt: t,
      });

      const h = await Harness.start({ storage });
      try {
        const client = { client_id: clientId, redirect_uris: metadata.redirect_uris };
        const refreshed = await h.refresh(client, live);
        expect(refreshed.status).toBe(200);
        const successor = String(json(refreshed).refresh_token);
        expect(successor).not.toBe(live);
        // Rotated long before: reuse, which revokes the grant, the new successor with it (RT-02).
        const reuse = await h.refresh(client, rotated);
        expect(json(reuse).error).toBe('invalid_grant');
        expect(json(await h.refresh(client, successor)).error).toBe('invalid_grant');
      } finally {
        await h.close();
      }
      // Housekeeping removes the placeholder like any revoked grant.
      expect(await storage.deleteExpired(START + 60)).toBeGreaterThan(0);
      expect((await pool.query(`SELECT 1 FROM ${s}.grants WHERE grant_id = 'placeholder'`)).rowCount).toBe(0);
    });

    it('version 2 to 3: the token indexes by grant become (grant_id, expires_at); one an operator built CONCURRENTLY first is kept', async () => {
      const v2 = randomSchemaName();
      try {
        expect(await migrateSchema(poolExecutor(pool), v2, START, 2)).toMatchObject({ toVersion: 2 });
        const s = `"${v2}"`;
        // What docs/storage.md suggests on a large database: build the index without blocking writes.
        await pool.query(
          `CREATE INDEX CONCURRENTLY refresh_tokens_grant_id_expires_at_idx ON ${s}.refresh_tokens (grant_id, expires_at)`,
        );
        const before = postgresStorage({ pool }, { schema: v2, autoMigrate: false });
        await expect(before.keys.list()).rejects.toThrow(/version 2, this release needs 7/);
        expect(await migrate({ pool }, { schema: v2 })).toEqual({
          schema: v2,
          fromVersion: 2,
          toVersion: 7,
          applied: [3, 4, 5, 6, 7],
        });
        const { rows } = await pool.query<{ indexdef: string }>(
          `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename IN ('access_tokens', 'refresh_tokens')
           AND indexdef LIKE '%grant_id%' ORDER BY indexname`,
          [v2],
        );
        expect(rows.map((r) => r.indexdef.replace(/^.* USING /, ''))).toEqual([
          'btree (grant_id, expires_at)',
          'btree (grant_id, expires_at)',
        ]);
      } finally {
        await postgres?.dropSchema(v2);
      }
    });
  },
);
