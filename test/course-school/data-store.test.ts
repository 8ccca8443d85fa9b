/**
 * One suite for every DataStore: the in-memory store, the SQLite store (the default, on a file
 * shared with the library's storage), and the SQL store on PGlite (in memory) and on PostgreSQL (`DATABASE_URL`, default the local test database; skipped when unreachable, a
 * failure under `CI=true`),
 * in a schema of its own that is dropped afterwards.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryDataStore } from '../../examples/course-school/src/data/memory-store.js';
import { createSqlDataStore } from '../../examples/course-school/src/data/sql-store.js';
import { createSqliteDataStore } from '../../examples/course-school/src/data/sqlite-store.js';
import type { DataStore, NewRecord } from '../../examples/course-school/src/data/store.js';
import { openSqliteDatabase } from '../../src/storage/sqlite.js';
import { randomSchemaName, requirePostgres } from '../helpers/services.js';

interface Driver {
  name: string;
  open(): Promise<{ store: DataStore; close(): Promise<void> }>;
}

const postgres = await requirePostgres('the course-school DataStore on PostgreSQL');

const drivers: Driver[] = [
  { name: 'memory', open: async () => ({ store: createMemoryDataStore(), close: async () => {} }) },
  {
    name: 'SQLite',
    open: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'cs-data-store-'));
      const db = await openSqliteDatabase({ dataDir: dir });
      return {
        store: createSqliteDataStore(db),
        close: async () => {
          db.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PGlite',
    open: async () => {
      const db = await PGlite.create();
      return { store: createSqlDataStore(db), close: () => db.close() };
    },
  },
  {
    name: 'PostgreSQL',
    open: async () => {
      const url = postgres!.url;
      const schema = randomSchemaName();
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      const pool = new pg.Pool({
        connectionString: url,
        options: `-c search_path=${schema}`,
        max: 4,
      });
      return {
        store: createSqlDataStore(pool),
        close: async () => {
          await pool.end();
          await admin.query(`DROP SCHEMA ${schema} CASCADE`);
          await admin.end();
        },
      };
    },
  },
];

const record = (id: string, extra: Partial<NewRecord> = {}): NewRecord => ({
  kind: 'course',
  id,
  isPublic: true,
  searchText: `Course ${id}`,
  data: { title: `Course ${id}`, nested: { list: [1, 2] } },
  ...extra,
});

describe.each(drivers)('DataStore on $name', (driver) => {
  const skip = driver.name === 'PostgreSQL' && postgres === undefined;
  let store: DataStore;
  let close: () => Promise<void>;

  beforeAll(async () => {
    if (skip) return;
    ({ store, close } = await driver.open());
    await store.migrate();
    await store.migrate(); // idempotent
  });
  afterAll(async () => {
    if (!skip) await close();
  });

  it.skipIf(skip)('creates and finds users by id and case-insensitive email', async () => {
    await store.createUser({
      id: 'u1',
      email: 'ann@example.com',
      name: 'Ann',
      role: 'owner',
      passwordHash: 'h',
      createdAt: 5,
    });
    expect(await store.getUser('u1')).toEqual({
      id: 'u1',
      email: 'ann@example.com',
      name: 'Ann',
      role: 'owner',
      passwordHash: 'h',
      createdAt: 5,
    });
    expect((await store.getUserByEmail('ANN@example.com'))?.id).toBe('u1');
    expect(await store.getUser('nobody')).toBeNull();
    expect((await store.renameUser('u1', 'Annie'))?.name).toBe('Annie');
    await expect(
      store.createUser({
        id: 'u2',
        email: 'ann@example.com',
        name: 'X',
        role: 'student',
        passwordHash: 'h',
        createdAt: 5,
      }),
    ).rejects.toThrow();
  });

  it.skipIf(skip)('keeps sessions until they expire', async () => {
    await store.createSession({ idHash: 's1', userId: 'u1', authTime: 10, csrfToken: 'c', expiresAt: 1000 });
    expect((await store.getSession('s1', 999))?.csrfToken).toBe('c');
    expect(await store.getSession('s1', 1000)).toBeNull();
    expect(await store.deleteExpiredSessions(1000)).toBe(1);
    await store.createSession({ idHash: 's2', userId: 'u1', authTime: 10, csrfToken: 'c', expiresAt: 1000 });
    await store.deleteSession('s2');
    expect(await store.getSession('s2', 0)).toBeNull();
  });

  it.skipIf(skip)('inserts records once, reads them back with their JSON intact', async () => {
    expect(await store.insertRecord(record('c1'), 100)).toBe(true);
    expect(await store.insertRecord(record('c1', { data: { title: 'other' } }), 200)).toBe(false);
    expect(await store.getRecord('course', 'c1')).toEqual({
      kind: 'course',
      id: 'c1',
      parentId: null,
      ownerId: null,
      isPublic: true,
      data: { title: 'Course c1', nested: { list: [1, 2] } },
      createdAt: 100,
      updatedAt: 100,
    });
    expect(await store.getRecord('page', 'c1')).toBeNull();
  });

  it.skipIf(skip)('pages through records in creation order with filters and search', async () => {
    for (const id of ['c2', 'c3', 'c4', 'c5']) {
      await store.insertRecord(
        record(id, { isPublic: id !== 'c3', ownerId: id === 'c4' ? 'u1' : null }),
        100,
      );
    }
    const ids: string[] = [];
    let after: string | undefined;
    do {
      const page = await store.listRecords('course', { limit: 2, ...(after === undefined ? {} : { after }) });
      expect(page.items.length).toBeLessThanOrEqual(2);
      ids.push(...page.items.map((r) => r.id));
      after = page.next ?? undefined;
    } while (after !== undefined);
    expect(ids).toEqual(['c1', 'c2', 'c3', 'c4', 'c5']);
    expect(
      (await store.listRecords('course', { limit: 10, publicOnly: true })).items.map((r) => r.id),
    ).toEqual(['c1', 'c2', 'c4', 'c5']);
    expect((await store.listRecords('course', { limit: 10, ownerId: 'u1' })).items.map((r) => r.id)).toEqual([
      'c4',
    ]);
    expect(
      (await store.listRecords('course', { limit: 10, search: 'COURSE C5' })).items.map((r) => r.id),
    ).toEqual(['c5']);
    // LIKE wildcards in a search are literal characters.
    expect((await store.listRecords('course', { limit: 10, search: '%' })).items).toEqual([]);
    expect(await store.countRecords('course')).toBe(5);
    expect(await store.countRecords('course', { ownerId: 'u1' })).toBe(1);
  });

  it.skipIf(skip)('updates data and derived columns; deletes a record with its children', async () => {
    const updated = await store.updateRecord(
      'course',
      'c2',
      { isPublic: false, searchText: 'renamed', data: { title: 'Renamed' } },
      300,
    );
    expect(updated).toMatchObject({
      isPublic: false,
      data: { title: 'Renamed' },
      createdAt: 100,
      updatedAt: 300,
    });
    expect(
      (await store.listRecords('course', { limit: 10, search: 'renamed' })).items.map((r) => r.id),
    ).toEqual(['c2']);
    expect(await store.updateRecord('course', 'nope', { isPublic: true, data: {} }, 1)).toBeNull();
    await store.insertRecord({ kind: 'lesson', id: 'l1', parentId: 'c2', isPublic: true, data: {} }, 1);
    expect(await store.deleteRecord('course', 'c2')).toBe(true);
    expect(await store.getRecord('lesson', 'l1')).toBeNull();
    expect(await store.deleteRecord('course', 'c2')).toBe(false);
  });

  it.skipIf(skip)('keeps the first value of a meta key', async () => {
    expect(await store.getMeta('k')).toBeNull();
    expect(await store.putMetaIfAbsent('k', 'first')).toBe('first');
    expect(await store.putMetaIfAbsent('k', 'second')).toBe('first');
    expect(await store.getMeta('k')).toBe('first');
  });
});

describe.skipIf(postgres === undefined)('course-school tables on PostgreSQL', () => {
  it('instances migrating an empty schema at the same moment all start (lost CREATE races are fine)', async () => {
    const url = postgres!.url;
    // Each round: six stores on their own connections race through the same CREATE ... IF NOT EXISTS
    // statements; PostgreSQL reports a lost race as 23505, 42P07 or 42710 depending on the moment.
    for (let round = 0; round < 4; round++) {
      const schema = randomSchemaName();
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      const pools = Array.from(
        { length: 6 },
        () => new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 1 }),
      );
      try {
        const results = await Promise.allSettled(pools.map((pool) => createSqlDataStore(pool).migrate()));
        expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
        const store = createSqlDataStore(pools[0]!);
        await store.createUser({
          id: 'u1',
          email: 'ada@example.com',
          name: 'Ada',
          role: 'owner',
          passwordHash: 'x',
          createdAt: 1,
        });
        expect((await store.getUserByEmail('ADA@example.com'))?.id).toBe('u1');
      } finally {
        await Promise.all(pools.map((pool) => pool.end()));
        await admin.query(`DROP SCHEMA ${schema} CASCADE`);
        await admin.end();
      }
    }
  });
});
