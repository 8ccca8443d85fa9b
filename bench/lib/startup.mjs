/**
 * Start-up of the reference server as `npm start` runs it: milliseconds from spawning the process
 * to the first answered metadata request, on a fresh `DATA_DIR` (first start: schema, seed,
 * signing keys) and again on the same directory (a restart). Used by `bench/startup.mjs` and by
 * the start-up target of `npm run bench`.
 * @module
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startScriptNodeOptions } from './servers.mjs';

/**
 * @typedef {object} StartupRun
 * @property {number} ms - from spawn to the first 200 of the metadata document
 * @property {number} rss - bytes, right after that answer
 */

/**
 * @typedef {object} StartupSummary
 * @property {number} median - ms
 * @property {number} min - ms
 * @property {number} max - ms
 * @property {number} rss - median bytes
 */

/** @param {number[]} values */
const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] ?? Number.NaN;

/** RSS of a process in bytes, from /proc. @param {number} pid */
function rss(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? Number.NaN : Number(match[1]) * 1024;
}

/**
 * Starts the server once, polls its metadata (every 2 ms) until it answers, stops it.
 * @param {string} root - the repository root (its `package.json` gives the Node.js options of `npm start`)
 * @param {Record<string, string>} env - storage settings (`DATA_DIR`, `STORAGE`)
 * @param {string[]} [prefix] - a command to run node under (`taskset -c 0`)
 * @returns {Promise<StartupRun>}
 */
export async function startOnce(root, env, prefix = []) {
  const main = join(root, 'examples', 'course-school', 'dist', 'main.js');
  const port = await freePort();
  const base = { ...process.env };
  for (const key of ['PORT', 'HOST', 'ISSUER', 'STORAGE', 'DATABASE_URL', 'DATA_DIR', 'SESSION_SECRET'])
    delete base[key];
  const command = [...prefix, process.execPath, ...startScriptNodeOptions(root), main];
  const started = performance.now();
  const child = spawn(/** @type {string} */ (command[0]), command.slice(1), {
    env: { ...base, NODE_ENV: 'production', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${port}/.well-known/oauth-authorization-server`;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode})`);
      if (performance.now() - started > 60_000) throw new Error('no answer within 60 s');
      try {
        const response = await fetch(url);
        await response.arrayBuffer();
        if (response.status === 200) break;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const ms = performance.now() - started;
    return { ms, rss: rss(/** @type {number} */ (child.pid)) };
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  }
}

/**
 * `runs` first starts on fresh data directories, each followed by a restart on the same directory.
 * @param {string} root
 * @param {'default' | 'pglite' | 'memory'} storage
 * @param {number} runs
 * @param {string[]} [prefix]
 * @returns {Promise<{ fresh: StartupSummary, restart: StartupSummary }>}
 */
export async function measureStartup(root, storage, runs, prefix = []) {
  /** @type {StartupRun[]} */
  const fresh = [];
  /** @type {StartupRun[]} */
  const restart = [];
  for (let i = 0; i < runs; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'portcullis-startup-'));
    const env = storage === 'default' ? { DATA_DIR: dataDir } : { DATA_DIR: dataDir, STORAGE: storage };
    try {
      fresh.push(await startOnce(root, env, prefix));
      restart.push(await startOnce(root, env, prefix));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  /** @param {StartupRun[]} all @returns {StartupSummary} */
  const summary = (all) => ({
    median: median(all.map((r) => r.ms)),
    min: Math.min(...all.map((r) => r.ms)),
    max: Math.max(...all.map((r) => r.ms)),
    rss: median(all.map((r) => r.rss)),
  });
  return { fresh: summary(fresh), restart: summary(restart) };
}
