import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { runMigrateCli } from '../../src/cli/migrate-cli.js';
import { migrate, postgresStorage } from '../../src/storage/postgres.js';
import type { SqlExecutor, SqlQueryable } from '../../src/storage/sql/executor.js';
import { migrateSchema } from '../../src/storage/sql/migrations.js';
import { fixtures } from '../../src/testing/index.js';
import { randomSchemaName, requirePostgres } from '../helpers/services.js';

const postgres = await requirePostgres('migration tests on PostgreSQL');

/** Migrates inside the transaction `client` has already begun (and keeps open). */
function migrateInTransaction(client: pg.Client, schema: string) {
  const queryable: SqlQueryable = {
    query: async <Row>(statement: { text: string }, params: unknown[]) =>
      (await client.query(statement.text, params)).rows as Row[],
  };
  const executor: SqlExecutor = {
    ...queryable,
    transaction: (body) => body(queryable),
    close: async () => {},
  };
  return migrateSchema(executor, schema, Math.floor(Date.now() / 1000));
}

describe.skipIf(postgres === undefined)('storage schema migrations (PostgreSQL)', () => {
  const url = postgres?.url ?? '';
  const schemas: string[] = [];
  const fresh = () => {
    const name = randomSchemaName();
    schemas.push(name);
    return name;
  };

  afterEach(async () => {
    for (const name of schemas.splice(0)) await postgres!.dropSchema(name);
  });

  async function postgresRows<Row extends pg.QueryResultRow>(
    text: string,
    params: unknown[] = [],
  ): Promise<Row[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<Row>(text, params)).rows;
    } finally {
      await client.end();
    }
  }

  async function tablesOf(schema: string): Promise<string[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const result = await client.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
        [schema],
      );
      return result.rows.map((row) => row.table_name);
    } finally {
      await client.end();
    }
  }

  it('migrate() creates every table in a fresh schema, and a second run applies nothing', async () => {
    const schema = fresh();
    const first = await migrate({ connectionString: url }, { schema });
    expect(first).toEqual({ schema, fromVersion: 0, toVersion: 7, applied: [1, 2, 3, 4, 5, 6, 7] });
    expect(await tablesOf(schema)).toEqual([
      'access_tokens',
      'authorization_codes',
      'clients',
      'consents',
      'grants',
      'pending_authorizations',
      'portcullis_migrations',
      'refresh_tokens',
      'replay_keys',
      'signing_keys',
    ]);
    const second = await migrate({ connectionString: url }, { schema });
    expect(second).toEqual({ schema, fromVersion: 7, toVersion: 7, applied: [] });
  });

  it('several migrators at once: exactly one applies each version, none fails', async () => {
    const schema = fresh();
    const reports = await Promise.all(
      Array.from({ length: 4 }, () => migrate({ connectionString: url }, { schema })),
    );
    expect(reports.filter((r) => r.applied.length > 0)).toHaveLength(1);
    expect(reports.every((r) => r.toVersion === 7)).toBe(true);
  });

  it('storages starting at once on a fresh schema all work (auto-migration is serialised)', async () => {
    const schema = fresh();
    const storages = Array.from({ length: 3 }, () => postgresStorage({ connectionString: url }, { schema }));
    try {
      const clients = storages.map(() => fixtures.client());
      await Promise.all(storages.map((storage, i) => storage.clients.create(clients[i]!)));
      for (const client of clients) {
        expect((await storages[0]!.clients.get(client.clientId, client.createdAt))?.clientId).toBe(
          client.clientId,
        );
      }
    } finally {
      await Promise.all(storages.map((storage) => storage.close()));
    }
  });

  it('a migrator that waited for the lock while another process migrated finds the schema done, even on a connection that ran DDL before', async () => {
    const schema = fresh();
    // One connection for the waiting migrator, which has run DDL before (as a host migrating its
    // own tables on the same pool does): its catalog cache then keeps saying, after the wait, that
    // the schema it looked for before the lock does not exist.
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    await pool.query(`CREATE SCHEMA "${fresh()}"`);
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      const otherPid = (await other.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      // Another process holds the migration lock and is creating the schema.
      await other.query('BEGIN');
      await other.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        `portcullis.migrate:${schema}`,
      ]);
      const waiting = migrate({ pool }, { schema });
      // Until the migrator waits on that lock (polled, not timed; outside a transaction, where
      // pg_stat_activity is read afresh each time).
      for (;;) {
        const [row] = await postgresRows<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.locktype = 'advisory' AND NOT l.granted AND a.query LIKE '%pg_advisory_xact_lock%'
             AND a.pid <> $1`,
          [otherPid],
        );
        if (row!.n > 0) break;
      }
      await migrateInTransaction(other, schema);
      await other.query('COMMIT');
      const report = await waiting;
      expect(report).toMatchObject({ schema, toVersion: 7, applied: [] });
      expect(await tablesOf(schema)).toContain('signing_keys');
    } finally {
      await other.end();
      await pool.end();
    }
  });

  it('with autoMigrate off, a storage refuses a schema that is behind and names the command', async () => {
    const schema = fresh();
    const storage = postgresStorage({ connectionString: url }, { schema, autoMigrate: false });
    try {
      await expect(storage.clients.get('any', 0)).rejects.toThrow(/version 0.*portcullis-migrate/);
      expect(await tablesOf(schema)).toEqual([]);
      await migrate({ connectionString: url }, { schema });
      expect(await storage.clients.get('any', 0)).toBeNull();
    } finally {
      await storage.close();
    }
  });

  it('the portcullis-migrate command migrates a fresh schema, then reports it up to date', async () => {
    const schema = fresh();
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      env: { DATABASE_URL: url },
      out: (l: string) => out.push(l),
      err: (l: string) => err.push(l),
    };
    expect(await runMigrateCli(['--schema', schema], io)).toBe(0);
    expect(out).toEqual([
      `portcullis-migrate: schema "${schema}" migrated from version 0 to 7 (applied 1, 2, 3, 4, 5, 6, 7)`,
    ]);
    expect(await tablesOf(schema)).toContain('grants');
    expect(await runMigrateCli(['--database-url', url, '--schema', schema], io)).toBe(0);
    expect(out[1]).toBe(`portcullis-migrate: schema "${schema}" is up to date (version 7)`);
    expect(err).toEqual([]);
  });

  it('the command refuses bad usage with exit code 2, and a failed migration with 1', async () => {
    const lines: string[] = [];
    const io = { env: {}, out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
    expect(await runMigrateCli([], io)).toBe(2);
    expect(lines[0]).toMatch(/--database-url or set DATABASE_URL/);
    expect(await runMigrateCli(['--database-url', url, '--schema', 'no-dashes'], io)).toBe(2);
    expect(await runMigrateCli(['--unknown'], io)).toBe(2);
    const refused = new URL(url);
    refused.username = 'portcullis_no_such_role';
    expect(await runMigrateCli(['--database-url', refused.toString(), '--schema', fresh()], io)).toBe(1);
    // The URL may carry a password: it never appears in the output.
    expect(lines.some((l) => l.includes('portcullis_no_such_role@'))).toBe(false);
  });
});
