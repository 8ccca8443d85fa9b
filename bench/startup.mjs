#!/usr/bin/env node
/**
 * Start-up of the reference server as `npm start` runs it (`node <its options> examples/course-school/dist/main.js`,
 * `NODE_ENV=production`): milliseconds from spawning the process to the first answered metadata
 * request (`GET /.well-known/oauth-authorization-server`, polled every 2 ms), and the resident memory
 * right after, on a fresh `DATA_DIR` (first start: schema, seed, signing keys) and again on the same
 * directory (a restart). Median of `--runs` (default 7) per case.
 *
 * Usage: `node bench/startup.mjs [--runs N] [--storage default,pglite,memory]`. Needs the built
 * library and server (`npm run build && npm run build:example`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, startScriptNodeOptions } from './lib/servers.mjs';

const ROOT = join(import.meta.dirname, '..');
const MAIN = join(ROOT, 'examples', 'course-school', 'dist', 'main.js');
const START_OPTIONS = startScriptNodeOptions(ROOT);
const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '7' }, storage: { type: 'string', default: 'default,pglite' } },
});
const runs = Number(args.runs);

/** @param {number[]} values */
const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

/** RSS of a process in bytes, from /proc. @param {number} pid */
function rss(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? Number.NaN : Number(match[1]) * 1024;
}

/**
 * Starts the server, polls the metadata until it answers, stops it.
 * @param {Record<string, string>} env
 * @returns {Promise<{ ms: number, rss: number }>}
 */
async function startOnce(env) {
  const port = await freePort();
  const base = { ...process.env };
  for (const key of ['PORT', 'HOST', 'ISSUER', 'STORAGE', 'DATABASE_URL', 'DATA_DIR', 'SESSION_SECRET'])
    delete base[key];
  const started = performance.now();
  const child = spawn(process.execPath, [...START_OPTIONS, MAIN], {
    env: { ...base, NODE_ENV: 'production', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${port}/.well-known/oauth-authorization-server`;
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
  const memory = rss(/** @type {number} */ (child.pid));
  child.kill('SIGTERM');
  await exited;
  return { ms, rss: memory };
}

console.log(
  `node ${process.version}, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
for (const storage of args.storage.split(',')) {
  const first = [];
  const restart = [];
  for (let i = 0; i < runs; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'portcullis-startup-'));
    const env = storage === 'default' ? { DATA_DIR: dataDir } : { DATA_DIR: dataDir, STORAGE: storage };
    try {
      first.push(await startOnce(env));
      restart.push(await startOnce(env));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  for (const [label, results] of [
    ['fresh DATA_DIR', first],
    ['restart', restart],
  ]) {
    console.log(
      `${storage.padEnd(8)} ${label.padEnd(15)} first metadata answer: median ${median(results.map((r) => r.ms)).toFixed(0)} ms ` +
        `(min ${Math.min(...results.map((r) => r.ms)).toFixed(0)}, max ${Math.max(...results.map((r) => r.ms)).toFixed(0)}); ` +
        `RSS then: median ${(median(results.map((r) => r.rss)) / 2 ** 20).toFixed(0)} MB`,
    );
  }
}
console.log(
  `load average after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
