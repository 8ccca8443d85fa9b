/**
 * Summaries of the measured windows: medians per side, and the median of the per-pair ratios
 * (each A window with the B window right after it, so a drifting machine affects both alike).
 * @module
 */

/**
 * @param {readonly number[]} values
 * @returns {number} NaN for no values
 */
export function median(values) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  const upper = sorted[mid] ?? Number.NaN;
  return sorted.length % 2 === 1 ? upper : ((sorted[mid - 1] ?? Number.NaN) + upper) / 2;
}

/**
 * @typedef {object} WindowResult
 * @property {number} ops
 * @property {number} errors
 * @property {[string, number][]} errorKinds
 * @property {number} elapsed - seconds
 * @property {number} opsPerSecond
 * @property {number} p50 - ms
 * @property {number} p99 - ms
 * @property {number} requestsPerOp
 * @property {number} generatorCpuPercent
 * @property {number} cpuPerOp - server process tree, µs
 * @property {number} serverCpuPercent
 * @property {number | undefined} dbCpuPerOp - PostgreSQL backends, µs
 */

/**
 * @typedef {object} SideSummary
 * @property {number} windows
 * @property {number} ops
 * @property {number} errors
 * @property {[string, number][]} errorKinds
 * @property {number} opsPerSecond
 * @property {number} p50
 * @property {number} p99
 * @property {number} cpuPerOp
 * @property {number} serverCpuPercent
 * @property {number | undefined} dbCpuPerOp
 * @property {number} requestsPerOp
 * @property {number} generatorCpuPercent
 */

/**
 * Medians of a side's windows.
 * @param {readonly WindowResult[]} windows
 * @returns {SideSummary}
 */
export function summarize(windows) {
  /** @type {Map<string, number>} */
  const kinds = new Map();
  for (const w of windows) for (const [k, n] of w.errorKinds) kinds.set(k, (kinds.get(k) ?? 0) + n);
  const db = windows.map((w) => w.dbCpuPerOp).filter((v) => v !== undefined);
  return {
    windows: windows.length,
    ops: windows.reduce((s, w) => s + w.ops, 0),
    errors: windows.reduce((s, w) => s + w.errors, 0),
    errorKinds: [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 5),
    opsPerSecond: median(windows.map((w) => w.opsPerSecond)),
    p50: median(windows.map((w) => w.p50)),
    p99: median(windows.map((w) => w.p99)),
    cpuPerOp: median(windows.map((w) => w.cpuPerOp)),
    serverCpuPercent: median(windows.map((w) => w.serverCpuPercent)),
    dbCpuPerOp: db.length === 0 ? undefined : median(db),
    requestsPerOp: median(windows.map((w) => w.requestsPerOp)),
    generatorCpuPercent: median(windows.map((w) => w.generatorCpuPercent)),
  };
}

/**
 * Median over the pairs (A_i, B_i) of `B_i.cpuPerOp / A_i.cpuPerOp`.
 * @param {readonly WindowResult[]} a
 * @param {readonly WindowResult[]} b
 */
export function pairedCpuRatio(a, b) {
  return pairedRatio(
    a.map((w) => w.cpuPerOp),
    b.map((w) => w.cpuPerOp),
  );
}

/**
 * Median over the pairs (a_i, b_i) of `b_i / a_i`, skipping pairs where either is not a figure.
 * @param {readonly number[]} a
 * @param {readonly number[]} b
 */
export function pairedRatio(a, b) {
  const ratios = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = /** @type {number} */ (a[i]);
    const y = /** @type {number} */ (b[i]);
    if (x > 0 && Number.isFinite(x) && Number.isFinite(y)) ratios.push(y / x);
  }
  return median(ratios);
}
