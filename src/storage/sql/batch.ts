/**
 * Batches of one kind of step for the SQL storage: calls that arrive while earlier ones are still
 * at the database wait, and go together as one statement when a batch finishes.
 *
 * Why: on PostgreSQL most of what a write step costs is per statement, not per row. The server
 * pays the driver and a round trip on the socket; the database pays a parse, a plan, a transaction
 * and a commit that flushes the write-ahead log. Under load, the steps that queue behind a busy
 * batch share all of that. When the database keeps up, nothing waits: a step arriving with a
 * batch slot free goes at once, alone (the caller runs its one-row statement).
 *
 * The statement of a batch decides each step as its own statement would (the runner's concern);
 * this class only groups calls and answers each caller with its own outcome.
 * @module
 */

/** What one step of a batch came to. */
export type BatchOutcome<Out> =
  | { readonly ok: true; readonly value: Out }
  | { readonly ok: false; readonly error: unknown };

/**
 * Batches of one kind at the database at once. One: every call that arrives while a batch is out
 * waits for it and goes in the next. Measured with the `refresh-postgres` benchmark (32 users), one
 * batch at a time gave about 15 rotations a batch and 139 µs of PostgreSQL CPU a refresh, two gave
 * about 7 and 226 µs (more of them alone), with a lower throughput and latency no better.
 */
export const MAX_BATCHES_IN_FLIGHT = 1;

/** Steps per batch at most: a longer queue runs in several batches. */
export const MAX_STEPS_PER_BATCH = 64;

interface Waiting<In, Out> {
  readonly input: In;
  readonly resolve: (value: Out) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Groups calls of one step into batches. `run` gets one batch at a time (one step or more, in the
 * order they arrived) and answers one outcome per step, in the same order; it is never called with
 * more than {@link MAX_BATCHES_IN_FLIGHT} batches unsettled.
 *
 * @example
 * ```ts
 * const rotations = new Batcher<Rotation, boolean>(async (batch) =>
 *   batch.length === 1 ? [await runAlone(batch[0])] : await runTogether(batch),
 * );
 * const rotated = await rotations.submit(rotation);
 * ```
 */
export class Batcher<In, Out> {
  readonly #run: (batch: readonly In[]) => Promise<readonly BatchOutcome<Out>[]>;
  #waiting: Waiting<In, Out>[] = [];
  #inFlight = 0;
  #scheduled = false;

  /** @param run - runs one batch; a rejection fails each of its steps with that error */
  constructor(run: (batch: readonly In[]) => Promise<readonly BatchOutcome<Out>[]>) {
    this.#run = run;
  }

  /**
   * Runs `input` in the next batch.
   * @returns its own outcome's value
   * @throws its own outcome's error, or the batch's when the batch failed as a whole
   */
  submit(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.#waiting.push({ input, resolve, reject });
      // The calls of the same microtask checkpoint (answers read in one callback) go together.
      if (!this.#scheduled && this.#inFlight < MAX_BATCHES_IN_FLIGHT) {
        this.#scheduled = true;
        queueMicrotask(() => {
          this.#scheduled = false;
          this.#flush();
        });
      }
    });
  }

  #flush(): void {
    while (this.#inFlight < MAX_BATCHES_IN_FLIGHT && this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, MAX_STEPS_PER_BATCH);
      this.#inFlight++;
      this.#settle(batch).finally(() => {
        this.#inFlight--;
        this.#flush();
      });
    }
  }

  /** Runs one batch and answers each of its callers. Never rejects. */
  async #settle(batch: readonly Waiting<In, Out>[]): Promise<void> {
    let outcomes: readonly BatchOutcome<Out>[];
    try {
      outcomes = await this.#run(batch.map((waiting) => waiting.input));
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      return;
    }
    batch.forEach((waiting, i) => {
      const outcome = outcomes[i];
      if (outcome === undefined)
        waiting.reject(new Error('storage: a batch answered fewer steps than it ran'));
      else if (outcome.ok) waiting.resolve(outcome.value);
      else waiting.reject(outcome.error);
    });
  }
}
