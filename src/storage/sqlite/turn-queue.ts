/**
 * The queue under the SQLite storage's group commit and read batch: steps submitted during one turn
 * of the event loop are handed over together, after that turn's I/O callbacks, to be run in one
 * transaction; each caller gets its step's result once the runner settles it.
 * @module
 */
import type { SqliteDatabase } from './database.js';

/** A submitted step: synchronous statements on `db`, and how to answer its caller. */
export interface PendingStep {
  readonly db: SqliteDatabase;
  readonly body: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** Runs `callback` after the I/O callbacks of this turn of the event loop (`setImmediate` where it exists). */
const afterThisTurn: (callback: () => void) => void =
  typeof globalThis.setImmediate === 'function'
    ? (callback) => {
        globalThis.setImmediate(callback);
      }
    : (callback) => {
        setTimeout(callback, 0);
      };

/** Collects steps and hands each turn's to `run`, which settles every one of them and never throws. */
export class TurnQueue {
  readonly #run: (steps: readonly PendingStep[]) => void;
  #queue: PendingStep[] = [];
  /** Settles once the steps queued so far have been run; undefined when none is queued. */
  #ran: Promise<void> | undefined;

  constructor(run: (steps: readonly PendingStep[]) => void) {
    this.#run = run;
  }

  /**
   * Runs `body` (synchronous: a few statements on `db`) with this turn's other steps.
   * @returns what `body` returned, once the runner has settled it
   */
  submit<T>(db: SqliteDatabase, body: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#queue.length === 0) {
        this.#ran = new Promise<void>((done) =>
          afterThisTurn(() => {
            const steps = this.#queue;
            this.#queue = [];
            this.#ran = undefined;
            this.#run(steps);
            done();
          }),
        );
      }
      this.#queue.push({ db, body, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Settles once every step submitted so far has been run (for a clean close). */
  settled(): Promise<void> {
    return this.#ran ?? Promise.resolve();
  }
}
