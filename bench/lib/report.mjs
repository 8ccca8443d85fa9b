/**
 * The results as markdown: the table of every benchmark, the targets (issues 8 and 15) with PASS/FAIL,
 * the floor on the day, and the conditions of the run.
 * @module
 */

/** @typedef {import('./stats.mjs').SideSummary} SideSummary */

/**
 * @typedef {object} SideResult
 * @property {string} label - e.g. `portcullis (memory)`
 * @property {SideSummary} summary
 * @property {import('./stats.mjs').WindowResult[]} windows
 * @property {{ maxRss: number, hwm: number, setupPeak?: number }} memory - bytes, of this side's server:
 *   the peak under load (from the warm-up window on), and the peak of the setup before it
 */

/**
 * @typedef {object} Target
 * @property {string} name
 * @property {string} goal
 * @property {string} measured
 * @property {boolean | undefined} pass - undefined when not measured
 */

/**
 * @typedef {object} BenchmarkResult
 * @property {string} name
 * @property {string} description
 * @property {SideResult} a - ours (or the guarded route, or the floor)
 * @property {SideResult | undefined} b - oidc-provider (or the unguarded route)
 * @property {number | undefined} ratio - paired median of B CPU/op over A CPU/op
 * @property {Target[]} targets
 * @property {string | undefined} skipped - why it did not run
 */

/**
 * @typedef {object} RunInfo
 * @property {string} date
 * @property {string} cpu
 * @property {number} cores
 * @property {string} os
 * @property {string} node
 * @property {string} commit
 * @property {Record<string, string>} versions
 * @property {{ windows: number, seconds: number, concurrency: number, pinned: boolean }} options
 * @property {number[]} loadBefore
 * @property {number[]} loadAfter
 * @property {{ es256: number, rs256: number } | undefined} sign
 */

/** @param {number} v @param {number} [digits] */
const num = (v, digits = 0) =>
  Number.isFinite(v)
    ? v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '–';

/** @param {number} bytes */
const mb = (bytes) => (bytes > 0 ? num(bytes / 2 ** 20) : '–');

/**
 * @param {SideResult} side
 * @param {string} benchmark
 * @param {string} ratio
 */
function row(side, benchmark, ratio) {
  const s = side.summary;
  const db = s.dbCpuPerOp === undefined ? '' : ` (+${num(s.dbCpuPerOp)} PostgreSQL)`;
  return `| ${benchmark} | ${side.label} | ${num(s.opsPerSecond)} | ${num(s.p50, 1)} | ${num(s.p99, 1)} | ${num(s.cpuPerOp)}${db} | ${num(s.requestsPerOp, 1)} | ${mb(Math.max(side.memory.maxRss, side.memory.hwm))} | ${mb(side.memory.setupPeak ?? 0)} | ${s.errors} / ${s.ops} | ${ratio} |`;
}

/**
 * The markdown table of all benchmarks.
 * @param {readonly BenchmarkResult[]} results
 */
export function resultsTable(results) {
  const lines = [
    '| Benchmark | Server | ops/s | p50 ms | p99 ms | server CPU µs/op | requests/op | peak RSS MB under load | peak RSS MB in setup | errors / ops | CPU: oidc-provider ÷ ours |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of results) {
    if (r.skipped !== undefined) {
      lines.push(`| ${r.name} | skipped: ${r.skipped} | | | | | | | | | |`);
      continue;
    }
    const ratio =
      r.ratio === undefined
        ? ''
        : r.name === 'guard'
          ? `guarded ÷ unguarded: ${num(1 / r.ratio, 2)}x`
          : r.name === 'floor'
            ? `bridge ÷ bare: ${num(r.ratio, 2)}x`
            : `${num(r.ratio, 2)}x${r.ratio < 1 ? ` (ours ${num(1 / r.ratio, 1)}x more)` : ''}`;
    lines.push(row(r.a, r.name, ratio));
    if (r.b !== undefined) lines.push(row(r.b, '', ''));
  }
  return lines.join('\n');
}

/**
 * The targets with PASS/FAIL.
 * @param {readonly BenchmarkResult[]} results
 * @param {readonly Target[]} [extra] - targets of no load benchmark (start-up), last
 */
export function targetsTable(results, extra = []) {
  const lines = ['| Target | Goal | Measured | Result |', '|---|---|--:|---|'];
  for (const t of [...results.flatMap((r) => r.targets), ...extra]) {
    const verdict = t.pass === undefined ? 'not measured' : t.pass ? '**PASS**' : '**FAIL**';
    lines.push(`| ${t.name} | ${t.goal} | ${t.measured} | ${verdict} |`);
  }
  return lines.join('\n');
}

/**
 * The whole results document (bench/results/latest.md; the part between the markers of
 * docs/benchmarks.md).
 * @param {RunInfo} info
 * @param {readonly BenchmarkResult[]} results
 * @param {readonly Target[]} [extra] - targets of no load benchmark (start-up)
 */
export function renderMarkdown(info, results, extra = []) {
  const floor = results.find((r) => r.name === 'floor' && r.skipped === undefined);
  const generator = results
    .flatMap((r) => [r.a, r.b])
    .filter((s) => s !== undefined)
    .map((s) => s.summary.generatorCpuPercent);
  const errors = results.flatMap((r) =>
    [r.a, r.b]
      .filter((s) => s !== undefined && s.summary.errors > 0)
      .map(
        (s) => `- ${r.name}, ${s?.label}: ${s?.summary.errorKinds.map(([k, n]) => `${n} × ${k}`).join('; ')}`,
      ),
  );
  const o = info.options;
  return [
    `Measured ${info.date} on ${info.cpu} (${info.cores} cores), ${info.os}, Node ${info.node}; commit ${info.commit}; ` +
      `${Object.entries(info.versions)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}.`,
    '',
    `${o.concurrency} concurrent virtual users, closed loop over keep-alive connections; ${o.windows} measured windows of ${o.seconds} s per side after a discarded warm-up window, alternating A B A B; medians of the windows. ` +
      (o.pinned
        ? 'Servers pinned to core 0, the load generator to core 1 (taskset).'
        : 'Not pinned (no taskset): servers and the load generator share the cores.') +
      ` Load average before / after: ${info.loadBefore.map((v) => v.toFixed(2)).join(' ')} / ${info.loadAfter.map((v) => v.toFixed(2)).join(' ')}.`,
    '',
    resultsTable(results),
    '',
    'Server CPU is user + system time of the server process tree from `/proc`, per operation; for PostgreSQL the backends serving the benchmark database are added in parentheses (not included in the figure). CPU ratio: oidc-provider CPU/op divided by ours, the median over adjacent window pairs (above 1: ours costs less). Peak RSS under load: the larger of the sampled VmRSS and VmHWM of the server process from the warm-up window to the last window (VmHWM reset through `/proc/<pid>/clear_refs` when the setup ends); in setup: the peak from the server start to the end of the setup of the workload (for the reference server, 32 sign-ins, each a 32 MiB scrypt, two at a time). The reference server runs with the Node.js options of `npm start`. Latency is per operation (the whole flow for code-flow).',
    '',
    '### Targets',
    '',
    targetsTable(results, extra),
    '',
    '### Floor on the day',
    '',
    `- Bare \`node:http\` server, small JSON response: ${floor === undefined ? 'not measured' : `${num(floor.a.summary.cpuPerOp)} µs CPU per request (${num(floor.a.summary.opsPerSecond)} requests/s)`}.`,
    ...(floor?.b === undefined
      ? []
      : [
          `- The same answer from Hono on \`@hono/node-server\` (the bridge of the adapters and the reference server): ${num(floor.b.summary.cpuPerOp)} µs CPU per request (${num(floor.b.summary.opsPerSecond)} requests/s), ${num(floor.ratio ?? Number.NaN, 2)}x the bare one.`,
        ]),
    `- One signature with node:crypto on the server core: ES256 ${info.sign === undefined ? '–' : num(info.sign.es256)} µs, RS256 (RSA-2048) ${info.sign === undefined ? '–' : num(info.sign.rs256)} µs.`,
    `- Load generator CPU (median per window, of one core): ${num(Math.min(...generator))}–${num(Math.max(...generator))} %.`,
    ...(errors.length === 0 ? [] : ['', '### Errors', '', ...errors]),
    '',
  ].join('\n');
}
