/**
 * The SQLite storage: the conformance kit on one file shared by two connections of this process,
 * and again with both sides of every race in separate child processes on one file (each serving its
 * storage over IPC, `startStorageProcess`), so that the atomic steps really run at the same time in
 * two processes; then what the kit cannot see: persistence, migrations in place, several processes
 * migrating one new file, the busy timeout answered as `temporarily_unavailable`, bounded cleanup.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { toOAuthError } from '../../src/core/errors.js';
import { pgliteStorage } from '../../src/storage/pglite.js';
import { openDatabaseImpl, SQLITE_FILE_NAME } from '../../src/storage/sqlite/database.js';
import { SqliteUnavailableError } from '../../src/storage/sqlite/errors.js';
import {
  LATEST_SQLITE_VERSION,
  migrateSqlite,
  SQLITE_MIGRATIONS,
  sqliteSchemaVersion,
} from '../../src/storage/sqlite/schema.js';
import {
  DELETE_BATCH_MILLIS,
  FIRST_DELETE_BATCH,
  SqliteStorage,
} from '../../src/storage/sqlite/sqlite-storage.js';
import { importPostgresStorage, openSqliteDatabase, sqliteStorage } from '../../src/storage/sqlite.js';
import type { RefreshTokenRecord, Storage } from '../../src/storage/types.js';
import { STORAGE_RETRY_AFTER_SECONDS, StorageUnavailableError } from '../../src/storage/unavailable.js';
import {
  fixtures,
  runStorageConformance,
  type StorageProcess,
  startStorageProcess,
} from '../../src/testing/index.js';
import { NOW } from '../../src/testing/storage/fixtures.js';
import { rotationOf } from '../../src/testing/storage/grants.js';
import { scratchDir, wrapDatabase } from './sqlite-drivers.js';

const scratch = scratchDir();
const opened: Storage[] = [];
const children: StorageProcess[] = [];
const open = (storage: Storage) => {
  opened.push(storage);
  return storage;
};
const CHILD = new URL('./sqlite-storage-process.ts', import.meta.url);
/** A child process serving the SQLite storage on `file`. */
async function child(file: string): Promise<StorageProcess> {
  const started = await startStorageProcess({ module: CHILD, args: [file], execArgv: ['--import', 'tsx'] });
  children.push(started);
  return started;
}

afterAll(async () => {
  await Promise.all(children.map((c) => c.close()));
  for (const storage of opened) await storage.close();
  scratch.remove();
});

// One file per suite, shared by its tests (each uses fresh random ids).
const sharedFile = scratch.file('kit.sqlite');
const first = open(sqliteStorage({ path: sharedFile }));
const secondConnection = open(sqliteStorage({ path: sharedFile }));
runStorageConformance(
  { describe, it, expect },
  {
    name: 'SQLite, two connections in one process',
    create: () => first,
    createSecond: () => secondConnection,
  },
);

// Both sides in child processes: the messages of a race reach both at once, and each runs its
// half while the other runs its own, contending for the file's write lock.
const processFile = scratch.file('processes.sqlite');
const processA = await child(processFile);
const processB = await child(processFile);
runStorageConformance(
  { describe, it, expect },
  {
    name: 'SQLite, two processes on one file',
    create: () => processA.storage,
    createSecond: () => processB.storage,
  },
);

describe('SQLite storage across processes', () => {
  it('ATOMIC rotate across two processes: 150 rounds in which both rotate the same token at once, each round exactly one rotates and the other is told of that successor (RFC 9700 §4.14.2)', async () => {
    const { grant, refreshToken } = await (async () => {
      const code = fixtures.code();
      await processA.storage.codes.create(code);
      const g = fixtures.grantOf(code);
      const rt = fixtures.refreshToken(g);
      const redeemed = await processA.storage.codes.redeem({
        codeHash: code.codeHash,
        grant: g,
        accessToken: fixtures.accessToken(g),
        refreshToken: rt,
        now: NOW,
      });
      expect(redeemed).toEqual({ outcome: 'redeemed' });
      return { grant: g, refreshToken: rt };
    })();
    let current: RefreshTokenRecord = refreshToken;
    const winners = { a: 0, b: 0 };
    for (let round = 0; round < 150; round++) {
      const a = rotationOf(grant, current, NOW, `sealed-a-${round}`);
      const b = rotationOf(grant, current, NOW, `sealed-b-${round}`);
      const [ra, rb] = await Promise.all([
        processA.storage.grants.rotateRefreshToken(a),
        processB.storage.grants.rotateRefreshToken(b),
      ]);
      const outcomes = [ra.outcome, rb.outcome].sort();
      expect(outcomes).toEqual(['already_rotated', 'rotated']);
      const won = ra.outcome === 'rotated' ? a : b;
      const lost = ra.outcome === 'rotated' ? rb : ra;
      expect(lost).toEqual({
        outcome: 'already_rotated',
        grantId: grant.grantId,
        rotatedAt: NOW,
        successorHash: won.successor.tokenHash,
        sealedSuccessor: won.sealedSuccessor,
      });
      winners[won === a ? 'a' : 'b']++;
      current = won.successor;
    }
    // Both processes won rounds: the races were real, not one process always first.
    expect(winners.a + winners.b).toBe(150);
    expect(Math.min(winners.a, winners.b)).toBeGreaterThan(0);
    const db = await openSqliteDatabase({ path: processFile });
    try {
      expect(db.get<{ integrity_check: string }>('PRAGMA integrity_check')?.integrity_check).toBe('ok');
      // The chain is linear: 151 tokens, 150 rotated, each to a distinct successor.
      const chain = db.get<{ n: number; rotated: number; successors: number }>(
        `SELECT count(*) AS n, count(rotated_at) AS rotated, count(DISTINCT successor_hash) AS successors
         FROM portcullis_refresh_tokens WHERE grant_id = ?`,
        grant.grantId,
      );
      expect(chain).toEqual({ n: 151, rotated: 150, successors: 150 });
    } finally {
      db.close();
    }
  }, 120_000);

  it('migrates a new file exactly once when several processes open it at the same moment', async () => {
    const file = scratch.file('fresh.sqlite');
    const started = await Promise.all([child(file), child(file), child(file)]);
    const db = await openSqliteDatabase({ path: file });
    try {
      // Each version once: applied by one process only.
      expect(db.all('SELECT version FROM portcullis_migrations ORDER BY version')).toEqual(
        SQLITE_MIGRATIONS.map((m) => ({ version: m.version })),
      );
    } finally {
      db.close();
    }
    const client = fixtures.client();
    await started[0]!.storage.clients.create(client);
    expect(await started[2]!.storage.clients.get(client.clientId, NOW)).toEqual(client);
    await Promise.all(started.map((s) => s.close()));
  }, 60_000);
});

describe('SQLite storage', () => {
  it('keeps its data in dataDir (one portcullis.sqlite) when closed and reopened', async () => {
    const dataDir = join(scratch.dir, 'nested', 'data');
    let storage = sqliteStorage({ dataDir });
    const client = fixtures.client();
    const code = fixtures.code({ clientId: client.clientId });
    const grant = fixtures.grantOf(code);
    const refreshToken = fixtures.refreshToken(grant);
    const key = fixtures.signingKey();
    await storage.clients.create(client);
    await storage.codes.create(code);
    const redemption = {
      codeHash: code.codeHash,
      grant,
      accessToken: fixtures.accessToken(grant),
      refreshToken,
    };
    expect(await storage.codes.redeem({ ...redemption, now: code.createdAt })).toEqual({
      outcome: 'redeemed',
    });
    await storage.keys.add(key);
    await storage.close();
    expect(existsSync(join(dataDir, SQLITE_FILE_NAME))).toBe(true);

    storage = open(sqliteStorage({ dataDir }));
    expect(await storage.clients.get(client.clientId, client.createdAt)).toEqual(client);
    expect(await storage.grants.getRefreshToken(refreshToken.tokenHash, refreshToken.issuedAt)).toEqual(
      refreshToken,
    );
    expect((await storage.keys.list()).find((k) => k.kid === key.kid)).toEqual(key);
  });

  it('refuses a data directory that holds a PGlite database, saying how to move it', async () => {
    const dataDir = join(scratch.dir, 'old-pglite');
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, 'PG_VERSION'), '17\n');
    const storage = sqliteStorage({ dataDir });
    const error = await storage.keys.list().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SqliteUnavailableError);
    expect((error as Error).message).toMatch(/PGlite.*Moving from PGlite/s);
    expect(existsSync(join(dataDir, SQLITE_FILE_NAME))).toBe(false);
  });

  it('applies a later migration in place: the rows stay, the version advances, a second run does nothing', async () => {
    const db = await openDatabaseImpl({ path: scratch.file('migrate.sqlite') });
    try {
      expect(migrateSqlite(db, NOW)).toEqual({
        fromVersion: 0,
        toVersion: LATEST_SQLITE_VERSION,
        applied: SQLITE_MIGRATIONS.map((m) => m.version),
      });
      const storage = sqliteStorage({ database: db });
      const client = fixtures.client();
      await storage.clients.create(client);
      const future = [
        ...SQLITE_MIGRATIONS,
        {
          version: LATEST_SQLITE_VERSION + 1,
          name: 'a later release adds a column',
          statements: ['ALTER TABLE portcullis_clients ADD COLUMN note TEXT'],
        },
      ];
      expect(migrateSqlite(db, NOW, { migrations: future })).toEqual({
        fromVersion: LATEST_SQLITE_VERSION,
        toVersion: LATEST_SQLITE_VERSION + 1,
        applied: [LATEST_SQLITE_VERSION + 1],
      });
      expect(migrateSqlite(db, NOW, { migrations: future }).applied).toEqual([]);
      expect(sqliteSchemaVersion(db)).toBe(LATEST_SQLITE_VERSION + 1);
      expect(await storage.clients.get(client.clientId, NOW)).toEqual(client);
      // This release, given a file a later release migrated, refuses it instead of guessing.
      expect(() => migrateSqlite(db, NOW)).toThrow(/newer than this release/);
    } finally {
      db.close();
    }
  });

  it('leaves the file as it was when a migration fails halfway', async () => {
    const db = await openDatabaseImpl({ path: scratch.file('failed-migration.sqlite') });
    try {
      const broken = [
        { version: 1, name: 'ok', statements: ['CREATE TABLE portcullis_a (x INTEGER) STRICT'] },
        {
          version: 2,
          name: 'fails',
          statements: ['CREATE TABLE portcullis_b (x INTEGER) STRICT', 'THIS IS NOT SQL'],
        },
      ];
      expect(() => migrateSqlite(db, NOW, { migrations: broken })).toThrow();
      expect(sqliteSchemaVersion(db)).toBe(0);
      expect(db.get("SELECT name FROM sqlite_schema WHERE name LIKE 'portcullis_%'")).toBeUndefined();
    } finally {
      db.close();
    }
  });

  it('answers a database another process keeps locked past the busy timeout with temporarily_unavailable and Retry-After, writing nothing', async () => {
    const file = scratch.file('busy.sqlite');
    const holder = await openSqliteDatabase({ path: file });
    const storage = open(sqliteStorage({ path: file, busyTimeoutMs: 50 }));
    await storage.keys.list(); // migrated before the lock is taken
    const client = fixtures.client();
    holder.exec('BEGIN IMMEDIATE');
    try {
      const error = await storage.clients.create(client).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StorageUnavailableError);
      expect(error).toMatchObject({ reason: 'timeout', mayHaveApplied: false });
      // What the server answers for it: the one mapping of every storage's outages.
      const oauthError = toOAuthError(error);
      expect(oauthError.code).toBe('temporarily_unavailable');
      expect(oauthError.status).toBe(503);
      expect(oauthError.headers['retry-after']).toBe(String(STORAGE_RETRY_AFTER_SECONDS));
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(await storage.clients.get(client.clientId, NOW)).toBeNull();
    await storage.clients.create(client);
    expect(await storage.clients.get(client.clientId, NOW)).toEqual(client);
  });

  it('FLT-05 deletes expired rows in batches of deleteBatchSize until none is left', async () => {
    const storage = open(sqliteStorage({ path: scratch.file('cleanup.sqlite'), deleteBatchSize: 2 }));
    for (let i = 0; i < 7; i++) await storage.interactions.create(fixtures.pending({ expiresAt: NOW + 1 }));
    const kept = fixtures.pending({ expiresAt: NOW + 100 });
    await storage.interactions.create(kept);
    expect(await storage.deleteExpired(NOW + 1)).toBe(7);
    expect(await storage.interactions.get(kept.idHash, NOW)).toEqual(kept);
    expect(await storage.deleteExpired(NOW + 1)).toBe(0);
  });

  it('FLT-05 sizes its cleanup batches by time: a batch over DELETE_BATCH_MILLIS makes the next one smaller, down to one row; a quick one, larger, up to deleteBatchSize', async () => {
    /** The storage on a fresh file, its clock advancing `step` ms per reading; the LIMIT of each pending-authorization batch. */
    const cleanup = async (step: number, expired: number) => {
      const db = await openSqliteDatabase({ path: ':memory:' });
      const limits: number[] = [];
      let time = 0;
      const storage = new SqliteStorage({
        open: async () =>
          wrapDatabase(db, {
            run: (sql, ...params) => {
              if (sql.startsWith('DELETE FROM portcullis_pending_authorizations'))
                limits.push(Number(params[1]));
              return db.run(sql, ...params);
            },
          }),
        owned: false,
        deleteBatchSize: 200,
        clock: () => (time += step),
      });
      for (let i = 0; i < expired; i++)
        await storage.interactions.create(fixtures.pending({ expiresAt: NOW + 1 }));
      const kept = fixtures.pending({ expiresAt: NOW + 100 });
      await storage.interactions.create(kept);
      const removed = await storage.deleteExpired(NOW + 1);
      expect(await storage.interactions.get(kept.idHash, NOW)).toEqual(kept);
      await storage.close();
      db.close();
      return { removed, limits };
    };
    expect(FIRST_DELETE_BATCH).toBe(64);
    // Each batch takes twice the budget: half the rows next time, then one at a time.
    const slow = await cleanup(2 * DELETE_BATCH_MILLIS, 130);
    expect(slow.removed).toBe(130);
    expect(slow.limits).toEqual([64, 32, 16, 8, 4, 2, 1, 1, 1, 1, 1]);
    // Each batch takes nothing: twice the rows next time, never more than deleteBatchSize.
    const quick = await cleanup(0, 700);
    expect(quick.removed).toBe(700);
    expect(quick.limits).toEqual([64, 128, 200, 200, 200]);
  });

  it('FLT-05 deletes, batch by batch, the grants its token batches leave without an unexpired token, and keeps a grant whose successor lives', async () => {
    const storage = open(sqliteStorage({ path: scratch.file('purge.sqlite'), deleteBatchSize: 2 }));
    const seed = async () => {
      const code = fixtures.code();
      await storage.codes.create(code);
      const grant = fixtures.grantOf(code);
      const refreshToken = fixtures.refreshToken(grant, { expiresAt: NOW + 1000 });
      const redeemed = await storage.codes.redeem({
        codeHash: code.codeHash,
        grant,
        accessToken: fixtures.accessToken(grant, { expiresAt: NOW + 900 }),
        refreshToken,
        now: NOW,
      });
      expect(redeemed).toEqual({ outcome: 'redeemed' });
      return { grant, refreshToken };
    };
    const idle = await Promise.all(Array.from({ length: 5 }, seed));
    const active = await seed();
    const rotation = rotationOf(active.grant, active.refreshToken);
    const lasting = { ...rotation, successor: { ...rotation.successor, expiresAt: NOW + 5000 } };
    expect(await storage.grants.rotateRefreshToken(lasting)).toEqual({ outcome: 'rotated' });
    // Over several batches of 2. Past the access tokens: the 6 consumed codes (past their tombstone
    // time) and 7 access tokens (the rotation's included); every grant keeps a live refresh token.
    expect(await storage.deleteExpired(NOW + 950)).toBe(6 + 7);
    for (const { grant } of [...idle, active]) expect(await storage.grants.get(grant.grantId)).not.toBeNull();
    // Past the refresh tokens but the successor: 6 refresh tokens, and the 5 idle grants with them.
    expect(await storage.deleteExpired(NOW + 1000)).toBe(6 + 5);
    for (const { grant } of idle) expect(await storage.grants.get(grant.grantId)).toBeNull();
    expect(await storage.grants.get(active.grant.grantId)).not.toBeNull();
    expect(await storage.grants.getRefreshToken(lasting.successor.tokenHash, NOW + 1000)).not.toBeNull();
    expect(await storage.deleteExpired(NOW + 1000)).toBe(0);
  });

  it('leaves a database passed in as `database` open when the storage closes', async () => {
    const db = await openSqliteDatabase({ path: ':memory:' });
    const storage = sqliteStorage({ database: db });
    await storage.keys.list();
    await storage.close();
    expect(db.get<{ one: number }>('SELECT 1 AS one')?.one).toBe(1);
    db.close();
  });

  it('refuses options out of bounds when created', () => {
    expect(() => sqliteStorage({ dataDir: scratch.dir, busyTimeoutMs: -1 })).toThrow(RangeError);
    expect(() => sqliteStorage({ dataDir: scratch.dir, deleteBatchSize: 0 })).toThrow(TypeError);
  });
});

describe('moving from PGlite (docs/storage.md, "Moving from PGlite")', () => {
  it('copies every aggregate from a PGlite storage into a new SQLite file, where every token keeps working', async () => {
    const pglite = await PGlite.create();
    const source = pgliteStorage({ pglite });
    const client = fixtures.client({ secretHash: 'c2VjcmV0', expiresAt: NOW + 3600 });
    await source.clients.create(client);
    const pending = fixtures.pending({ userId: 'user-1', csrfHash: 'csrf' });
    await source.interactions.create(pending);
    const unused = fixtures.code();
    await source.codes.create(unused);
    const used = fixtures.code({ clientId: client.clientId });
    await source.codes.create(used);
    const grant = fixtures.grantOf(used);
    const accessToken = fixtures.accessToken(grant);
    const refreshToken = fixtures.refreshToken(grant);
    await source.codes.redeem({ codeHash: used.codeHash, grant, accessToken, refreshToken, now: NOW });
    const rotation = rotationOf(grant, refreshToken, NOW + 5, 'sealed');
    await source.grants.rotateRefreshToken(rotation);
    const consent = {
      userId: grant.userId,
      clientId: client.clientId,
      scope: ['openid'],
      resources: [],
      createdAt: NOW,
      updatedAt: NOW,
    };
    await source.consents.save(consent);
    const keys = [
      fixtures.signingKey({ createdAt: NOW }),
      fixtures.signingKey({ createdAt: NOW, alg: 'RS256' }),
    ];
    for (const key of keys) await source.keys.add(key);

    const db = await openSqliteDatabase({ path: scratch.file('imported.sqlite') });
    try {
      expect(await importPostgresStorage(pglite, db)).toEqual({
        clients: 1,
        pendingAuthorizations: 1,
        codes: 2,
        grants: 1,
        accessTokens: 2,
        refreshTokens: 2,
        consents: 1,
        signingKeys: 2,
      });
      const target = sqliteStorage({ database: db });
      expect(await target.clients.get(client.clientId, NOW)).toEqual(client);
      expect(await target.interactions.get(pending.idHash, NOW)).toEqual(pending);
      expect(await target.codes.get(unused.codeHash, NOW)).toEqual(unused);
      expect(await target.codes.get(used.codeHash, NOW)).toEqual({ ...used, consumedAt: NOW });
      expect(await target.grants.get(grant.grantId)).toEqual(grant);
      expect(await target.grants.getAccessToken(rotation.accessToken.tokenHash, NOW + 5)).toEqual(
        rotation.accessToken,
      );
      // The rotated token is still recognised (a retry within the grace window, or a reuse).
      expect((await target.grants.rotateRefreshToken(rotationOf(grant, refreshToken, NOW + 6))).outcome).toBe(
        'already_rotated',
      );
      expect(await target.grants.getRefreshToken(rotation.successor.tokenHash, NOW + 6)).toEqual(
        rotation.successor,
      );
      expect(await target.consents.get(consent.userId, consent.clientId)).toEqual(consent);
      expect((await target.keys.list()).map((k) => k.kid)).toEqual(keys.map((k) => k.kid));
      // Only into an empty storage: a second import would mix two histories.
      await expect(importPostgresStorage(pglite, db)).rejects.toThrow(/already holds storage data/);
    } finally {
      db.close();
      await pglite.close();
    }
  }, 60_000);
});
