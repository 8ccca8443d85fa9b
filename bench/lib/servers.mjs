/**
 * Starting and stopping the servers under test as child processes, pinned to the server core
 * when `taskset` exists. Each server prints one `... listening on <url>` line once it accepts
 * connections; its output is kept for the error message if it does not.
 * @module
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * The Node.js options `npm start` runs the reference server with (`scripts.start` of the root
 * package.json: `node <options> examples/course-school/dist/main.js`), so that the benchmark runs it
 * exactly as a user does.
 * @param {string} root - the repository root
 * @returns {string[]}
 */
export function startScriptNodeOptions(root) {
  const pkg = JSON.parse(readFileSync(`${root}/package.json`, 'utf8'));
  const match = /(?:^|&& )node ((?:--\S+ )*)examples\/course-school\/dist\/main\.js/.exec(
    pkg.scripts?.start ?? '',
  );
  if (match === null)
    throw new Error('package.json scripts.start does not run examples/course-school/dist/main.js');
  return (match[1] ?? '').trim().split(' ').filter(Boolean);
}

/**
 * A free TCP port on 127.0.0.1 (listen on 0, read the port, close).
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * @typedef {object} RunningServer
 * @property {string} name
 * @property {number} pid - the server's own pid (taskset execs node, keeping it)
 * @property {string} origin
 * @property {() => string} output - what it printed so far (last 4 KB)
 * @property {() => Promise<void>} stop - SIGTERM, then SIGKILL after 5 s
 */

/**
 * Starts `node <script>` with `env` added to a clean copy of the environment.
 * @param {object} options
 * @param {string} options.name
 * @param {string} options.script - absolute path
 * @param {Record<string, string>} options.env
 * @param {string | undefined} options.cpus - a taskset CPU list, e.g. `0`; undefined: not pinned
 * @param {number} [options.startSeconds] - how long it may take to listen
 * @param {string[]} [options.nodeOptions] - Node.js options before the script
 * @returns {Promise<RunningServer>}
 */
export async function startServer({ name, script, env, cpus, startSeconds = 120, nodeOptions = [] }) {
  const port = await freePort();
  /** @type {Record<string, string | undefined>} */
  const base = { ...process.env };
  // The reference server reads these; only what the benchmark passes may apply. Its workloads sign
  // in with the demo accounts, which exist by default on the loopback http issuer it gets here: an
  // inherited DEMO=off would remove them, an inherited TRUST_PROXY would key its limits differently.
  for (const key of [
    'PORT',
    'HOST',
    'ISSUER',
    'STORAGE',
    'DATABASE_URL',
    'DATA_DIR',
    'SESSION_SECRET',
    'KEY_WRAPPING_SECRET',
    'RATE_LIMIT',
    'TIME_IN_TOKENS',
    'DEMO',
    'TRUST_PROXY',
    'MCP_ALLOWED_ORIGINS',
  ])
    delete base[key];
  const command =
    cpus === undefined
      ? [process.execPath, ...nodeOptions, script]
      : ['taskset', '-c', cpus, process.execPath, ...nodeOptions, script];
  const child = spawn(/** @type {string} */ (command[0]), command.slice(1), {
    env: { ...base, NODE_ENV: 'production', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  /** @param {Buffer} chunk */
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-4096);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) => child.once('exit', resolve));

  const origin = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start within ${startSeconds} s:\n${output}`)),
      startSeconds * 1000,
    );
    child.stdout.on('data', () => {
      const match = /listening on (http:\/\/[^\s)]+)/.exec(output);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code ?? signal}) before listening:\n${output}`));
    });
  });
  return {
    name,
    pid: /** @type {number} */ (child.pid),
    origin,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
