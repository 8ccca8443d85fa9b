/**
 * The consumer test: installs the packed tarball into a scratch project in a temporary folder, the
 * way a user would, and uses it from the outside:
 *
 * 1. without the optional peers installed, `portcullis` loads, and any subpath that fails names a
 *    missing optional peer;
 * 2. with them, every subpath of the `exports` map loads from ESM (`import`) and from CJS
 *    (`require`), with the same export names;
 * 3. the types resolve and typecheck, with the repository's TypeScript, under `module` `node16`
 *    (ESM files), `node20` (ESM and CJS files: Node 20.19+ can `require` ES modules) and
 *    `bundler`;
 * 4. a whole flow runs against the installed package (see "a flow against the installed package"):
 *    metadata and registration through both adapters, then the authorization-code flow with PKCE
 *    over real HTTP through the Express router (login hand-off, consent page, decision, token
 *    exchange, UserInfo, a guarded API route, refresh with rotation).
 *
 * The subpaths come from `package.json` `exports`, the optional peers from `peerDependenciesMeta`:
 * a new subpath or peer is covered without editing this file. Packages are installed with
 * `--prefer-offline`, so npm's cache (filled by the repository's own install) serves them.
 *
 * Needs a fresh `dist/` (`npm run build`). Run with `npm run test:consumer`; set
 * `KEEP_CONSUMER=1` to keep the scratch project for inspection.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));

interface PackageJson {
  name: string;
  exports: Record<string, string | { import: { default: string }; require: { default: string } }>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  devDependencies?: Record<string, string>;
  version?: string;
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
const pkg = readJson<PackageJson>(join(root, 'package.json'));

/** `.` -> `portcullis`, `./express` -> `portcullis/express`. */
const specifierOf = (subpath: string) => (subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`);
const isJson = (subpath: string) => subpath.endsWith('.json');
const subpaths = Object.keys(pkg.exports);
const codeSpecifiers = subpaths.filter((s) => !isJson(s)).map(specifierOf);
const jsonSpecifiers = subpaths.filter(isJson).map(specifierOf);
const optionalPeers = Object.keys(pkg.peerDependencies ?? {}).filter(
  (name) => pkg.peerDependenciesMeta?.[name]?.optional === true,
);

/** The version of `name` the repository has installed, so the scratch project gets the same. */
function installedVersion(name: string): string | undefined {
  try {
    return readJson<{ version: string }>(join(root, 'node_modules', name, 'package.json')).version;
  } catch {
    return undefined;
  }
}

/** `@types/express` for `express`, `@types/scope__name` for `@scope/name`. */
const typesPackageOf = (name: string) =>
  `@types/${name.startsWith('@') ? name.slice(1).replace('/', '__') : name}`;

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

let scratch = '';
let tarball = '';

/** Runs `node` on a script of the scratch project; returns its parsed JSON output. */
async function runNode<T>(script: string): Promise<T> {
  const { stdout } = await run(process.execPath, [script], { cwd: scratch });
  return JSON.parse(stdout) as T;
}

async function npmInstall(specs: readonly string[]): Promise<void> {
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', ...specs], {
    cwd: scratch,
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
}

/** What importing or requiring one specifier gave. */
type LoadResult = { ok: true; names: string[] } | { ok: false; code: string | undefined; message: string };

/** Imports (ESM) or requires (CJS) every specifier and prints `{ [specifier]: LoadResult }`. */
function writeLoadScripts(): void {
  const specs = JSON.stringify([...codeSpecifiers, ...jsonSpecifiers]);
  const report = `(error) => ({ ok: false, code: error.code, message: String(error.message).split('\\n')[0] })`;
  const names = `(m) => Object.keys(m).filter((n) => n !== '__esModule').sort()`;
  writeFileSync(
    join(scratch, 'load.mjs'),
    `const out = {};
for (const s of ${specs}) {
  try {
    const m = s.endsWith('.json') ? await import(s, { with: { type: 'json' } }) : await import(s);
    out[s] = { ok: true, names: (${names})(m) };
  } catch (error) { out[s] = (${report})(error); }
}
console.log(JSON.stringify(out));
`,
  );
  writeFileSync(
    join(scratch, 'load.cjs'),
    `const out = {};
for (const s of ${specs}) {
  try { out[s] = { ok: true, names: (${names})(require(s)) }; } catch (error) { out[s] = (${report})(error); }
}
console.log(JSON.stringify(out));
`,
  );
}

beforeAll(async () => {
  const built = statSync(join(root, 'dist', 'index.js'), { throwIfNoEntry: false });
  if (built === undefined || newest(join(root, 'src')) > built.mtimeMs) {
    throw new Error('dist/ is missing or older than src/: run `npm run build` first');
  }
  scratch = mkdtempSync(join(tmpdir(), 'portcullis-consumer-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: root });
  tarball = join(scratch, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
  writeFileSync(
    join(scratch, 'package.json'),
    JSON.stringify({ name: 'portcullis-consumer', private: true, version: '0.0.0' }, null, 2),
  );
  writeLoadScripts();
  // Only the tarball first: its own dependencies, none of the optional peers.
  await npmInstall([tarball]);
});

afterAll(() => {
  if (scratch !== '' && process.env.KEEP_CONSUMER === undefined)
    rmSync(scratch, { recursive: true, force: true });
});

describe('the installed package', () => {
  it('loads its core without the optional peers; a subpath that fails names a missing optional peer', async () => {
    const results = await runNode<Record<string, LoadResult>>('load.mjs');
    expect(results[pkg.name]?.ok).toBe(true);
    for (const [specifier, result] of Object.entries(results)) {
      if (result.ok) continue;
      expect(result.code, `${specifier}: ${result.message}`).toBe('ERR_MODULE_NOT_FOUND');
      const missing = optionalPeers.filter((peer) => result.message.includes(`'${peer}'`));
      expect(missing, `${specifier} failed for another reason: ${result.message}`).toHaveLength(1);
    }
  });

  it('installs next to its optional peers and their types', async () => {
    const wanted = [...optionalPeers, '@types/node'];
    for (const peer of optionalPeers) {
      const types = typesPackageOf(peer);
      if (pkg.devDependencies?.[types] !== undefined) wanted.push(types);
    }
    const specs = wanted.map((name) => {
      const version = installedVersion(name) ?? pkg.peerDependencies?.[name] ?? pkg.devDependencies?.[name];
      return version === undefined ? name : `${name}@${version}`;
    });
    await npmInstall([tarball, ...specs]);
    for (const name of wanted) expect(installedVersion(name), name).toBeDefined();
  });

  it('loads every subpath from ESM and from CJS, with the same export names', async () => {
    const esm = await runNode<Record<string, LoadResult>>('load.mjs');
    const cjs = await runNode<Record<string, LoadResult>>('load.cjs');
    for (const specifier of codeSpecifiers) {
      const fromEsm = esm[specifier];
      const fromCjs = cjs[specifier];
      expect(fromEsm, `import('${specifier}')`).toMatchObject({ ok: true });
      expect(fromCjs, `require('${specifier}')`).toMatchObject({ ok: true });
      if (fromEsm?.ok !== true || fromCjs?.ok !== true) continue;
      expect(fromEsm.names.length, `${specifier} exports nothing`).toBeGreaterThan(0);
      expect(fromCjs.names, `${specifier}: CJS and ESM export different names`).toEqual(fromEsm.names);
    }
    for (const specifier of jsonSpecifiers) {
      expect(esm[specifier], specifier).toMatchObject({ ok: true, names: ['default'] });
      expect(cjs[specifier], specifier).toMatchObject({ ok: true });
    }
  });

  // node16 checks the .d.ts and .d.cts files themselves too (skipLibCheck off, which also checks
  // @types/node and costs ~10 s); bundler resolves the same .d.ts files, so once is enough. With
  // skipLibCheck off, tsc also reports errors inside the peers' own declarations (PGlite's need the
  // DOM lib and @types/emscripten, which it does not depend on): those are the peers' to fix, so only
  // errors in this package's files, and in the test's own files, count.
  //
  // The CommonJS declarations (.d.cts) are checked under node20, not node16: they import the types
  // of `jose`, an ES module, which Node 20.19+ (the `engines` floor) can `require`, and TypeScript's
  // node16 mode assumes it cannot (TS1479). Consumers on `module: node16` with skipLibCheck off see
  // that error in `.d.cts` files; node20 and nodenext model the runtime this package supports.
  it.each([
    [
      'node16',
      { module: 'node16', moduleResolution: 'node16', skipLibCheck: false },
      ['types.mts', 'usage.mts'],
    ],
    [
      'node20',
      { module: 'node20', moduleResolution: 'node16', skipLibCheck: false },
      ['types.mts', 'types.cts', 'usage.mts'],
    ],
    [
      'bundler',
      { module: 'preserve', moduleResolution: 'bundler', skipLibCheck: true },
      ['types.mts', 'usage.mts'],
    ],
  ] as const)('typechecks against its types with moduleResolution %s', async (name, resolution, files) => {
    const imports = codeSpecifiers.map((s, i) => `import * as m${i} from '${s}';`).join('\n');
    const uses = `export const modules = [${codeSpecifiers.map((_, i) => `m${i}`).join(', ')}] as const;\n`;
    writeFileSync(join(scratch, 'types.mts'), `${imports}\n${uses}`);
    writeFileSync(join(scratch, 'types.cts'), `${imports}\n${uses}`);
    writeFileSync(join(scratch, 'usage.mts'), USAGE);
    const tsconfig = `tsconfig.${name}.json`;
    writeFileSync(
      join(scratch, tsconfig),
      JSON.stringify({
        compilerOptions: {
          ...resolution,
          target: 'es2022',
          lib: ['es2023'],
          types: ['node'],
          strict: true,
          noEmit: true,
        },
        files,
      }),
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', tsconfig], { cwd: scratch }).catch(
      (error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }),
    );
    expect(ownErrors(result.stdout)).toBe('');
  });
});

/**
 * The tsc diagnostics that are not inside another package's declarations: each diagnostic starts
 * with `path(line,col): error`, and its continuation lines are indented.
 */
function ownErrors(output: string): string {
  const kept: string[] = [];
  let keep = true;
  for (const line of output.split('\n')) {
    if (!/^\s/.test(line)) {
      keep = !line.startsWith('node_modules/') || line.startsWith(`node_modules/${pkg.name}/`);
    }
    if (keep) kept.push(line);
  }
  return kept.join('\n').trim();
}

/** Typed use of the public API the way a host writes it; checked, not run. */
const USAGE = `import { createServer } from 'node:http';
import express from 'express';
import { createAuthorizationServer, memoryStorage, OAuthError, type Storage } from 'portcullis';
import { createExpressRouter } from 'portcullis/express';
import { createFetchHandler } from 'portcullis/fetch';
import { toNodeHandler } from 'portcullis/node';
import { runStorageConformance } from 'portcullis/testing';

const storage: Storage = memoryStorage();
const server = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage });
const app = express();
app.use(createExpressRouter(server));
const handle: (request: Request) => Promise<Response> = createFetchHandler(server);
createServer(toNodeHandler(server));
const error: OAuthError = new OAuthError('invalid_request', 'example');
export { app, error, handle, runStorageConformance };
`;

// ---------------------------------------------------------------------------------------------
// The flow runs in this process against the installed files (loaded natively, outside vitest's
// transform), typed with the sources' types.

type Core = typeof import('../../src/index.js');
type ExpressAdapter = typeof import('../../src/adapters/express.js');
type FetchAdapter = typeof import('../../src/adapters/fetch.js');
type GuardedRequest = import('../../src/adapters/express.js').GuardedRequest;
type Express = typeof import('express');

/** Imports `specifier` as the scratch project resolves it with the `import` condition. */
async function importInstalled<T>(specifier: string): Promise<T> {
  const target = pkg.exports[specifier === pkg.name ? '.' : `./${specifier.slice(pkg.name.length + 1)}`];
  const path =
    target === undefined
      ? createRequire(join(scratch, 'package.json')).resolve(specifier)
      : join(scratch, 'node_modules', pkg.name, typeof target === 'string' ? target : target.import.default);
  return (await import(pathToFileURL(path).href)) as T;
}

/** State the steps share; each step adds what the next one needs. */
interface Flow {
  core: Core;
  httpServer: Server;
  /** Origin of the Express app, which is also the issuer. */
  issuer: string;
  server: Awaited<ReturnType<Core['createAuthorizationServer']>>;
  handleFetch: (request: Request) => Promise<Response>;
  /** Clients registered so far, by adapter. */
  clients: Record<string, { client_id: string; redirect_uris: string[] }>;
  /** The PKCE verifier of the authorization request. */
  verifier: string;
  /** The authorization code the consent decision returned. */
  code: string;
  /** The token response of the code exchange. */
  tokens: { access_token: string; refresh_token: string; id_token?: string; scope: string };
}

/** The signed-in user, as the test's `authenticate` hook reads it from a cookie. */
const USER_COOKIE = 'user=ada';
const CALLBACK = 'http://127.0.0.1:49153/callback';

describe('a flow against the installed package', () => {
  const flow: Partial<Flow> = { clients: {} };
  const need = <K extends keyof Flow>(key: K): Flow[K] => {
    const value = flow[key];
    if (value === undefined) throw new Error(`an earlier step did not set ${key}`);
    return value as Flow[K];
  };

  afterAll(async () => {
    await flow.server?.close();
    await new Promise<void>((done) => (flow.httpServer ? flow.httpServer.close(() => done()) : done()));
  });

  const registration = (redirectUri: string) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [redirectUri], client_name: 'Consumer test CLI' }),
  });

  it('creates a server with memoryStorage() behind Express and Fetch', async () => {
    const core = await importInstalled<Core>(pkg.name);
    const { createExpressRouter } = await importInstalled<ExpressAdapter>(`${pkg.name}/express`);
    const { createFetchHandler } = await importInstalled<FetchAdapter>(`${pkg.name}/fetch`);
    const express = (await importInstalled<{ default: Express }>('express')).default;
    // Listen first, so the issuer is the real origin and later steps can follow its URLs.
    const app = express();
    const httpServer = createServer(app);
    await new Promise<void>((done) => httpServer.listen(0, '127.0.0.1', done));
    const issuer = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
    const server = await core.createAuthorizationServer({
      issuer,
      storage: core.memoryStorage(),
      // A test login: the `user` cookie names the signed-in user.
      authenticate: (request) =>
        request.headers.cookie === USER_COOKIE
          ? { id: 'ada', authTime: Math.floor(Date.now() / 1000) }
          : null,
      loginUrl: '/login',
      claims: () => ({ name: 'Ada Lovelace', email: 'ada@example.com', email_verified: true }),
      // Reuse is detected at once, without waiting out the refresh grace window on the real clock.
      tokens: { refreshGraceSeconds: 0 },
    });
    app.use(createExpressRouter(server));
    const { requireToken } = await importInstalled<ExpressAdapter>(`${pkg.name}/express`);
    app.get('/api/me', requireToken(server.guard({ resource: issuer }), { required: true }), (req, res) => {
      const { auth } = req as GuardedRequest;
      res.json({ subject: auth.anonymous ? null : auth.subject });
    });
    Object.assign(flow, { core, httpServer, issuer, server, handleFetch: createFetchHandler(server) });
  });

  it('serves the same metadata (RFC 8414) through Fetch and Express', async () => {
    const issuer = need('issuer');
    const url = `${issuer}/.well-known/oauth-authorization-server`;
    const viaFetch = await need('handleFetch')(new Request(url));
    const viaExpress = await fetch(url);
    expect(viaFetch.status).toBe(200);
    expect(viaExpress.status).toBe(200);
    const metadata = (await viaFetch.json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe(issuer);
    expect(metadata.registration_endpoint).toBe(`${issuer}/oauth/register`);
    expect(await viaExpress.json()).toEqual(metadata);
  });

  it('registers a loopback client through the Fetch handler (RFC 7591)', async () => {
    const issuer = need('issuer');
    const response = await need('handleFetch')(
      new Request(`${issuer}/oauth/register`, registration('http://127.0.0.1:49152/callback')),
    );
    expect(response.status).toBe(201);
    const client = (await response.json()) as Flow['clients'][string];
    expect(client.redirect_uris).toEqual(['http://127.0.0.1:49152/callback']);
    need('clients').fetch = client;
  });

  it('registers a loopback client through the Express router (RFC 7591)', async () => {
    const response = await fetch(
      `${need('issuer')}/oauth/register`,
      registration('http://127.0.0.1:49153/callback'),
    );
    expect(response.status).toBe(201);
    const client = (await response.json()) as Flow['clients'][string];
    expect(client.client_id).not.toBe(need('clients').fetch?.client_id);
    need('clients').express = client;
  });

  it('hands a browser without a session to the login page, then shows the consent page', async () => {
    const issuer = need('issuer');
    const client = need('clients').express!;
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL(`${issuer}/oauth/authorize`);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: CALLBACK,
      scope: 'openid profile email',
      state: 'consumer-state',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const toLogin = await fetch(authorize, { redirect: 'manual' });
    expect(toLogin.status).toBe(303);
    const login = new URL(toLogin.headers.get('location')!);
    expect(login.pathname).toBe('/login');
    // Back from the login page with a session: the stored request resumes at the consent page.
    const consent = await fetch(login.searchParams.get('return_to')!, { headers: { cookie: USER_COOKIE } });
    expect(consent.status).toBe(200);
    expect(consent.headers.get('x-frame-options')).toBe('DENY');
    const html = await consent.text();
    expect(html).toContain('Consumer test CLI');
    const fields = Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
    );
    expect(Object.keys(fields).sort()).toEqual(['csrf_token', 'request_id']);

    const decision = await fetch(`${issuer}/oauth/authorize/decision`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: USER_COOKIE, origin: issuer, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, decision: 'allow' }),
    });
    expect(decision.status).toBe(303);
    const callback = new URL(decision.headers.get('location')!);
    expect(`${callback.origin}${callback.pathname}`).toBe(CALLBACK);
    expect(callback.searchParams.get('state')).toBe('consumer-state');
    expect(callback.searchParams.get('iss')).toBe(issuer);
    Object.assign(flow, { verifier, code: callback.searchParams.get('code') });
  });

  it('exchanges the code with the PKCE verifier (RFC 6749 §4.1.3, RFC 7636 §4.5)', async () => {
    const response = await fetch(`${need('issuer')}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: need('code'),
        redirect_uri: CALLBACK,
        client_id: need('clients').express!.client_id,
        code_verifier: need('verifier'),
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const tokens = (await response.json()) as Flow['tokens'] & { token_type: string };
    expect(tokens.token_type).toBe('Bearer');
    expect(tokens.scope).toBe('openid profile email');
    expect(tokens.refresh_token).toBeTypeOf('string');
    expect(tokens.id_token).toBeTypeOf('string');
    flow.tokens = tokens;
  });

  it('serves UserInfo and a guarded API route to the access token', async () => {
    const authorization = `Bearer ${need('tokens').access_token}`;
    const userinfo = await fetch(`${need('issuer')}/oauth/userinfo`, { headers: { authorization } });
    expect(await userinfo.json()).toEqual({
      sub: 'ada',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      email_verified: true,
    });
    const me = await fetch(`${need('issuer')}/api/me`, { headers: { authorization } });
    expect(await me.json()).toEqual({ subject: 'ada' });
    const anonymous = await fetch(`${need('issuer')}/api/me`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain('resource_metadata=');
  });

  it('refreshes with rotation: the new refresh token works, the old one is refused', async () => {
    const refresh = (refreshToken: string) =>
      fetch(`${need('issuer')}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: need('clients').express!.client_id,
        }),
      });
    const first = await refresh(need('tokens').refresh_token);
    expect(first.status).toBe(200);
    const rotated = (await first.json()) as Flow['tokens'];
    expect(rotated.refresh_token).not.toBe(need('tokens').refresh_token);
    const me = await fetch(`${need('issuer')}/api/me`, {
      headers: { authorization: `Bearer ${rotated.access_token}` },
    });
    expect(me.status).toBe(200);
    // Reuse of the rotated-out token revokes the grant (RFC 9700 §4.14.2).
    const reused = await refresh(need('tokens').refresh_token);
    expect(reused.status).toBe(400);
    expect(((await reused.json()) as { error: string }).error).toBe('invalid_grant');
    expect((await refresh(rotated.refresh_token)).status).toBe(400);
  });
});
