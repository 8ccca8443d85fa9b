#!/usr/bin/env node
/**
 * Checks the package as npm would publish it (`npm run check:package`, part of `npm test`):
 *
 * 1. `dist/` is built and not older than `src/` (run `npm run build` first).
 * 2. `npm pack` into a temporary folder; the tarball holds `package.json`, `dist/` and the files of
 *    `files`, and nothing from `src/`, `test/` or `scripts/`.
 * 3. publint (`--strict`: warnings fail too) on the tarball.
 * 4. Are the Types Wrong (`attw`) on the tarball with the `node16` profile: every subpath must
 *    resolve, with the right types and module format, under `node16`/`nodenext` from ESM and from
 *    CJS and under `bundler`. The `node10` resolution (`moduleResolution: "node"`) is not checked:
 *    it ignores `exports`, so the subpaths (`portcullis/express`, ...) cannot resolve there; the
 *    root entry still works there through `main` and `types`. TypeScript itself calls `node10`
 *    legacy, and we support `node16`/`nodenext` and `bundler` only.
 * 5. The API reference covers the public API: the `@module` names of the `typedoc.json` entry
 *    points are exactly `portcullis` plus every code subpath of `exports`.
 *
 * Exit code 0 when everything passes; 1 with the reasons otherwise.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const failures = [];

function step(title) {
  console.log(`\n--- ${title}`);
}

/** Runs a command with inherited output; records a failure when it exits non-zero. */
function run(title, command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) failures.push(`${title} failed (exit ${result.status ?? result.signal})`);
}

/** Newest modification time under `dir`, in ms. */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/** Code subpaths of the `exports` map (`.`, `./express`, ...), without `./package.json`. */
function codeSubpaths() {
  return Object.entries(pkg.exports)
    .filter(([, target]) => typeof target !== 'string' || !target.endsWith('.json'))
    .map(([subpath]) => subpath);
}

// 1. dist is built and fresh ---------------------------------------------------------------------
step('dist is built from the current sources');
let distTime = 0;
try {
  distTime = statSync(join(root, 'dist', 'index.js')).mtimeMs;
} catch {
  console.error('dist/index.js is missing: run `npm run build` first');
  process.exit(1);
}
if (newest(join(root, 'src')) > distTime) {
  console.error('src/ changed after the last build: run `npm run build` first');
  process.exit(1);
}
console.log('ok');

// 2. pack ------------------------------------------------------------------------------------------
step('npm pack');
const packDir = mkdtempSync(join(tmpdir(), 'portcullis-pack-'));
try {
  const packed = spawnSync('npm', ['pack', '--json', '--pack-destination', packDir], {
    cwd: root,
    encoding: 'utf8',
  });
  if (packed.status !== 0) {
    console.error(packed.stderr);
    process.exit(1);
  }
  const [info] = JSON.parse(packed.stdout);
  const tarball = join(packDir, info.filename);
  const files = info.files.map((f) => f.path);
  console.log(`${info.filename}: ${files.length} files, ${(info.size / 1024).toFixed(1)} KiB packed`);
  const leaked = files.filter((f) => /^(src|test|scripts|examples|docs|\.changeset)\//.test(f));
  if (leaked.length > 0)
    failures.push(`the tarball contains files that are not for users: ${leaked.join(', ')}`);
  for (const entry of pkg.files) {
    const present = files.some((f) => f === entry || f.startsWith(`${entry}/`));
    if (!present) console.warn(`warning: "${entry}" is in package.json "files" but not in the tarball`);
  }

  // 3. publint -------------------------------------------------------------------------------------
  step('publint --strict');
  run('publint', bin('publint'), ['run', tarball, '--strict']);

  // 4. attw ----------------------------------------------------------------------------------------
  step('attw --profile node16 (node10 ignored: it cannot see `exports` subpaths)');
  run('attw', bin('attw'), [tarball, '--profile', 'node16', '--format', 'table-flipped']);
} finally {
  rmSync(packDir, { recursive: true, force: true });
}

// 5. typedoc entry points -------------------------------------------------------------------------
step('typedoc entry points cover every subpath');
const failuresBefore = failures.length;
const typedoc = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8'));
const documented = new Map();
for (const entry of typedoc.entryPoints) {
  const source = readFileSync(join(root, entry), 'utf8');
  const name = /^\s*\*\s*@module\s+(\S+)/m.exec(source)?.[1];
  if (name === undefined) failures.push(`${entry} has no \`@module <name>\` tag naming its subpath`);
  else documented.set(name, entry);
}
const expected = codeSubpaths().map((subpath) =>
  subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`,
);
for (const name of expected) {
  if (!documented.has(name)) {
    failures.push(
      `${name} is exported but not documented: add its entry file to typedoc.json with \`@module ${name}\``,
    );
  }
}
for (const [name, entry] of documented) {
  if (!expected.includes(name))
    failures.push(`typedoc.json documents ${name} (${relative(root, entry)}) which is not exported`);
}
if (failures.length === failuresBefore) console.log(`ok: ${expected.join(', ')}`);

if (failures.length > 0) {
  console.error(`\ncheck-package: ${failures.length} problem(s)\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log('\ncheck-package: the package is ready to publish');
