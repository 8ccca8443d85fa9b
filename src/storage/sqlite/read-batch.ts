/**
 * Read batching: the read steps of the SQLite storage that arrive in one turn of the event loop run
 * together after that turn's I/O callbacks, inside one read transaction.
 *
 * Why: in WAL mode every statement outside a transaction opens a read transaction of its own, and
 * opening one takes and releases a lock on the file's shared-memory index with two `fcntl` system
 * calls; for a query by primary key that is most of its cost (about 5 µs of the 7 µs measured on
 * this project's benchmark host, against 0.5 µs for a statement that reads no table). A protected
 * request makes one such read (its access token, or the `data_version` check of the token cache),
 * and under load the server reads a few dozen requests per turn of the event loop: one transaction
 * for all of them takes the lock once.
 *
 * What each read still sees: every commit acknowledged before it was submitted, by this process or
 * any other on the file. The batch opens its snapshot when it runs, which is after every read of the
 * batch was submitted; a commit acknowledged before a read was submitted happened before that. Of
 * the reads of one batch each sees the same snapshot, as reads submitted at the same moment would.
 * A read waits at most for the rest of its turn (under no load: one hop of the event loop).
 *
 * What it is not: a cache. Nothing read is kept past the batch (the access-token records of
 * `token-cache.ts` are kept by their own rules, checked inside the batch's snapshot), and the write
 * steps are not batched here but by `group-commit.ts`, in transactions of their own.
 * @module
 */
import { type PendingStep, TurnQueue } from './turn-queue.js';

const BEGIN = 'BEGIN DEFERRED';
const COMMIT = 'COMMIT';
const ROLLBACK = 'ROLLBACK';

/** Collects read steps (statements that only read) and runs each turn's reads in one read transaction. */
export class ReadBatch extends TurnQueue {
  constructor() {
    super(answerReads);
  }
}

function answerReads(reads: readonly PendingStep[]): void {
  const [first] = reads;
  if (first === undefined) return;
  if (reads.length === 1) {
    // Alone: a transaction would only add two statements.
    settle(first);
    return;
  }
  // Every read of one storage names the same database.
  const db = first.db;
  let open = false;
  if (!db.inTransaction) {
    try {
      db.run(BEGIN);
      open = true;
    } catch {
      // Refused: a transaction of the host's own is open on this connection (its own `BEGIN`),
      // and each read runs in it as it would have without the batch; or the host closed the
      // connection, and each read fails on its own.
    }
  }
  // The promises settle here; their callers resume after this function returns, so after the
  // transaction below has ended.
  for (const read of reads) settle(read);
  if (!open) return;
  try {
    db.run(COMMIT);
  } catch {
    // Nothing was written; SQLite may already have ended the transaction after a read's failure.
    try {
      db.run(ROLLBACK);
    } catch {
      // No transaction was left to end.
    }
  }
}

/** Runs one read and settles its promise with the result or the error. */
function settle(read: PendingStep): void {
  let value: unknown;
  try {
    value = read.body();
  } catch (error) {
    read.reject(error);
    return;
  }
  read.resolve(value);
}
