/**
 * The batches under the SQL storage's rotations (src/storage/sql/batch.ts): which calls go
 * together, in which order, and how each caller learns its own outcome. Driven by a runner whose
 * batches the test settles by hand.
 */
import { describe, expect, it } from 'vitest';
import { Batcher, type BatchOutcome, MAX_STEPS_PER_BATCH } from '../../src/storage/sql/batch.js';

/** A runner that records each batch and answers it when the test says so. */
function manualRunner() {
  const batches: {
    inputs: readonly number[];
    answer: (outcomes: BatchOutcome<string>[]) => void;
    fail: (e: unknown) => void;
  }[] = [];
  const run = (inputs: readonly number[]) =>
    new Promise<readonly BatchOutcome<string>[]>((resolve, reject) => {
      batches.push({ inputs, answer: resolve, fail: reject });
    });
  return { batches, batcher: new Batcher<number, string>(run) };
}

const ok = (value: string): BatchOutcome<string> => ({ ok: true, value });
/** Lets queued microtasks and promise callbacks run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SQL storage batches (batched rotation)', () => {
  it('calls made together go in one batch, in order, and each caller gets its own outcome', async () => {
    const { batches, batcher } = manualRunner();
    const calls = [1, 2, 3].map((n) => batcher.submit(n));
    await settle();
    expect(batches.map((b) => b.inputs)).toEqual([[1, 2, 3]]);
    batches[0]?.answer([ok('one'), { ok: false, error: new Error('two failed') }, ok('three')]);
    const results = await Promise.allSettled(calls);
    expect(results).toEqual([
      { status: 'fulfilled', value: 'one' },
      { status: 'rejected', reason: new Error('two failed') },
      { status: 'fulfilled', value: 'three' },
    ]);
  });

  it('a call on an idle batcher goes at once, alone; calls while it is out wait and go together when it is answered', async () => {
    const { batches, batcher } = manualRunner();
    const first = batcher.submit(1);
    await settle();
    expect(batches.map((b) => b.inputs)).toEqual([[1]]);
    const later = [2, 3, 4].map((n) => batcher.submit(n));
    await settle();
    // Still one batch out: the later calls wait.
    expect(batches).toHaveLength(1);
    batches[0]?.answer([ok('a')]);
    expect(await first).toBe('a');
    await settle();
    expect(batches.map((b) => b.inputs)).toEqual([[1], [2, 3, 4]]);
    batches[1]?.answer([ok('b'), ok('c'), ok('d')]);
    expect(await Promise.all(later)).toEqual(['b', 'c', 'd']);
  });

  it(`a longer queue goes in batches of at most ${MAX_STEPS_PER_BATCH}, in order`, async () => {
    const { batches, batcher } = manualRunner();
    const count = MAX_STEPS_PER_BATCH + 5;
    const calls = Array.from({ length: count }, (_, i) => batcher.submit(i));
    await settle();
    expect(batches.map((b) => b.inputs.length)).toEqual([MAX_STEPS_PER_BATCH]);
    batches[0]?.answer(batches[0].inputs.map((n) => ok(String(n))));
    await settle();
    expect(batches.map((b) => b.inputs.length)).toEqual([MAX_STEPS_PER_BATCH, 5]);
    batches[1]?.answer(batches[1].inputs.map((n) => ok(String(n))));
    expect(await Promise.all(calls)).toEqual(Array.from({ length: count }, (_, i) => String(i)));
  });

  it('a batch that fails as a whole fails each of its calls with its error; the next batch still runs', async () => {
    const { batches, batcher } = manualRunner();
    const failing = [1, 2].map((n) => batcher.submit(n));
    await settle();
    const next = batcher.submit(3);
    const down = new Error('database down');
    batches[0]?.fail(down);
    expect(await Promise.allSettled(failing)).toEqual([
      { status: 'rejected', reason: down },
      { status: 'rejected', reason: down },
    ]);
    await settle();
    expect(batches.map((b) => b.inputs)).toEqual([[1, 2], [3]]);
    batches[1]?.answer([ok('three')]);
    expect(await next).toBe('three');
  });

  it('a runner that answers fewer outcomes than calls fails the unanswered calls instead of leaving them waiting', async () => {
    const { batches, batcher } = manualRunner();
    const calls = [1, 2].map((n) => batcher.submit(n));
    await settle();
    batches[0]?.answer([ok('one')]);
    const results = await Promise.allSettled(calls);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 'one' });
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { message: /fewer steps/ } });
  });
});
