/**
 * How to read the floor targets of `npm run bench`: each workload of the reference server (memory
 * storage, as those targets measure it) against the same workload's HTTP bytes replayed on a bare
 * `node:http` server. Shown, never judged.
 *
 * The `floor` benchmark measures one small GET at the highest rate the bare server reaches, and a
 * floor target multiplies it by the requests of an operation. Two things it leaves out are facts
 * of HTTP, not of any server's logic: a request's shape (a form or JSON body to read, a bearer
 * header or cookies to parse, a token response of a kilobyte to write) and the rate (a server
 * answering 70,000 small requests a second shares each wake-up and each system call among more
 * requests than one answering 10,000). This script measures both:
 * 1. for each workload, one operation's exchanges are recorded from the reference server (the
 *    exact requests the load generator sends, the exact responses it gets), then a bare server
 *    (`servers/replay.mjs`) answers the same requests with the same bytes, and both are driven
 *    like `npm run bench` drives them (closed loop, alternating windows, server CPU from /proc);
 * 2. the bare GET of the `floor` benchmark, at its highest rate and paced at fixed lower rates.
 *
 * Usage: `npm run build && npm run build:example && node bench/floor-replay.mjs [--workloads
 * register,userinfo,introspect,refresh,code-flow] [--windows 3] [--seconds 4] [--concurrency 32]
 * [--rates 40000,20000,10000,5000]`. Servers on CPU 0, this process on CPU 1 (taskset), as `npm
 * run bench` pins them.
 * @module
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { HAVE_TASKSET, treeCpuSeconds } from './lib/proc.mjs';
import { startScriptNodeOptions, startServer } from './lib/servers.mjs';
import { median, pairedRatio } from './lib/stats.mjs';
import { createContext, SIGNATURES, WORKLOADS } from './lib/workloads.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(BENCH);
const SERVER_CPUS = '0';
const GENERATOR_CPUS = '1';

// The load generator gets its own core, as in `npm run bench`: run again under taskset.
if (HAVE_TASKSET && process.env.PORTCULLIS_FLOOR_REPLAY_PINNED === undefined) {
  const child = spawnSync(
    'taskset',
    ['-c', GENERATOR_CPUS, process.execPath, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: 'inherit', env: { ...process.env, PORTCULLIS_FLOOR_REPLAY_PINNED: '1' } },
  );
  process.exit(child.status ?? 1);
}

const { values: args } = parseArgs({
  options: {
    workloads: { type: 'string', default: 'register,userinfo,introspect,refresh,code-flow' },
    windows: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '4' },
    concurrency: { type: 'string', default: '32' },
    rates: { type: 'string', default: '40000,20000,10000,5000' },
  },
});
const WINDOWS = Number(args.windows);
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);
const RATES = args.rates
  .split(',')
  .filter(Boolean)
  .map((r) => Number(r));
const NAMES = args.workloads.split(',').filter(Boolean);
for (const name of NAMES) {
  if (WORKLOADS[name] === undefined || SIGNATURES[name] === undefined)
    throw new Error(`unknown workload ${name}; one of ${Object.keys(SIGNATURES).join(', ')}`);
}
if (![WINDOWS, SECONDS, CONCURRENCY, ...RATES].every((n) => Number.isInteger(n) && n > 0))
  throw new Error('--windows, --seconds, --concurrency and --rates take positive integers');

const pin = HAVE_TASKSET ? SERVER_CPUS : undefined;
const serverMain = join(ROOT, 'examples', 'course-school', 'dist', 'main.js');

/**
 * @typedef {object} Exchange
 * @property {'GET' | 'POST'} method
 * @property {string} path
 * @property {Record<string, string>} requestHeaders
 * @property {string | undefined} requestBody
 * @property {number} status
 * @property {Record<string, string | string[]>} headers - the response's, without hop-by-hop ones
 * @property {string} body
 */

/** Response headers node:http writes itself (or that describe the connection, not the answer). */
const OWN_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/**
 * One operation of the first virtual user, recorded request by request from the load generator's
 * own client (after the workload's setup): what it sends, and what it gets back.
 * @param {import('./lib/workloads.mjs').Context} ctx
 * @param {import('./lib/workloads.mjs').Workload} spec
 * @returns {Promise<Exchange[]>}
 */
async function record(ctx, spec) {
  /** @type {Exchange[]} */
  const exchanges = [];
  const pool = ctx.http.pool;
  const send = pool.request.bind(pool);
  /** @param {any} options */
  const recording = async (options) => {
    const response = await send(options);
    const text = await response.body.text();
    /** @type {Record<string, string | string[]>} */
    const headers = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined && !OWN_HEADERS.has(name)) headers[name] = value;
    }
    exchanges.push({
      method: options.method,
      path: options.path,
      requestHeaders: options.headers,
      requestBody: options.body,
      status: response.statusCode,
      headers,
      body: text,
    });
    return { ...response, body: { text: async () => text } };
  };
  Object.defineProperty(pool, 'request', { value: recording, configurable: true });
  try {
    await spec.op(ctx, /** @type {import('./lib/workloads.mjs').VirtualUser} */ (ctx.users[0]));
  } finally {
    // The pool's own method again (the property shadowed its prototype's).
    delete (/** @type {any} */ (pool).request);
  }
  return exchanges;
}

/**
 * @typedef {object} Window
 * @property {number} ops
 * @property {number} errors
 * @property {number} cpuPerOp - µs of the server process per operation
 * @property {number} opsPerSecond
 */

/**
 * One closed-loop window: `users` loops each running `op` until the window ends.
 * @param {number} pid - the server's
 * @param {number} users
 * @param {(user: number) => Promise<void>} op - one operation of the given virtual user
 * @param {number} [rate] - operations per second in all, spread over the users; none: as fast as answered
 * @returns {Promise<Window>}
 */
async function window(pid, users, op, rate) {
  let ops = 0;
  let errors = 0;
  const cpuBefore = treeCpuSeconds(pid);
  const start = performance.now();
  const end = start + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: users }, async (_, user) => {
      for (let k = 0; performance.now() < end; k++) {
        if (rate !== undefined) {
          const wait = start + ((k * users + user) * 1000) / rate - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          if (performance.now() >= end) break;
        }
        try {
          await op(user);
          ops++;
        } catch {
          errors++;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const cpu = treeCpuSeconds(pid) - cpuBefore;
  return { ops, errors, cpuPerOp: ops === 0 ? Number.NaN : (cpu * 1e6) / ops, opsPerSecond: ops / elapsed };
}

/**
 * The replayed operation: the recorded requests, one after the other, each answered with the
 * recorded status (anything else counts as an error).
 * @param {Pool} pool
 * @param {Exchange[]} exchanges
 */
function replayOp(pool, exchanges) {
  return async () => {
    for (const e of exchanges) {
      const response = await pool.request({
        method: e.method,
        path: e.path,
        headers: e.requestHeaders,
        body: e.requestBody,
      });
      await response.body.text();
      if (response.statusCode !== e.status) throw new Error(`${e.method} ${e.path}: ${response.statusCode}`);
    }
  };
}

/** @param {number} n */
const us = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
/** @param {number} n */
const x = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : '–');

const sign = JSON.parse(
  execFileSync(
    pin === undefined ? process.execPath : 'taskset',
    [...(pin === undefined ? [] : ['-c', pin, process.execPath]), join(BENCH, 'lib', 'sign-floor.mjs')],
    { encoding: 'utf8' },
  ),
);
console.log(`signing floor: ES256 ${sign.es256} µs, RS256 ${sign.rs256} µs`);

const scratch = mkdtempSync(join(tmpdir(), 'portcullis-floor-replay-'));
/** @type {string[]} */
const rows = [];
try {
  for (const name of NAMES) {
    const ours = await startServer({
      name: 'portcullis',
      script: serverMain,
      env: { RATE_LIMIT: 'off', STORAGE: 'memory' },
      cpus: pin,
      nodeOptions: startScriptNodeOptions(ROOT),
    });
    /** @type {Window[]} */
    const oursWindows = [];
    /** @type {Window[]} */
    const replayWindows = [];
    /** @type {Exchange[]} */
    let exchanges = [];
    /** @type {Awaited<ReturnType<typeof startServer>> | undefined} */
    let replay;
    const ctx = createContext(ours.origin, CONCURRENCY);
    /** @type {Pool | undefined} */
    let replayPool;
    try {
      const spec = /** @type {import('./lib/workloads.mjs').Workload} */ (WORKLOADS[name]);
      await spec.setup(ctx);
      exchanges = await record(ctx, spec);
      const file = join(scratch, `${name}.json`);
      writeFileSync(file, JSON.stringify(exchanges));
      replay = await startServer({
        name: 'replay',
        script: join(BENCH, 'servers', 'replay.mjs'),
        env: { REPLAY_FILE: file },
        cpus: pin,
      });
      replayPool = new Pool(replay.origin, { connections: CONCURRENCY, pipelining: 1 });
      const replayed = replayOp(replayPool, exchanges);
      // Each virtual user runs its own operations (its own refresh-token chain, its own cookies).
      const oursLoop = () =>
        window(ours.pid, ctx.users.length, async (index) => {
          const user = /** @type {import('./lib/workloads.mjs').VirtualUser} */ (ctx.users[index]);
          try {
            await spec.op(ctx, user);
          } catch (error) {
            // As the load generator of `npm run bench` does: restore the user's state, count the error.
            await spec.recover?.(ctx, user).catch(() => {});
            throw error;
          }
        });
      // Warm-up, then alternating windows (ours, replay, ours, replay, ...).
      await oursLoop();
      await window(replay.pid, CONCURRENCY, replayed);
      for (let w = 0; w < WINDOWS; w++) {
        oursWindows.push(await oursLoop());
        replayWindows.push(await window(replay.pid, CONCURRENCY, replayed));
      }
    } finally {
      await ctx.http.close().catch(() => {});
      await replayPool?.close().catch(() => {});
      await replay?.stop();
      await ours.stop();
    }
    const signatures = /** @type {{ es256: number, rs256: number }} */ (SIGNATURES[name]);
    const signing = signatures.es256 * sign.es256 + signatures.rs256 * sign.rs256;
    const oursCpu = median(oursWindows.map((w) => w.cpuPerOp));
    const replayCpu = median(replayWindows.map((w) => w.cpuPerOp));
    const bytes = exchanges.reduce(
      (acc, e) => ({
        in: acc.in + Buffer.byteLength(e.requestBody ?? ''),
        out: acc.out + Buffer.byteLength(e.body),
      }),
      { in: 0, out: 0 },
    );
    const errors = [...oursWindows, ...replayWindows].reduce((s, w) => s + w.errors, 0);
    const ratio = pairedRatio(
      replayWindows.map((w) => w.cpuPerOp + signing),
      oursWindows.map((w) => w.cpuPerOp),
    );
    rows.push(
      `| ${name} | ${exchanges.length} (${exchanges.map((e) => `${e.method} ${e.status}`).join(', ')}; bodies ${bytes.in} B in, ${bytes.out} B out) | ${us(oursCpu)} | ${us(median(oursWindows.map((w) => w.opsPerSecond)))} | ${us(replayCpu)} | ${us(median(replayWindows.map((w) => w.opsPerSecond)))} | ${us(signing)} | ${x(ratio)} | ${errors} |`,
    );
    console.log(rows.at(-1));
  }

  // The bare GET of the `floor` benchmark, as fast as it is answered, then paced.
  const bare = await startServer({
    name: 'bare',
    script: join(BENCH, 'servers', 'bare.mjs'),
    env: {},
    cpus: pin,
  });
  const pool = new Pool(bare.origin, { connections: CONCURRENCY, pipelining: 1 });
  /** @type {string[]} */
  const paced = [];
  try {
    const get = async () => {
      const response = await pool.request({ method: 'GET', path: '/' });
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`GET /: ${response.statusCode}`);
    };
    await window(bare.pid, CONCURRENCY, get);
    for (const rate of [undefined, ...RATES]) {
      /** @type {Window[]} */
      const runs = [];
      for (let w = 0; w < WINDOWS; w++) runs.push(await window(bare.pid, CONCURRENCY, get, rate));
      paced.push(
        `| ${rate === undefined ? 'as fast as answered' : `${rate.toLocaleString('en-US')}/s`} | ${us(median(runs.map((r) => r.opsPerSecond)))} | ${median(runs.map((r) => r.cpuPerOp)).toFixed(1)} |`,
      );
      console.log(paced.at(-1));
    }
  } finally {
    await pool.close();
    await bare.stop();
  }

  console.log(`
## Each workload against its own bytes on a bare node:http server

Memory storage, ${CONCURRENCY} virtual users, ${WINDOWS} windows of ${SECONDS} s per side after a warm-up, alternating; medians. Signing floor: ES256 ${sign.es256} µs, RS256 ${sign.rs256} µs.

| workload | requests per operation | ours µs/op | ours ops/s | replayed bytes µs/op | replayed ops/s | signatures µs | ours ÷ (replayed + signatures) | errors |
|---|---|--:|--:|--:|--:|--:|--:|--:|
${rows.join('\n')}

## The bare GET of the floor benchmark, by request rate

| rate asked | answered/s | server CPU µs per request |
|---|--:|--:|
${paced.join('\n')}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
