/**
 * The clients of the client matrix (`npm run test:clients`), each as its users get it:
 *
 * - the npm MCP clients, mcp-remote and the MCP Inspector, pinned with their lockfile in
 *   `test/clients/npm-clients/` and installed with `npm ci` into
 *   `node_modules/.cache/clients/<lockfile digest>/` (never project dependencies, so `npm ci` of
 *   the project stays as fast as it was; install scripts are not run);
 * - the Inspector needs Node 22.19+: it runs on the runtime matrix's Node 22 (`runtime-binaries.mjs`);
 * - Python's authlib and requests-oauthlib, and Go with golang.org/x/oauth2, from Debian packages
 *   (`.ci/run` installs them when missing); the Go program is built in GOPATH mode.
 *
 * The MCP TypeScript SDK is a devDependency of the project. Run this file to install and check
 * everything ahead of the tests: `node scripts/client-matrix.mjs`. Linux x64 only.
 * @module
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureRuntime, NODE_NEWEST, nodeRuntime, root } from './runtime-binaries.mjs';

/** The Debian packages of the matrix's Python and Go clients. */
export const DEBIAN_PACKAGES = [
  'python3-authlib',
  'python3-requests-oauthlib',
  'golang-go',
  'golang-golang-x-oauth2-dev',
];

/** Debian's Python, whose dist-packages hold the Debian client packages (not a pyenv or venv one). */
export const PYTHON = '/usr/bin/python3';

/** Go in GOPATH mode over the Debian packages' sources; the build cache stays in node_modules. */
export const GO_ENV = {
  GO111MODULE: 'off',
  GOPATH: '/usr/share/gocode',
  GOFLAGS: '',
  GOCACHE: join(root, 'node_modules', '.cache', 'go-build'),
};

const npmClients = join(root, 'test', 'clients', 'npm-clients');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * Installs the pinned npm clients unless the lockfile's install is there.
 * @returns {{ mcpRemote: string, inspector: string, installed: boolean, seconds: number }} the
 *   entry points of mcp-remote's proxy and the Inspector's launcher; whether they were installed
 *   now and how long that took
 */
export function ensureNpmClients() {
  const lock = readFileSync(join(npmClients, 'package-lock.json'));
  const digest = createHash('sha256').update(lock).digest('hex').slice(0, 16);
  const prefix = join(root, 'node_modules', '.cache', 'clients', digest);
  const mcpRemote = join(prefix, 'node_modules', 'mcp-remote', 'dist', 'proxy.js');
  const inspector = join(
    prefix,
    'node_modules',
    '@modelcontextprotocol',
    'inspector',
    'clients',
    'launcher',
    'build',
    'index.js',
  );
  const started = performance.now();
  let installed = false;
  if (!existsSync(mcpRemote) || !existsSync(inspector)) {
    rmSync(prefix, { recursive: true, force: true });
    mkdirSync(prefix, { recursive: true });
    copyFileSync(join(npmClients, 'package.json'), join(prefix, 'package.json'));
    copyFileSync(join(npmClients, 'package-lock.json'), join(prefix, 'package-lock.json'));
    console.log(`installing the npm clients of the client matrix into ${prefix}`);
    const result = spawnSync(
      npm,
      ['ci', '--prefix', prefix, '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'],
      { stdio: 'inherit' },
    );
    if (result.status !== 0 || !existsSync(mcpRemote) || !existsSync(inspector)) {
      throw new Error('could not install the npm clients (npm ci in test/clients/npm-clients failed)');
    }
    installed = true;
  }
  return { mcpRemote, inspector, installed, seconds: (performance.now() - started) / 1000 };
}

/**
 * The Node the Inspector runs on (its `engines`: 22.19+): the runtime matrix's pinned Node 22.
 * @returns {string} the binary
 */
export function inspectorNode() {
  return ensureRuntime(nodeRuntime(NODE_NEWEST[0])).binary;
}

/**
 * Checks that Debian's Python has the two client libraries.
 * @returns {{ authlib: string, requestsOauthlib: string }} their versions
 */
export function checkPythonClients() {
  const result = spawnSync(
    PYTHON,
    ['-c', 'import authlib, requests_oauthlib; print(authlib.__version__, requests_oauthlib.__version__)'],
    { encoding: 'utf8' },
  );
  if (result.status !== 0) {
    throw new Error(
      `${PYTHON} lacks authlib or requests-oauthlib: apt-get install -y python3-authlib python3-requests-oauthlib (${(result.stderr ?? result.error?.message ?? '').trim().split('\n').at(-1)})`,
    );
  }
  const [authlib, requestsOauthlib] = result.stdout.trim().split(' ');
  return { authlib: authlib ?? '', requestsOauthlib: requestsOauthlib ?? '' };
}

/**
 * Builds the Go client (`test/clients/go/x_oauth2_client.go`) against Debian's golang.org/x/oauth2.
 * @param {string} outDir - where the binary goes
 * @returns {{ binary: string, go: string }} the binary, and the toolchain's version
 */
export function buildGoClient(outDir) {
  const env = { ...process.env, ...GO_ENV };
  const version = spawnSync('go', ['version'], { encoding: 'utf8', env });
  if (version.status !== 0) {
    throw new Error('no Go toolchain: apt-get install -y golang-go golang-golang-x-oauth2-dev');
  }
  if (!existsSync(join(GO_ENV.GOPATH, 'src', 'golang.org', 'x', 'oauth2', 'oauth2.go'))) {
    throw new Error('no golang.org/x/oauth2 in GOPATH: apt-get install -y golang-golang-x-oauth2-dev');
  }
  const binary = join(outDir, 'x_oauth2_client');
  const build = spawnSync(
    'go',
    ['build', '-o', binary, join(root, 'test', 'clients', 'go', 'x_oauth2_client.go')],
    { encoding: 'utf8', env },
  );
  if (build.status !== 0) throw new Error(`go build failed: ${build.stderr}`);
  return { binary, go: version.stdout.trim() };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const npmInstall = ensureNpmClients();
  console.log(
    `npm clients ready (${npmInstall.installed ? `installed in ${npmInstall.seconds.toFixed(1)} s` : 'cached'})`,
  );
  console.log(`Inspector's Node: ${inspectorNode()}`);
  console.log(`Python clients: ${JSON.stringify(checkPythonClients())}`);
  const out = join(root, 'node_modules', '.cache', 'clients');
  mkdirSync(out, { recursive: true });
  console.log(`Go client: ${JSON.stringify(buildGoClient(out))}`);
}
