/**
 * The load generator: a child process of `run.mjs` (pinned to its own core when `taskset`
 * exists), driven over IPC. Closed loop: each of `concurrency` virtual users starts its next
 * operation when the previous one ends, over keep-alive connections (one per user).
 *
 * Messages in: `setup` (a workload against one server), `run` (one window), `teardown`, `exit`.
 * Each answers `{ id, ok, ... }` or `{ id, ok: false, error }`.
 * @module
 */
import { performance } from 'node:perf_hooks';
import { OpError } from './http.mjs';
import { createContext, WORKLOADS } from './workloads.mjs';

/** @typedef {import('./workloads.mjs').Context} Context */
/** @typedef {import('./workloads.mjs').Workload} Workload */

/** @type {Map<string, { ctx: Context, workload: Workload }>} */
const sessions = new Map();

/**
 * @param {number[]} sorted
 * @param {number} p - 0..1
 */
function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

/**
 * One measurement window.
 * @param {{ ctx: Context, workload: Workload }} session
 * @param {number} seconds
 * @param {number} stallSeconds - abort when nothing completes for this long
 */
async function runWindow({ ctx, workload }, seconds, stallSeconds) {
  /** @type {number[]} */
  const latencies = [];
  let errors = 0;
  /** @type {Map<string, number>} */
  const errorKinds = new Map();
  let lastProgress = performance.now();
  const requestsBefore = ctx.http.requests;
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const end = start + seconds * 1000;

  /** @param {unknown} error */
  const noteError = (error) => {
    errors++;
    const message = error instanceof OpError ? error.message : `${String(error)}`;
    errorKinds.set(message.slice(0, 160), (errorKinds.get(message.slice(0, 160)) ?? 0) + 1);
  };

  /** @param {import('./workloads.mjs').VirtualUser} user */
  const loop = async (user) => {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        await workload.op(ctx, user);
        latencies.push(performance.now() - t0);
      } catch (error) {
        noteError(error);
        if (workload.recover !== undefined) await workload.recover(ctx, user).catch(noteError);
        // Do not spin on a server that refuses everything.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      lastProgress = performance.now();
    }
  };

  /** @type {NodeJS.Timeout | undefined} */
  let watchdog;
  const stalled = new Promise((_, reject) => {
    watchdog = setInterval(() => {
      const idle = (performance.now() - lastProgress) / 1000;
      if (idle > stallSeconds) {
        reject(new Error(`stalled: no operation finished in ${idle.toFixed(0)} s (${ctx.http.origin})`));
      }
    }, 500);
  });
  try {
    await Promise.race([Promise.all(ctx.users.map(loop)), stalled]);
  } finally {
    clearInterval(watchdog);
  }
  const elapsed = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  return {
    ops: latencies.length,
    errors,
    errorKinds: [...errorKinds].sort((a, b) => b[1] - a[1]).slice(0, 5),
    elapsed,
    opsPerSecond: latencies.length / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    requestsPerOp: latencies.length === 0 ? 0 : (ctx.http.requests - requestsBefore) / latencies.length,
    generatorCpuPercent: ((cpu.user + cpu.system) / 1e6 / elapsed) * 100,
  };
}

/**
 * @param {any} message
 * @returns {Promise<Record<string, unknown>>}
 */
async function handle(message) {
  switch (message.cmd) {
    case 'setup': {
      const workload = WORKLOADS[message.workload];
      if (workload === undefined) throw new Error(`unknown workload ${message.workload}`);
      const ctx = createContext(message.origin, message.concurrency);
      await workload.setup(ctx);
      sessions.set(message.key, { ctx, workload });
      return {};
    }
    case 'run': {
      const session = sessions.get(message.key);
      if (session === undefined) throw new Error(`no session ${message.key}`);
      return runWindow(session, message.seconds, message.stallSeconds);
    }
    case 'teardown': {
      const session = sessions.get(message.key);
      sessions.delete(message.key);
      await session?.ctx.http.close();
      return {};
    }
    case 'exit':
      setImmediate(() => process.exit(0));
      return {};
    default:
      throw new Error(`unknown command ${message.cmd}`);
  }
}

process.on('message', (/** @type {any} */ message) => {
  handle(message).then(
    (result) => process.send?.({ id: message.id, ok: true, ...result }),
    (error) =>
      process.send?.({
        id: message.id,
        ok: false,
        error: error instanceof Error ? error.message : String(error),
      }),
  );
});
process.on('disconnect', () => process.exit(0));
