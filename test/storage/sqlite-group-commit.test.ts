/**
 * Group commit in the SQLite storage: the write steps of one turn of the event loop share one
 * transaction. What must hold is what a transaction per step gave: each step atomic (a failing one
 * undone alone), the steps serial (two rotations of one token: exactly one rotates), nothing
 * answered before its commit, and a group whose commit fails answering every step with the failure
 * and writing nothing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { GroupCommit, MAX_STEPS_PER_TRANSACTION } from '../../src/storage/sqlite/group-commit.js';
import { openSqliteDatabase, sqliteStorage } from '../../src/storage/sqlite.js';
import type { Storage } from '../../src/storage/types.js';
import { StorageUnavailableError } from '../../src/storage/unavailable.js';
import { fixtures } from '../../src/testing/index.js';
import { NOW } from '../../src/testing/storage/fixtures.js';
import { rotationOf } from '../../src/testing/storage/grants.js';
import { createKit } from '../../src/testing/storage/runner.js';
import { scratchDir, wrapDatabase } from './sqlite-drivers.js';

const scratch = scratchDir();
const closers: Array<() => unknown> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  scratch.remove();
});

/**
 * A storage over a database whose transactions are counted (and, when `failCommit` says so, fail
 * after their body ran: a COMMIT that did not happen, everything rolled back).
 */
async function counted(name: string, options: { busyTimeoutMs?: number } = {}) {
  const db = await openSqliteDatabase({ path: scratch.file(name), ...options });
  const state = { transactions: 0, failCommit: false, statements: [] as string[] };
  const wrapped = wrapDatabase(db, {
    run: (sql, ...params) => {
      state.statements.push(sql);
      return db.run(sql, ...params);
    },
    transaction: (fn) => {
      state.transactions++;
      return db.transaction(() => {
        const result = fn();
        if (state.failCommit) {
          throw new StorageUnavailableError('connection_lost', 'injected: the commit failed');
        }
        return result;
      });
    },
  });
  const storage: Storage = sqliteStorage({ database: wrapped });
  closers.push(
    () => db.close(),
    () => storage.close(),
  );
  await storage.keys.list(); // opened and migrated before anything is counted
  return { storage, state, db };
}

/** The kit's harness, for its `seedGrant`: a code redeemed into a grant with both tokens. */
const kit = createKit(
  { describe, it, expect },
  {
    name: 'group commit',
    create: () => {
      throw new Error('each test here opens its own storage');
    },
  },
);
const redeemed = (storage: Storage) => kit.seedGrant(storage);

describe('SQLite group commit', () => {
  it('commits the write steps of one turn in one transaction, each answered once committed and readable from another connection', async () => {
    const { storage, state } = await counted('one-turn.sqlite');
    const clients = Array.from({ length: 10 }, () => fixtures.client());
    const before = state.transactions;
    await Promise.all(clients.map((client) => storage.clients.create(client)));
    expect(state.transactions - before).toBe(1);
    // No step failed: no savepoint was needed.
    expect(state.statements.filter((sql) => sql.startsWith('SAVEPOINT'))).toEqual([]);
    const other = await openSqliteDatabase({ path: scratch.file('one-turn.sqlite') });
    closers.push(() => other.close());
    const stored = other.all<{ client_id: string }>('SELECT client_id FROM portcullis_clients');
    expect(stored.map((row) => row.client_id).sort()).toEqual(clients.map((c) => c.clientId).sort());
    // A later turn commits on its own.
    await storage.clients.create(fixtures.client());
    expect(state.transactions - before).toBe(2);
  });

  it('splits a turn of more steps than one transaction holds into transactions of at most 64, one after the other', async () => {
    const { storage, state } = await counted('many.sqlite');
    const clients = Array.from({ length: 2 * MAX_STEPS_PER_TRANSACTION + 22 }, () => fixtures.client());
    const before = state.transactions;
    await Promise.all(clients.map((client) => storage.clients.create(client)));
    expect(MAX_STEPS_PER_TRANSACTION).toBe(64);
    expect(state.transactions - before).toBe(3);
    for (const client of clients) expect(await storage.clients.get(client.clientId, NOW)).toEqual(client);
  });

  it('commits the write steps submitted before close(), then closes', async () => {
    const file = scratch.file('close.sqlite');
    const storage = sqliteStorage({ path: file });
    await storage.keys.list();
    const clients = Array.from({ length: 3 }, () => fixtures.client());
    const created = Promise.all(clients.map((client) => storage.clients.create(client)));
    await storage.close();
    await expect(created).resolves.toHaveLength(3);
    const reopened = sqliteStorage({ path: file });
    closers.push(() => reopened.close());
    for (const client of clients) expect(await reopened.clients.get(client.clientId, NOW)).toEqual(client);
  });

  it('undoes a step that fails halfway, alone: its first statements rolled back, the other steps of its turn committed', async () => {
    const { storage, state } = await counted('atomic.sqlite');
    const earlier = await redeemed(storage);
    // A code whose redemption fails at its third statement: its access token's hash is taken.
    const code = fixtures.code();
    await storage.codes.create(code);
    const grant = fixtures.grantOf(code);
    const client = fixtures.client();
    const before = state.transactions;
    const [created, failed] = await Promise.allSettled([
      storage.clients.create(client),
      storage.codes.redeem({
        codeHash: code.codeHash,
        grant,
        accessToken: { ...fixtures.accessToken(grant), tokenHash: earlier.accessToken.tokenHash },
        refreshToken: fixtures.refreshToken(grant),
        now: NOW,
      }),
    ]);
    // Once without savepoints (rolled back when the redemption threw), once with a savepoint each.
    expect(state.transactions - before).toBe(2);
    expect(state.statements.filter((sql) => sql.startsWith('SAVEPOINT'))).toHaveLength(2);
    expect(created.status).toBe('fulfilled');
    expect(failed.status).toBe('rejected');
    expect(await storage.clients.get(client.clientId, NOW)).toEqual(client);
    // The code was consumed and the grant created before the failing insert: both undone.
    expect((await storage.codes.get(code.codeHash, NOW))?.consumedAt).toBeUndefined();
    expect(await storage.grants.get(grant.grantId)).toBeNull();
    // And the code still redeems once.
    const retried = await storage.codes.redeem({
      codeHash: code.codeHash,
      grant,
      accessToken: fixtures.accessToken(grant),
      refreshToken: fixtures.refreshToken(grant),
      now: NOW,
    });
    expect(retried).toEqual({ outcome: 'redeemed' });
  });

  it('ATOMIC two rotations of one refresh token in one turn: exactly one rotates, the other is told of that successor (RFC 9700 §4.14.2)', async () => {
    const { storage, state } = await counted('race.sqlite');
    for (let round = 0; round < 20; round++) {
      const { grant, refreshToken } = await redeemed(storage);
      const a = rotationOf(grant, refreshToken, NOW, 'sealed-a');
      const b = rotationOf(grant, refreshToken, NOW, 'sealed-b');
      const before = state.transactions;
      const outcomes = await Promise.all([
        storage.grants.rotateRefreshToken(a),
        storage.grants.rotateRefreshToken(b),
      ]);
      expect(state.transactions - before).toBe(1);
      const winners = outcomes.filter((o) => o.outcome === 'rotated');
      expect(winners).toHaveLength(1);
      const [first, second] = outcomes;
      expect(first).toEqual({ outcome: 'rotated' });
      expect(second).toEqual({
        outcome: 'already_rotated',
        grantId: grant.grantId,
        rotatedAt: NOW,
        successorHash: a.successor.tokenHash,
        sealedSuccessor: 'sealed-a',
      });
      expect(await storage.grants.getRefreshToken(b.successor.tokenHash, NOW)).toBeNull();
      expect(await storage.grants.getAccessToken(b.accessToken.tokenHash, NOW)).toBeNull();
    }
  });

  it('answers every step of a group whose commit fails with the failure, and writes none of them', async () => {
    const { storage, state } = await counted('commit-fails.sqlite');
    const clients = Array.from({ length: 3 }, () => fixtures.client());
    state.failCommit = true;
    const results = await Promise.allSettled(clients.map((client) => storage.clients.create(client)));
    state.failCommit = false;
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(StorageUnavailableError);
    }
    for (const client of clients) expect(await storage.clients.get(client.clientId, NOW)).toBeNull();
  });

  it("fails the whole group with a step's own error when SQLite ended the transaction under it (a full disk), writing nothing", async () => {
    const db = await openSqliteDatabase({ path: scratch.file('ended.sqlite') });
    closers.push(() => db.close());
    db.exec('CREATE TABLE notes (id TEXT PRIMARY KEY) STRICT');
    const group = new GroupCommit();
    const full = new StorageUnavailableError('overloaded', 'injected: the disk is full');
    const results = await Promise.allSettled([
      group.submit(db, () => db.run('INSERT INTO notes (id) VALUES (?)', 'kept?')),
      group.submit(db, () => {
        db.run('INSERT INTO notes (id) VALUES (?)', 'mine');
        db.exec('ROLLBACK'); // what SQLite does itself on SQLITE_FULL or SQLITE_IOERR
        throw full;
      }),
      group.submit(db, () => db.run('INSERT INTO notes (id) VALUES (?)', 'after')),
    ]);
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toBe(full);
    }
    expect(db.all('SELECT id FROM notes')).toEqual([]);
    expect(db.inTransaction).toBe(false);
    // The connection is usable: the next turn commits.
    await group.submit(db, () => db.run('INSERT INTO notes (id) VALUES (?)', 'next'));
    expect(db.all('SELECT id FROM notes')).toEqual([{ id: 'next' }]);
  });

  it('answers every step of a group with temporarily_unavailable when another connection holds the write lock past the busy timeout, writing nothing', async () => {
    const { storage } = await counted('busy.sqlite', { busyTimeoutMs: 50 });
    const { grant, refreshToken } = await redeemed(storage);
    const holder = await openSqliteDatabase({ path: scratch.file('busy.sqlite') });
    closers.push(() => holder.close());
    const client = fixtures.client();
    const rotation = rotationOf(grant, refreshToken);
    holder.exec('BEGIN IMMEDIATE');
    let results: PromiseSettledResult<unknown>[];
    try {
      results = await Promise.allSettled([
        storage.clients.create(client),
        storage.grants.rotateRefreshToken(rotation),
      ]);
    } finally {
      holder.exec('ROLLBACK');
    }
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toMatchObject({
        reason: 'timeout',
        mayHaveApplied: false,
      });
    }
    expect(await storage.clients.get(client.clientId, NOW)).toBeNull();
    // The token was not rotated: it rotates now.
    expect(await storage.grants.rotateRefreshToken(rotation)).toEqual({ outcome: 'rotated' });
  });
});
