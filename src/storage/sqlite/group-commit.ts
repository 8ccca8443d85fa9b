/**
 * Group commit: the write steps of the SQLite storage that arrive in one turn of the event loop
 * share one transaction, and so one write lock, one write-ahead-log commit and one look at whether
 * the log needs a checkpoint.
 *
 * Why: SQLite's cost per write is mostly per commit, not per row. A commit takes and releases the
 * file's locks (`fcntl` system calls), writes every page it changed to the log (two `pwrite`s per
 * page), and every 1,000 pages copies the log into the database file with two `fsync`s. The
 * pages the steps of one turn change overlap (the last page of each table, of each `expires_at`
 * index), so one commit for all of them writes fewer pages than one commit each. Under load the
 * server reads several requests per turn of the event loop; when it is idle a step waits for no
 * one (its turn holds only itself).
 *
 * What stays as it was:
 * - Atomic: a step that throws has its writes undone and the others' kept, and its caller gets the
 *   error. The group first runs without savepoints (each would cost two statements and a copy of
 *   every page the step changes); when a step throws, the whole transaction is rolled back and the
 *   group runs again with each step inside its own `SAVEPOINT`, rolled back to it when it throws.
 *   So a step's body may run twice, and must do nothing but its statements (and what is safe to
 *   repeat).
 * - Serial: the steps run one after the other in the order they were submitted, under the file's
 *   write lock (`BEGIN IMMEDIATE`), each seeing what the previous ones wrote; of two rivals (two
 *   rotations of one refresh token), the first rotates and the second is told of its successor,
 *   exactly as with a transaction each.
 * - Durable when answered: no step's promise settles before the `COMMIT` that holds it returns. A
 *   failed `COMMIT` (or `BEGIN`: another process kept the lock past the busy timeout) rejects every
 *   step of the group, none of which has been acknowledged, and writes nothing.
 * @module
 */
import { isThenable, type SqliteDatabase } from './database.js';
import { type PendingStep, TurnQueue } from './turn-queue.js';

type Outcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: unknown };

const SAVEPOINT = 'SAVEPOINT portcullis_step';
const RELEASE = 'RELEASE portcullis_step';
const ROLLBACK_TO = 'ROLLBACK TO portcullis_step';

/**
 * Steps per transaction at most: a turn with more runs them in several transactions, one after the
 * other, so that no transaction holds the file's write lock (which other processes wait for) for
 * more than a few milliseconds, and one failed commit answers at most this many steps.
 */
export const MAX_STEPS_PER_TRANSACTION = 64;

/** Collects write steps and commits each turn's steps together. */
export class GroupCommit extends TurnQueue {
  constructor() {
    super((steps) => {
      for (let start = 0; start < steps.length; start += MAX_STEPS_PER_TRANSACTION) {
        commitGroup(steps.slice(start, start + MAX_STEPS_PER_TRANSACTION));
      }
    });
  }
}

/** Runs `group` in one transaction and settles each of its steps. Never throws. */
function commitGroup(group: readonly PendingStep[]): void {
  const [only] = group;
  if (only === undefined) return;
  // Every step of one storage names the same database.
  const db = only.db;
  if (group.length === 1) {
    // Alone: its own transaction, no savepoint needed.
    let value: unknown;
    try {
      value = db.transaction(only.body);
    } catch (error) {
      only.reject(error);
      return;
    }
    only.resolve(value);
    return;
  }
  // Without savepoints first; when a step throws, again with one per step (see "Atomic" above).
  const values: unknown[] = [];
  let stepFailed = false;
  try {
    db.transaction(() => {
      for (const step of group) {
        let value: unknown;
        try {
          value = step.body();
          if (isThenable(value)) throw new TypeError('a storage step must be synchronous');
        } catch (error) {
          stepFailed = true;
          throw error;
        }
        values.push(value);
      }
    });
  } catch (error) {
    if (stepFailed) {
      commitWithSavepoints(group, db);
      return;
    }
    // BEGIN or COMMIT failed: no step has been acknowledged, each is told.
    for (const step of group) step.reject(error);
    return;
  }
  group.forEach((step, i) => {
    step.resolve(values[i]);
  });
}

/** `group` in one transaction again, each step under its own savepoint: a failing step undone alone. */
function commitWithSavepoints(group: readonly PendingStep[], db: SqliteDatabase): void {
  const outcomes: Outcome[] = [];
  try {
    db.transaction(() => {
      for (const step of group) outcomes.push(runStep(db, step.body));
    });
  } catch (error) {
    // BEGIN or COMMIT failed, or SQLite ended the transaction itself (nothing of it was written):
    // no step of the group has been acknowledged, each is told.
    for (const step of group) step.reject(error);
    return;
  }
  group.forEach((step, i) => {
    const outcome = outcomes[i] as Outcome;
    if (outcome.ok) step.resolve(outcome.value);
    else step.reject(outcome.error);
  });
}

/**
 * One step inside the group's transaction, under its own savepoint.
 * @throws the step's error when its savepoint cannot be rolled back because SQLite ended the whole
 *   transaction: the group fails as one
 */
function runStep(db: SqliteDatabase, body: () => unknown): Outcome {
  db.run(SAVEPOINT);
  let outcome: Outcome;
  try {
    const value = body();
    if (isThenable(value)) throw new TypeError('a storage step must be synchronous');
    outcome = { ok: true, value };
  } catch (error) {
    try {
      db.run(ROLLBACK_TO);
    } catch {
      // SQLite already ended the whole transaction (a full disk, an I/O error): the group fails as
      // one, with this step's error, which says why (and whether a retry may help).
      throw error;
    }
    outcome = { ok: false, error };
  }
  db.run(RELEASE);
  return outcome;
}
