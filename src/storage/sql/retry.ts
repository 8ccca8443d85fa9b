/**
 * What the SQL storage does when a statement fails transiently ({@link StorageUnavailableError}):
 * run it once more, on another connection, when that cannot do harm. Which statements may be
 * repeated, and how a repetition recognises that the first attempt had committed, is decided per
 * step in `./sql-storage.ts`; docs/storage.md, "When PostgreSQL is unavailable", has the table.
 * @module
 */
import { StorageUnavailableError } from '../unavailable.js';
import type { SqlQueryable, SqlStatement } from './executor.js';

/**
 * What may be done after a transient failure of a statement ({@link StorageUnavailableError}):
 * - `never`: nothing (its effect cannot be recovered: the record a DELETE ... RETURNING removed);
 * - `repeat`: run it again once, on another connection, after a lost connection: reads, writes
 *   whose repetition changes nothing, and the atomic steps (conditional: a repetition cannot apply
 *   twice, and the caller checks whether the first one did);
 * - `insert`: as `repeat`, and a unique violation on the repetition means the first one committed
 *   (the keys are fresh random values).
 * A serialization failure or deadlock (rolled back for certain) is repeated in every case.
 */
export type Retry = 'never' | 'repeat' | 'insert';

/** What running a statement gave. */
export interface Executed<Row> {
  readonly rows: Row[];
  /** The first attempt failed after it may have been applied, and the statement was run again. */
  readonly uncertain: boolean;
  /** An `insert` met its own row on the repetition: the first attempt had committed. */
  readonly duplicate: boolean;
}

const UNIQUE_VIOLATION = '23505';

/** Whether `error` is PostgreSQL's unique violation (a key already stored). */
export function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === UNIQUE_VIOLATION
  );
}

/**
 * Runs `statement`; after a lost connection (when `retry` allows) or a serialization failure, runs
 * it once more. A refused connection, a timeout or an overloaded database is not retried: the
 * database is down or slow, and a repetition would only double the wait.
 *
 * @param db - where to run it (each call takes a connection of the pool: another one the second time)
 * @param statement - the statement
 * @param params - its parameters
 * @param retry - what a repetition may do (see {@link Retry})
 * @returns the rows, and whether a first attempt may have applied before the repetition
 * @throws StorageUnavailableError when it fails again, or cannot be repeated; the driver's error otherwise
 */
export async function executeWithRetry<Row>(
  db: SqlQueryable,
  statement: SqlStatement,
  params: unknown[],
  retry: Retry,
): Promise<Executed<Row>> {
  try {
    return { rows: await db.query<Row>(statement, params), uncertain: false, duplicate: false };
  } catch (error) {
    if (!(error instanceof StorageUnavailableError)) throw error;
    const again = error.reason === 'conflict' || (retry !== 'never' && error.reason === 'connection_lost');
    if (!again) throw error;
    // A serialization failure was rolled back for certain; a lost connection may have committed.
    const uncertain = error.reason !== 'conflict' && error.mayHaveApplied;
    try {
      return { rows: await db.query<Row>(statement, params), uncertain, duplicate: false };
    } catch (second) {
      if (retry === 'insert' && uncertain && isUniqueViolation(second))
        return { rows: [], uncertain, duplicate: true };
      throw second;
    }
  }
}
