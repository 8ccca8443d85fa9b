/**
 * `npm run bench`: the load benchmark of issue 8. Starts the course-school reference server and
 * an oidc-provider 9 server configured like it, drives both with one closed-loop load generator
 * (a child process) in alternating windows, and reports ops/s, latency, server CPU per operation
 * and peak memory, with the ratio to oidc-provider and each target's PASS/FAIL.
 *
 * Usage: `npm run bench -- [--workloads a,b] [--windows 5] [--seconds 4] [--concurrency 32]
 * [--quick] [--stall 15] [--database-url postgres://...] [--save] [--no-publish] [--list]`
 *
 * A run of every benchmark writes bench/results/latest.{md,json} and the table of
 * docs/benchmarks.md; every run writes bench/results/raw/<date>.{md,json}. See docs/benchmarks.md.
 * @module
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, release, tmpdir, type } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  HAVE_PROC,
  HAVE_TASKSET,
  processCpuSeconds,
  resetPeakMemory,
  treeCpuSeconds,
  treeMemory,
} from './lib/proc.mjs';
import { renderMarkdown } from './lib/report.mjs';
import { startScriptNodeOptions, startServer } from './lib/servers.mjs';
import { measureStartup } from './lib/startup.mjs';
import { pairedCpuRatio, pairedRatio, summarize } from './lib/stats.mjs';
import { SIGNATURES } from './lib/workloads.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(BENCH);
const RESULTS = join(BENCH, 'results');
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const SERVER_CPUS = '0';
const GENERATOR_CPUS = '1';

/** @typedef {import('./lib/report.mjs').BenchmarkResult} BenchmarkResult */
/** @typedef {import('./lib/report.mjs').Target} Target */
/** @typedef {import('./lib/stats.mjs').WindowResult} WindowResult */
/** @typedef {import('./lib/servers.mjs').RunningServer} RunningServer */

/**
 * @typedef {{ kind: 'ours', storage: 'memory' | 'default' | 'pglite' | 'postgres' } | { kind: 'oidc-provider' } | { kind: 'guard' } | { kind: 'bare' } | { kind: 'bridge' } | { kind: 'same' }} ServerSpec
 * `same`: the A side's server process (the guard's unguarded route).
 */

/**
 * @typedef {object} Side
 * @property {string} label
 * @property {ServerSpec} server
 * @property {string} workload - a key of WORKLOADS in lib/workloads.mjs
 */

/**
 * @typedef {object} Benchmark
 * @property {string} name
 * @property {string} description
 * @property {Side} a
 * @property {Side} [b]
 * @property {(result: BenchmarkResult) => Target[]} targets
 */

/** The figures of issue 8 for oidc-provider on this machine, µs of server CPU per operation. */
const ISSUE_FIGURES = { register: 164, 'code-flow': 1800, refresh: 580, userinfo: 122, introspect: 133 };

/** The workloads compared with oidc-provider on memory storage. */
const DESCRIPTIONS = {
  register: 'one dynamic client registration (RFC 7591)',
  'code-flow': 'authorize, consent page, Allow, code, token exchange with PKCE, for a signed-in user',
  refresh: 'one refresh-token grant with rotation',
  userinfo: 'GET userinfo with a valid bearer token',
  introspect: 'one introspection (RFC 7662) of a valid access token, with client authentication',
};

/** @param {number} v */
const fmt = (v) => (Number.isFinite(v) ? v.toFixed(2) : '–');

/**
 * @param {'memory' | 'default' | 'pglite' | 'postgres'} storage
 * @param {string} workload
 * @returns {Side}
 */
const ours = (storage, workload) => ({
  label: `portcullis (${{ default: 'default: SQLite', pglite: 'embedded PGlite', postgres: 'PostgreSQL', memory: 'memory' }[storage]})`,
  server: { kind: 'ours', storage },
  workload,
});
/** @param {string} workload @returns {Side} */
const oidcProvider = (workload) => ({
  label: 'oidc-provider (memory)',
  server: { kind: 'oidc-provider' },
  workload,
});

/**
 * Ours at least `min` times less CPU per operation than oidc-provider, without errors.
 * @param {number} min
 * @param {string} [what]
 * @returns {(r: BenchmarkResult) => Target[]}
 */
const cpuRatioTarget = (min, what) => (r) => [
  {
    name: `${r.name}: server CPU/op vs oidc-provider`,
    goal: what ?? `ours ≥ ${min}x better`,
    measured: `${fmt(r.ratio ?? Number.NaN)}x (${Math.round(r.a.summary.cpuPerOp)} vs ${Math.round(r.b?.summary.cpuPerOp ?? Number.NaN)} µs)`,
    pass:
      r.ratio !== undefined && Number.isFinite(r.ratio)
        ? r.ratio >= min && r.a.summary.errors === 0
        : undefined,
  },
];

/**
 * Ours at least `min` times less CPU per operation than oidc-provider with the CPU of PostgreSQL's
 * backends counted on our side (issue 15): the median over window pairs of B ÷ (A + A's backends).
 * @param {number} min
 * @returns {(r: BenchmarkResult) => Target[]}
 */
const cpuRatioWithDatabaseTarget = (min) => (r) => {
  const b = r.b?.windows ?? [];
  const ratio = pairedRatio(
    r.a.windows.map((w) => w.cpuPerOp + (w.dbCpuPerOp ?? Number.NaN)),
    b.map((w) => w.cpuPerOp),
  );
  const measured = Number.isFinite(ratio);
  return [
    {
      name: `${r.name}: server + PostgreSQL CPU/op vs oidc-provider`,
      goal: `ours with PostgreSQL's backends ≥ ${min}x better`,
      measured:
        `${fmt(ratio)}x (${Math.round(r.a.summary.cpuPerOp)} + ${Math.round(r.a.summary.dbCpuPerOp ?? Number.NaN)} ` +
        `vs ${Math.round(r.b?.summary.cpuPerOp ?? Number.NaN)} µs; server alone ${fmt(r.ratio ?? Number.NaN)}x)`,
      pass: measured ? ratio >= min && r.a.summary.errors === 0 : undefined,
    },
  ];
};

/**
 * Ours, on memory storage, within `max` times the physical floor of the workload measured in the
 * same run (issue 15): its requests at the bare node:http cost plus the signatures it must make.
 * @param {number} max
 * @param {string} workload
 * @returns {(r: BenchmarkResult) => Target[]}
 */
const floorTarget = (max, workload) => (r) => {
  // The `floor` benchmark runs first; without it in the run, the target is not measured.
  const floorRun = results.find((x) => x.name === 'floor');
  const floorPerRequest = floorRun?.a.summary.cpuPerOp ?? Number.NaN;
  const bridgePerRequest = floorRun?.b?.summary.cpuPerOp ?? Number.NaN;
  const signatures = SIGNATURES[workload] ?? { es256: 0, rs256: 0 };
  const sign = info.sign ?? { es256: Number.NaN, rs256: Number.NaN };
  const signing = signatures.es256 * sign.es256 + signatures.rs256 * sign.rs256;
  const floor = r.a.summary.requestsPerOp * floorPerRequest + signing;
  const times = r.a.summary.cpuPerOp / floor;
  const parts = [
    `${fmt(r.a.summary.requestsPerOp)} × ${Math.round(floorPerRequest)}`,
    ...(signatures.es256 > 0 ? [`ES256 ${Math.round(sign.es256)}`] : []),
    ...(signatures.rs256 > 0 ? [`RS256 ${Math.round(sign.rs256)}`] : []),
  ];
  // Shown, not judged: the same floor with the bridge's cost per request instead of the bare one.
  const overBridge = r.a.summary.cpuPerOp / (r.a.summary.requestsPerOp * bridgePerRequest + signing);
  const bridge = Number.isFinite(overBridge)
    ? `; ${fmt(overBridge)}x the floor on the bridge (${Math.round(bridgePerRequest)} µs a request)`
    : '';
  return [
    {
      name: `${r.name}: server CPU/op vs its floor`,
      goal: `≤ ${max}x the floor`,
      measured: `${fmt(times)}x (${Math.round(r.a.summary.cpuPerOp)} vs ${Math.round(floor)} µs: ${parts.join(' + ')})${bridge}`,
      pass: Number.isFinite(times) ? times <= max && r.a.summary.errors === 0 : undefined,
    },
  ];
};

/**
 * Peak RSS of our server below `mb`.
 * @param {number} mb
 * @returns {(r: BenchmarkResult) => Target}
 */
const rssTarget = (mb) => (r) => {
  const peak = Math.max(r.a.memory.maxRss, r.a.memory.hwm);
  return {
    name: `${r.name}: peak RSS under load`,
    goal: `< ${mb} MB`,
    measured: peak > 0 ? `${Math.round(peak / 2 ** 20)} MB` : '–',
    pass: peak > 0 ? peak < mb * 2 ** 20 : undefined,
  };
};

/** The start-up measurement's name in `--workloads` (not a load benchmark: no windows, no rival). */
const STARTUP = 'startup';
/** First starts (each followed by a restart) of the start-up measurement; the median is the figure. */
const STARTUP_RUNS = 7;
/** Issue 15: from process start to the first answered metadata request. */
const STARTUP_LIMIT_MS = 1000;

/**
 * The start-up targets: a fresh `DATA_DIR` and a restart on it, medians below the limit.
 * @param {{ fresh: import('./lib/startup.mjs').StartupSummary, restart: import('./lib/startup.mjs').StartupSummary }} measured
 * @returns {Target[]}
 */
const startupTargets = (measured) =>
  /** @type {const} */ ([
    ['fresh DATA_DIR', measured.fresh],
    ['restart', measured.restart],
  ]).map(([label, s]) => ({
    name: `start to the first metadata answer, default storage, ${label}`,
    goal: `< ${STARTUP_LIMIT_MS} ms (median of ${STARTUP_RUNS})`,
    measured: `${Math.round(s.median)} ms (${Math.round(s.min)}–${Math.round(s.max)}; RSS then ${Math.round(s.rss / 2 ** 20)} MB)`,
    pass: Number.isFinite(s.median) ? s.median < STARTUP_LIMIT_MS : undefined,
  }));

/** The storage-growth measurement's name in `--workloads` (bench/storage-growth.mjs: no HTTP, no rival). */
const GROWTH = 'growth';
/** Issue 15: the storage steps of a refresh and of UserInfo after 1,000,000 tokens, within 10 % of a fresh store. */
const GROWTH_LIMIT = 1.1;
/** The persistent backends it measures: the default storage, and PostgreSQL. */
const GROWTH_BACKENDS = /** @type {const} */ ([
  ['sqlite', 'default storage (SQLite)'],
  ['postgres', 'PostgreSQL'],
]);

/**
 * @typedef {object} GrowthSide
 * @property {number} totalUs - CPU per operation, this process and the database's backends
 * @typedef {object} GrowthReport - what `bench/storage-growth.mjs --json` writes
 * @property {number} tokens
 * @property {Record<'refresh' | 'userinfo', { fresh: GrowthSide, grown: GrowthSide, ratio: number }>} results
 * @property {{ removed: number, seconds: number, during: { p99: number } } | null} purge
 */

/**
 * The growth targets of one backend: each workload's grown ÷ fresh at most {@link GROWTH_LIMIT};
 * the purge that follows is reported beside the refresh.
 * @param {string} label
 * @param {GrowthReport | undefined} report - undefined when the backend could not be measured
 * @param {string} [why] - why not
 * @returns {Target[]}
 */
const growthTargets = (label, report, why) =>
  /** @type {const} */ (['refresh', 'userinfo']).map((workload) => {
    const name = `${workload} storage steps after 1,000,000 tokens vs a fresh store, ${label}`;
    const goal = `≤ ${GROWTH_LIMIT.toFixed(2)}x`;
    const r = report?.results[workload];
    if (report === undefined || r === undefined) return { name, goal, measured: why ?? '–', pass: undefined };
    const purge =
      workload === 'refresh' && report.purge !== null
        ? `; then a purge of ${report.purge.removed.toLocaleString('en-US')} expired rows in ${report.purge.seconds.toFixed(1)} s, refresh p99 ${report.purge.during.p99.toFixed(0)} ms meanwhile`
        : '';
    return {
      name,
      goal,
      measured: `${r.ratio.toFixed(2)}x (${Math.round(r.grown.totalUs)} vs ${Math.round(r.fresh.totalUs)} µs)${purge}`,
      pass: Number.isFinite(r.ratio) ? r.ratio <= GROWTH_LIMIT : undefined,
    };
  });

/** @type {Benchmark[]} */
const BENCHMARKS = [
  {
    name: 'floor',
    description:
      'a bare node:http server answering small JSON: the floor of any server; beside it, the same answer ' +
      'from Hono on @hono/node-server, the bridge our adapters run on',
    a: { label: 'node:http (bare)', server: { kind: 'bare' }, workload: 'floor' },
    b: { label: 'Hono on @hono/node-server', server: { kind: 'bridge' }, workload: 'floor' },
    targets: () => [],
  },
  ...Object.entries(DESCRIPTIONS).map(([w, description]) => ({
    name: w,
    description,
    a: ours('memory', w),
    b: oidcProvider(w),
    targets: (/** @type {BenchmarkResult} */ r) => [...cpuRatioTarget(3)(r), ...floorTarget(2, w)(r)],
  })),
  {
    name: 'guard',
    description: 'a business API GET through the resource-server guard vs the same route unguarded',
    a: { label: 'portcullis guard (memory)', server: { kind: 'guard' }, workload: 'guard' },
    b: { label: 'same route, unguarded', server: { kind: 'same' }, workload: 'guard-open' },
    targets: (r) => {
      const overhead = r.ratio === undefined ? Number.NaN : 1 / r.ratio;
      return [
        {
          name: 'guard: guarded route CPU/op vs unguarded',
          goal: '≤ 1.6x',
          measured: `${fmt(overhead)}x (${Math.round(r.a.summary.cpuPerOp)} vs ${Math.round(r.b?.summary.cpuPerOp ?? Number.NaN)} µs)`,
          pass: Number.isFinite(overhead) ? overhead <= 1.6 && r.a.summary.errors === 0 : undefined,
        },
      ];
    },
  },
  // The reference server as `npm start` runs it: no STORAGE, no DATABASE_URL, SQLite in a fresh DATA_DIR.
  ...Object.entries(DESCRIPTIONS).map(([w, description]) => ({
    name: `${w}-default`,
    description: `${description}, on the default storage (SQLite in a fresh DATA_DIR)`,
    a: ours('default', w),
    b: oidcProvider(w),
    targets: (/** @type {BenchmarkResult} */ r) => [
      ...cpuRatioTarget(w === 'code-flow' ? 2.5 : 3)(r),
      rssTarget(128)(r),
    ],
  })),
  // PGlite, the embedded default before SQLite, still an option (STORAGE=pglite).
  ...['code-flow', 'refresh'].map((w) => ({
    name: `${w}-pglite`,
    description: `${w} on the embedded PGlite (STORAGE=pglite, a fresh DATA_DIR)`,
    a: ours('pglite', w),
    b: oidcProvider(w),
    targets: (/** @type {BenchmarkResult} */ r) => [rssTarget(256)(r)],
  })),
  ...['code-flow', 'refresh'].map((w) => ({
    name: `${w}-postgres`,
    description: `${w} on PostgreSQL (a fresh database)`,
    a: ours('postgres', w),
    b: oidcProvider(w),
    targets: cpuRatioWithDatabaseTarget(w === 'code-flow' ? 1.5 : 2),
  })),
];

// ---------------------------------------------------------------------------------------------

const { values: args } = parseArgs({
  options: {
    workloads: { type: 'string' },
    windows: { type: 'string' },
    seconds: { type: 'string' },
    concurrency: { type: 'string', default: '32' },
    quick: { type: 'boolean', default: false },
    stall: { type: 'string', default: '15' },
    'database-url': { type: 'string' },
    save: { type: 'boolean', default: false },
    'no-publish': { type: 'boolean', default: false },
    list: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

if (args.help || args.list) {
  console.log('npm run bench -- [--workloads a,b] [--windows N] [--seconds S] [--concurrency C] [--quick]');
  console.log('                 [--stall S] [--database-url URL] [--save] [--no-publish]\n\nBenchmarks:');
  for (const b of BENCHMARKS) console.log(`  ${b.name.padEnd(20)} ${b.description}`);
  console.log(
    `  ${STARTUP.padEnd(20)} start to the first metadata answer, default storage, fresh and restarted (no load)`,
  );
  console.log(
    `  ${GROWTH.padEnd(20)} storage steps of refresh and UserInfo after 1,000,000 tokens vs fresh, then a purge (SQLite, PostgreSQL)`,
  );
  process.exit(0);
}

/** @param {string | undefined} v @param {number} fallback @param {string} name */
function positive(v, fallback, name) {
  const n = v === undefined ? fallback : Number(v);
  if (!(n > 0)) throw new Error(`--${name} must be a positive number`);
  return n;
}
const options = {
  windows: Math.round(positive(args.windows, args.quick ? 3 : 5, 'windows')),
  seconds: positive(args.seconds, args.quick ? 2 : 4, 'seconds'),
  concurrency: Math.round(positive(args.concurrency, 32, 'concurrency')),
  stall: positive(args.stall, 15, 'stall'),
  pinned: HAVE_TASKSET && cpus().length >= 2,
};
const named = args.workloads?.split(',').map((name) => name.trim());
const selected =
  named === undefined
    ? BENCHMARKS
    : named
        .filter((name) => name !== STARTUP && name !== GROWTH)
        .map((name) => {
          const b = BENCHMARKS.find((x) => x.name === name);
          if (b === undefined) throw new Error(`unknown benchmark '${name}'; see --list`);
          return b;
        });
const measureStart = named === undefined || named.includes(STARTUP);
const measureGrowth = named === undefined || named.includes(GROWTH);
const complete = selected.length === BENCHMARKS.length && measureStart && measureGrowth;
if (!HAVE_PROC) console.warn('warning: no /proc (not Linux): CPU and memory figures are missing');

// ---------------------------------------------------------------------------------------------
// Preflight: the benchmark's own dependencies, and the built library and reference server.

/** @param {string} cwd @param {string[]} command */
function sh(cwd, command) {
  console.log(`$ ${command.join(' ')}${cwd === ROOT ? '' : `  (in ${cwd})`}`);
  execFileSync(/** @type {string} */ (command[0]), command.slice(1), { cwd, stdio: 'inherit' });
}

if (!existsSync(join(BENCH, 'node_modules'))) sh(ROOT, ['npm', 'ci', '--prefix', 'bench', '--include=dev']);
const serverMain = join(ROOT, 'examples', 'course-school', 'dist', 'main.js');
const START_OPTIONS = startScriptNodeOptions(ROOT);
if (!existsSync(join(ROOT, 'dist', 'index.js')) || !existsSync(serverMain)) {
  if (!existsSync(join(ROOT, 'node_modules'))) sh(ROOT, ['npm', 'ci']);
  sh(ROOT, ['npm', 'run', 'build']);
  sh(ROOT, ['npm', 'run', 'build:example']);
}
/** @param {string} dir @returns {number} newest mtime under dir */
function newest(dir) {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}
if (newest(join(ROOT, 'src')) > statSync(join(ROOT, 'dist', 'index.js')).mtimeMs) {
  console.warn('warning: src/ changed after dist/ was built: run `npm run build && npm run build:example`');
}

const { default: pg } = await import('pg');

// The CPUs the run may use, read before the orchestrator pins itself: the start-up measurement
// runs the server on them, as `npm start` runs on the machine. A child inherits its parent's
// affinity, so without this the server would start on the orchestrator's one core (its two scrypt
// hashes and its key generation one after the other, beside the polling).
const startupCpus = options.pinned
  ? /list:\s*(\S+)/.exec(
      execFileSync('taskset', ['-c', '-p', String(process.pid)], { encoding: 'utf8' }),
    )?.[1]
  : undefined;
// Keep the orchestrator off the server core.
if (options.pinned)
  execFileSync('taskset', ['-a', '-p', '-c', GENERATOR_CPUS, String(process.pid)], { stdio: 'ignore' });

// ---------------------------------------------------------------------------------------------
// The load generator.

const generatorCommand = options.pinned
  ? ['taskset', '-c', GENERATOR_CPUS, process.execPath, join(BENCH, 'lib', 'load.mjs')]
  : [process.execPath, join(BENCH, 'lib', 'load.mjs')];
const generator = spawn(/** @type {string} */ (generatorCommand[0]), generatorCommand.slice(1), {
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
let nextId = 1;
/** @type {Map<number, { resolve: (v: any) => void, reject: (e: Error) => void }>} */
const pending = new Map();
generator.on('message', (/** @type {any} */ message) => {
  const waiter = pending.get(message.id);
  pending.delete(message.id);
  if (message.ok) waiter?.resolve(message);
  else waiter?.reject(new Error(message.error));
});
generator.once('exit', (code) => {
  for (const waiter of pending.values()) waiter.reject(new Error(`the load generator exited (${code})`));
  pending.clear();
});

/**
 * @param {Record<string, unknown>} message
 * @param {number} timeoutSeconds
 * @returns {Promise<any>}
 */
function ask(message, timeoutSeconds) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error(`the load generator did not answer ${message.cmd} within ${timeoutSeconds} s`));
    }, timeoutSeconds * 1000);
    pending.set(id, {
      resolve: (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      reject: (e) => {
        clearTimeout(timer);
        reject(e);
      },
    });
    generator.send({ ...message, id });
  });
}

// ---------------------------------------------------------------------------------------------
// Cleanup of everything this run started, also on Ctrl-C.

/** @type {Set<() => Promise<void>>} */
const cleanups = new Set();
async function cleanup() {
  for (const fn of [...cleanups].reverse()) {
    cleanups.delete(fn);
    await fn().catch((error) => console.error('cleanup:', error));
  }
}
process.once('SIGINT', () => {
  console.error('\ninterrupted: stopping servers');
  cleanup().finally(() => process.exit(130));
});

// ---------------------------------------------------------------------------------------------
// PostgreSQL: a fresh database per benchmark, its backends' CPU per window.

const adminUrl =
  args['database-url'] ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Creates a fresh database and returns its URL and a way to read its backends' CPU.
 * @param {string} name
 */
async function freshDatabase(name) {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    /** CPU seconds of each backend of this database, by pid (the backends are on this machine). */
    async backends() {
      const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [name]);
      return new Map(rows.map((r) => [r.pid, processCpuSeconds(r.pid)]));
    },
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Storage growth: bench/storage-growth.mjs in a child process, on the CPUs `npm start` would use.

/**
 * Runs bench/storage-growth.mjs on `backend` (its output shown as it goes) and returns its targets.
 * @param {'sqlite' | 'postgres'} backend
 * @param {string} label
 * @returns {Promise<Target[]>}
 */
async function measureGrowthOf(backend, label) {
  const json = join(mkdtempSync(join(tmpdir(), 'portcullis-growth-')), 'growth.json');
  const script = [process.execPath, join(BENCH, 'storage-growth.mjs'), '--backend', backend, '--json', json];
  if (backend === 'postgres') script.push('--database-url', adminUrl);
  const command = startupCpus === undefined ? script : ['taskset', '-c', startupCpus, ...script];
  const child = spawn(/** @type {string} */ (command[0]), command.slice(1), { stdio: 'inherit' });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  try {
    if (code !== 0)
      return growthTargets(label, undefined, `not measured: storage-growth.mjs exited with ${code}`);
    return growthTargets(label, JSON.parse(readFileSync(json, 'utf8')));
  } finally {
    rmSync(dirname(json), { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Servers.

/**
 * @typedef {object} Started
 * @property {RunningServer} server
 * @property {Awaited<ReturnType<typeof freshDatabase>>} [database]
 * @property {() => Promise<void>} dispose - removes its data directory or database
 */

/**
 * Starts a server, with fresh storage of its own.
 * @param {ServerSpec} spec
 * @param {string} benchmark
 * @returns {Promise<Started>}
 */
async function start(spec, benchmark) {
  const pin = options.pinned ? SERVER_CPUS : undefined;
  /** @param {string} name @param {string} script @param {Record<string, string>} env */
  const run = (name, script, env) =>
    startServer({
      name,
      script,
      env,
      cpus: pin,
      // The reference server runs with the Node.js options of `npm start`.
      nodeOptions: script === serverMain ? START_OPTIONS : [],
    });
  const nothing = async () => {};
  switch (spec.kind) {
    case 'bare':
      return { server: await run('bare', join(BENCH, 'servers', 'bare.mjs'), {}), dispose: nothing };
    case 'bridge':
      return { server: await run('bridge', join(BENCH, 'servers', 'bridge.mjs'), {}), dispose: nothing };
    case 'guard':
      return { server: await run('guard', join(BENCH, 'servers', 'guard.mjs'), {}), dispose: nothing };
    case 'oidc-provider':
      return {
        server: await run('oidc-provider', join(BENCH, 'servers', 'oidc-provider.mjs'), {}),
        dispose: nothing,
      };
    case 'ours': {
      if (spec.storage === 'memory') {
        return {
          server: await run('portcullis', serverMain, { RATE_LIMIT: 'off', STORAGE: 'memory' }),
          dispose: nothing,
        };
      }
      if (spec.storage === 'default' || spec.storage === 'pglite') {
        // `default`: no STORAGE, no DATABASE_URL, what `npm start` runs (SQLite); or PGlite. A fresh directory.
        const dataDir = mkdtempSync(join(tmpdir(), 'portcullis-bench-'));
        const dispose = async () => rmSync(dataDir, { recursive: true, force: true });
        const storage = spec.storage === 'pglite' ? { STORAGE: 'pglite' } : {};
        try {
          return {
            server: await run('portcullis', serverMain, { RATE_LIMIT: 'off', DATA_DIR: dataDir, ...storage }),
            dispose,
          };
        } catch (error) {
          await dispose();
          throw error;
        }
      }
      const database = await freshDatabase(`bench_${process.pid}_${benchmark.replace(/\W/g, '_')}`);
      try {
        return {
          server: await run('portcullis', serverMain, { RATE_LIMIT: 'off', DATABASE_URL: database.url }),
          database,
          dispose: () => database.drop(),
        };
      } catch (error) {
        await database.drop();
        throw error;
      }
    }
    case 'same':
      throw new Error('`same` has no server of its own');
  }
}

// ---------------------------------------------------------------------------------------------
// One benchmark: servers, setup, warm-up, alternating windows.

/**
 * @param {Benchmark} bench
 * @returns {Promise<BenchmarkResult>}
 */
async function runBenchmark(bench) {
  console.log(`\n== ${bench.name}: ${bench.description}`);
  const sides = bench.b === undefined ? [bench.a] : [bench.a, bench.b];
  /** @type {Array<() => Promise<void>>} */
  const stops = [];
  try {
    /** @type {Started[]} */
    const started = [];
    for (const side of sides) {
      if (side.server.kind === 'same') {
        started.push(/** @type {Started} */ (started[0]));
        continue;
      }
      const s = await start(side.server, bench.name);
      const stop = async () => {
        await s.server.stop();
        await s.dispose();
      };
      cleanups.add(stop);
      stops.push(async () => {
        cleanups.delete(stop);
        await stop();
      });
      started.push(s);
      console.log(`   ${side.label}: ${s.server.origin} (pid ${s.server.pid})`);
    }

    // Peak memory under the workload's load: from the warm-up window on. The setup before it (for
    // the reference server, 32 logins, each a scrypt of 32 MiB, two at a time) is kept apart.
    const memory = started.map(() => ({ maxRss: 0, hwm: 0, setupPeak: 0 }));
    const sample = () => {
      if (!HAVE_PROC) return;
      started.forEach((s, i) => {
        const m = treeMemory(s.server.pid);
        const mem = /** @type {{ maxRss: number, hwm: number, setupPeak: number }} */ (memory[i]);
        mem.maxRss = Math.max(mem.maxRss, m.rss);
        mem.hwm = Math.max(mem.hwm, m.hwm);
      });
    };
    const sampler = setInterval(sample, 500);

    try {
      for (const [i, side] of sides.entries()) {
        const origin = /** @type {Started} */ (started[i]).server.origin;
        await ask(
          {
            cmd: 'setup',
            key: `${bench.name}:${i}`,
            origin,
            workload: side.workload,
            concurrency: options.concurrency,
          },
          600,
        );
      }

      /**
       * @param {number} i - side index
       * @returns {Promise<WindowResult>}
       */
      const window = async (i) => {
        const s = /** @type {Started} */ (started[i]);
        const db0 = await s.database?.backends();
        const cpu0 = HAVE_PROC ? treeCpuSeconds(s.server.pid) : 0;
        const t0 = performance.now();
        const result = await ask(
          { cmd: 'run', key: `${bench.name}:${i}`, seconds: options.seconds, stallSeconds: options.stall },
          options.seconds + options.stall + 60,
        );
        const wall = (performance.now() - t0) / 1000;
        const cpu = HAVE_PROC ? treeCpuSeconds(s.server.pid) - cpu0 : Number.NaN;
        let dbCpuPerOp;
        if (s.database !== undefined && db0 !== undefined) {
          const db1 = await s.database.backends();
          let dbCpu = 0;
          for (const [pid, seconds] of db1) dbCpu += seconds - (db0.get(pid) ?? 0);
          dbCpuPerOp = result.ops > 0 ? (dbCpu * 1e6) / result.ops : Number.NaN;
        }
        return {
          ops: result.ops,
          errors: result.errors,
          errorKinds: result.errorKinds,
          elapsed: result.elapsed,
          opsPerSecond: result.opsPerSecond,
          p50: result.p50,
          p99: result.p99,
          requestsPerOp: result.requestsPerOp,
          generatorCpuPercent: result.generatorCpuPercent,
          cpuPerOp: result.ops > 0 ? (cpu * 1e6) / result.ops : Number.NaN,
          serverCpuPercent: (cpu / wall) * 100,
          dbCpuPerOp,
        };
      };

      /** @param {string} what @param {WindowResult} w */
      const log = (what, w) =>
        console.log(
          `   ${what.padEnd(34)} ${w.opsPerSecond.toFixed(0).padStart(6)} ops/s  p50 ${w.p50.toFixed(1).padStart(6)} ms  p99 ${w.p99.toFixed(1).padStart(6)} ms  ` +
            `CPU ${w.cpuPerOp.toFixed(0).padStart(6)} µs/op (${w.serverCpuPercent.toFixed(0)}%)` +
            `${w.dbCpuPerOp === undefined ? '' : ` +PG ${w.dbCpuPerOp.toFixed(0)} µs`}  gen ${w.generatorCpuPercent.toFixed(0)}%` +
            `${w.errors > 0 ? `  ERRORS ${w.errors}: ${w.errorKinds[0]?.[0]}` : ''}`,
        );

      if (HAVE_PROC) {
        started.forEach((s, i) => {
          const mem = /** @type {{ maxRss: number, hwm: number, setupPeak: number }} */ (memory[i]);
          const m = treeMemory(s.server.pid);
          mem.setupPeak = Math.max(mem.maxRss, mem.hwm, m.rss, m.hwm);
          resetPeakMemory(s.server.pid);
          mem.maxRss = 0;
          mem.hwm = 0;
        });
      }
      for (const [i, side] of sides.entries()) log(`warm-up ${side.label}`, await window(i));
      /** @type {WindowResult[][]} */
      const windows = sides.map(() => []);
      for (let n = 1; n <= options.windows; n++) {
        for (const [i, side] of sides.entries()) {
          const w = await window(i);
          windows[i]?.push(w);
          log(`${n}/${options.windows} ${side.label}`, w);
        }
      }
      sample();

      for (const [i] of sides.entries()) await ask({ cmd: 'teardown', key: `${bench.name}:${i}` }, 60);
      const [wa = [], wb] = windows;
      /** @type {BenchmarkResult} */
      const result = {
        name: bench.name,
        description: bench.description,
        a: {
          label: bench.a.label,
          summary: summarize(wa),
          windows: wa,
          memory: /** @type {any} */ (memory[0]),
        },
        b:
          bench.b === undefined || wb === undefined
            ? undefined
            : {
                label: bench.b.label,
                summary: summarize(wb),
                windows: wb,
                // The unguarded route runs in the guarded route's process: no memory of its own.
                memory:
                  bench.b.server.kind === 'same'
                    ? { maxRss: 0, hwm: 0, setupPeak: 0 }
                    : /** @type {any} */ (memory[1]),
              },
        ratio: wb === undefined ? undefined : pairedCpuRatio(wa, wb),
        targets: [],
        skipped: undefined,
      };
      result.targets = bench.targets(result);
      for (const t of result.targets) {
        console.log(
          `   target ${t.name}: ${t.goal}: ${t.measured}: ${t.pass === undefined ? 'not measured' : t.pass ? 'PASS' : 'FAIL'}`,
        );
      }
      return result;
    } finally {
      clearInterval(sampler);
    }
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

// ---------------------------------------------------------------------------------------------
// The run.

/** @param {string[]} command */
function quiet(command) {
  try {
    return execFileSync(/** @type {string} */ (command[0]), command.slice(1), {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim();
  } catch {
    return '';
  }
}
/** A package's version in `dir`'s node_modules (the bench's own, by default). @param {string} name @param {string} [dir] */
function benchVersion(name, dir = BENCH) {
  try {
    return JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

const head = quiet(['git', 'rev-parse', '--short', 'HEAD']);
const dirty = quiet(['git', 'status', '--porcelain', '--', 'src', 'examples']) !== '';
/** @type {import('./lib/report.mjs').RunInfo} */
const info = {
  date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
  cpu: cpus()[0]?.model.trim() ?? 'unknown CPU',
  cores: cpus().length,
  os: `${type()} ${release()}`,
  node: process.versions.node,
  commit:
    head === '' ? 'unknown' : `${head}${dirty ? ' (with uncommitted changes to src/ or examples/)' : ''}`,
  versions: {
    'oidc-provider': benchVersion('oidc-provider'),
    undici: benchVersion('undici'),
    '@hono/node-server': benchVersion('@hono/node-server', ROOT),
  },
  options: {
    windows: options.windows,
    seconds: options.seconds,
    concurrency: options.concurrency,
    pinned: options.pinned,
  },
  loadBefore: loadavg(),
  loadAfter: [],
  sign: undefined,
};

console.log(
  `portcullis benchmark: ${selected.map((b) => b.name).join(', ')}\n` +
    `${options.windows} windows x ${options.seconds} s per side, ${options.concurrency} virtual users, ` +
    `${options.pinned ? `servers on CPU ${SERVER_CPUS}, generator on CPU ${GENERATOR_CPUS}` : 'not pinned'}`,
);

/** @type {BenchmarkResult[]} */
const results = [];
/** @type {Target[]} Targets of no load benchmark (start-up). */
const extraTargets = [];
let failure;
try {
  const signCommand = options.pinned
    ? ['taskset', '-c', SERVER_CPUS, process.execPath, join(BENCH, 'lib', 'sign-floor.mjs')]
    : [process.execPath, join(BENCH, 'lib', 'sign-floor.mjs')];
  info.sign = JSON.parse(quiet(signCommand) || 'null') ?? undefined;
  console.log(`signing floor: ES256 ${info.sign?.es256} µs, RS256 ${info.sign?.rs256} µs`);

  let postgresProblem;
  if (selected.some((b) => b.a.server.kind === 'ours' && b.a.server.storage === 'postgres')) {
    const probe = new pg.Client({ connectionString: adminUrl });
    try {
      await probe.connect();
      await probe.query('SELECT 1');
    } catch (error) {
      postgresProblem = `PostgreSQL unreachable at ${adminUrl.replace(/:[^:@/]*@/, ':***@')} (${error instanceof Error ? error.message : error}); set BENCH_DATABASE_URL`;
      console.warn(`warning: ${postgresProblem}`);
    } finally {
      await probe.end().catch(() => {});
    }
  }

  for (const bench of selected) {
    if (
      postgresProblem !== undefined &&
      bench.a.server.kind === 'ours' &&
      bench.a.server.storage === 'postgres'
    ) {
      results.push({
        name: bench.name,
        description: bench.description,
        a: {
          label: bench.a.label,
          summary: summarize([]),
          windows: [],
          memory: { maxRss: 0, hwm: 0, setupPeak: 0 },
        },
        b: undefined,
        ratio: undefined,
        targets: [],
        skipped: postgresProblem,
      });
      continue;
    }
    results.push(await runBenchmark(bench));
  }
  if (measureStart) {
    console.log(`\n== ${STARTUP}: ${STARTUP_RUNS} first starts on a fresh DATA_DIR, each restarted once`);
    extraTargets.push(
      ...startupTargets(
        await measureStartup(
          ROOT,
          'default',
          STARTUP_RUNS,
          startupCpus === undefined ? [] : ['taskset', '-c', startupCpus],
        ),
      ),
    );
  }
  if (measureGrowth) {
    for (const [backend, label] of GROWTH_BACKENDS) {
      console.log(`\n== ${GROWTH}: ${label}`);
      extraTargets.push(...(await measureGrowthOf(backend, label)));
    }
  }
  for (const t of extraTargets)
    console.log(`   target ${t.name}: ${t.goal}: ${t.measured}: ${t.pass ? 'PASS' : 'FAIL'}`);
} catch (error) {
  failure = error;
} finally {
  await ask({ cmd: 'exit' }, 10).catch(() => {});
  await cleanup();
}
info.loadAfter = loadavg();

if (results.length > 0 || extraTargets.length > 0) {
  const markdown = renderMarkdown(info, results, extraTargets);
  const json = JSON.stringify({ info, issueFigures: ISSUE_FIGURES, results, extraTargets }, null, 2);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  mkdirSync(join(RESULTS, 'raw'), { recursive: true });
  writeFileSync(join(RESULTS, 'raw', `${stamp}.md`), markdown);
  writeFileSync(join(RESULTS, 'raw', `${stamp}.json`), `${json}\n`);
  console.log(`\n${markdown}`);
  const save = (complete && failure === undefined && !args.quick) || args.save;
  if (save) {
    writeFileSync(
      join(RESULTS, 'latest.md'),
      `# Latest benchmark results\n\nSee [docs/benchmarks.md](../../docs/benchmarks.md) for the method.\n\n${markdown}`,
    );
    writeFileSync(join(RESULTS, 'latest.json'), `${json}\n`);
    console.log('wrote bench/results/latest.md and latest.json');
    if (!args['no-publish'] && existsSync(DOC)) {
      const doc = readFileSync(DOC, 'utf8');
      const start = '<!-- results:start -->';
      const end = '<!-- results:end -->';
      const i = doc.indexOf(start);
      const j = doc.indexOf(end);
      if (i !== -1 && j > i) {
        writeFileSync(DOC, `${doc.slice(0, i + start.length)}\n${markdown}\n${doc.slice(j)}`);
        console.log('updated the results in docs/benchmarks.md');
      }
    }
  } else {
    console.log(`wrote bench/results/raw/${stamp}.md (a partial or quick run does not replace latest.md)`);
  }
}
if (failure !== undefined) {
  console.error(`\nbenchmark failed: ${failure instanceof Error ? failure.message : failure}`);
  process.exit(1);
}
process.exit(0);
