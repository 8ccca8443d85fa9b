/**
 * Read batching in the SQLite storage (`read-batch.ts`): the read steps of one turn of the event
 * loop run together after the turn's I/O, in one read transaction (one lock of the shared-memory
 * index instead of one per read). What must hold: a read sees every commit acknowledged before it
 * was submitted, by any connection; a failing read fails alone and leaves no transaction open; a
 * transaction the host opened itself is respected; nothing submitted is lost by a close.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ReadBatch } from '../../src/storage/sqlite/read-batch.js';
import { type SqliteDatabase, sqliteStorage } from '../../src/storage/sqlite.js';
import { fixtures } from '../../src/testing/index.js';
import { NOW } from '../../src/testing/storage/fixtures.js';
import { scratchDir, twoConnections, wrapDatabase } from './sqlite-drivers.js';

const scratch = scratchDir();
const closers: Array<() => unknown> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  scratch.remove();
});

/** Two connections to one new file with a `notes` table, and a log of A's statements. */
async function loggedConnections(name: string) {
  const { a, b } = await twoConnections(scratch.file(name), closers);
  const log: string[] = [];
  const logged = wrapDatabase(a, {
    run: (sql, ...params) => {
      log.push(sql);
      return a.run(sql, ...params);
    },
    get: (sql, ...params) => {
      log.push(sql);
      return a.get(sql, ...params);
    },
    all: (sql, ...params) => {
      log.push(sql);
      return a.all(sql, ...params);
    },
    exec: (sql) => {
      log.push(sql);
      a.exec(sql);
    },
  });
  return { a: logged, b, log };
}

const COUNT = 'SELECT count(*) AS n FROM notes';
const count = (db: SqliteDatabase) => () => Number(db.get<{ n: number }>(COUNT)?.n);

describe('SQLite read batching', () => {
  it('runs the reads of one turn in one read transaction, and a lone read without one', async () => {
    const { a, log } = await loggedConnections('one-transaction.sqlite');
    const batch = new ReadBatch();
    const reads = [batch.submit(a, count(a)), batch.submit(a, count(a)), batch.submit(a, count(a))];
    // Nothing runs before the turn's I/O is over.
    expect(log).toEqual([]);
    expect(await Promise.all(reads)).toEqual([0, 0, 0]);
    expect(log).toEqual(['BEGIN DEFERRED', COUNT, COUNT, COUNT, 'COMMIT']);

    log.length = 0;
    expect(await batch.submit(a, count(a))).toBe(0);
    expect(log).toEqual([COUNT]);
  });

  it('gives the reads of one turn one snapshot, and a read of a later turn every commit acknowledged before it was submitted', async () => {
    const { a, b } = await loggedConnections('snapshot.sqlite');
    const batch = new ReadBatch();
    const first = batch.submit(a, count(a));
    // Another connection commits while the batch's transaction is open (from inside its second
    // read, before that read's query): the batch keeps the snapshot its first read opened.
    const second = batch.submit(a, () => {
      b.run('INSERT INTO notes (body) VALUES (?)', 'during the batch');
      return count(a)();
    });
    expect(await Promise.all([first, second])).toEqual([0, 0]);
    // Acknowledged: a read submitted now sees it.
    expect(await batch.submit(a, count(a))).toBe(1);

    b.run('INSERT INTO notes (body) VALUES (?)', 'before the turn');
    expect(await Promise.all([batch.submit(a, count(a)), batch.submit(a, count(a))])).toEqual([2, 2]);
  });

  it("answers a failing read with its error and the turn's other reads with their rows, leaving no transaction open", async () => {
    const { a } = await loggedConnections('failing.sqlite');
    a.run('INSERT INTO notes (body) VALUES (?)', 'one');
    const batch = new ReadBatch();
    const results = await Promise.allSettled([
      batch.submit(a, count(a)),
      batch.submit(a, () => a.get('SELECT nothing FROM no_such_table')),
      batch.submit(a, () => {
        throw new RangeError('a bad row');
      }),
      batch.submit(a, count(a)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect(results[0]).toMatchObject({ value: 1 });
    expect(results[2]).toMatchObject({ reason: expect.any(RangeError) });
    expect(results[3]).toMatchObject({ value: 1 });
    // The read transaction ended: a write transaction can begin, and its row is there for all.
    a.transaction(() => a.run('INSERT INTO notes (body) VALUES (?)', 'two'));
    expect(await batch.submit(a, count(a))).toBe(2);
  });

  it('runs the reads in a transaction the host opened on the connection, and leaves it open', async () => {
    const { a, b, log } = await loggedConnections('host-transaction.sqlite');
    a.exec('BEGIN');
    a.run('INSERT INTO notes (body) VALUES (?)', 'not yet committed');
    log.length = 0;
    const batch = new ReadBatch();
    // The host's own uncommitted row is visible to its reads, not to another connection's.
    expect(await Promise.all([batch.submit(a, count(a)), batch.submit(a, count(a))])).toEqual([1, 1]);
    expect(log).toEqual(['BEGIN DEFERRED', COUNT, COUNT]);
    expect(Number(b.get<{ n: number }>(COUNT)?.n)).toBe(0);
    a.exec('COMMIT');
    expect(Number(b.get<{ n: number }>(COUNT)?.n)).toBe(1);
  });

  it('answers the reads already submitted before the storage closes', async () => {
    const storage = sqliteStorage({ path: scratch.file('close.sqlite') });
    const client = fixtures.client();
    await storage.clients.create(client);
    const read = storage.clients.get(client.clientId, NOW);
    const closed = storage.close();
    expect(await read).toEqual(client);
    await closed;
    await expect(storage.clients.get(client.clientId, NOW)).rejects.toThrow(/closed/);
  });
});
