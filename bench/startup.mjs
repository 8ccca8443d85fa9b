#!/usr/bin/env node
/**
 * Start-up of the reference server as `npm start` runs it (`node <its options> examples/course-school/dist/main.js`,
 * `NODE_ENV=production`): milliseconds from spawning the process to the first answered metadata
 * request (`GET /.well-known/oauth-authorization-server`, polled every 2 ms), and the resident memory
 * right after, on a fresh `DATA_DIR` (first start: schema, seed, signing keys) and again on the same
 * directory (a restart). Median of `--runs` (default 7) per case. `npm run bench` measures the
 * default storage the same way for its start-up target.
 *
 * Usage: `node bench/startup.mjs [--runs N] [--storage default,pglite,memory]`. Needs the built
 * library and server (`npm run build && npm run build:example`).
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { measureStartup } from './lib/startup.mjs';

const ROOT = join(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '7' }, storage: { type: 'string', default: 'default,pglite' } },
});
const runs = Number(args.runs);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

console.log(`node ${process.version}, load average ${load()}`);
for (const storage of args.storage.split(',')) {
  const measured = await measureStartup(ROOT, /** @type {'default' | 'pglite' | 'memory'} */ (storage), runs);
  for (const [label, s] of /** @type {const} */ ([
    ['fresh DATA_DIR', measured.fresh],
    ['restart', measured.restart],
  ])) {
    console.log(
      `${storage.padEnd(8)} ${label.padEnd(15)} first metadata answer: median ${s.median.toFixed(0)} ms ` +
        `(min ${s.min.toFixed(0)}, max ${s.max.toFixed(0)}); RSS then: median ${(s.rss / 2 ** 20).toFixed(0)} MB`,
    );
  }
}
console.log(`load average after: ${load()}`);
