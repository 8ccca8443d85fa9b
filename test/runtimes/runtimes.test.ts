/**
 * The runtime matrix: the app of `examples/runtimes/` (memory storage, login page, consent page,
 * a guarded API route), bundled once per runtime, runs on Node 20, 22, 24 and 26, Bun, Deno, and
 * workerd (Cloudflare Workers' runtime) without and with `nodejs_compat`; openid-client drives a
 * whole flow against each over HTTP. The browser's part (login form, consent form) is plain HTTP
 * with a cookie. Run with `npm run test:runtimes`; under `CI=true` a runtime that cannot be
 * installed or started fails its tests.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { InstalledRuntime } from './global-setup.js';

const CALLBACK = 'http://127.0.0.1:8976/callback';
/** The Workers compatibility date of both workerd configurations. */
const COMPATIBILITY_DATE = '2026-07-01';
const execute = [client.allowInsecureRequests];

/** A running server: its issuer and everything it printed. */
interface Served {
  readonly issuer: string;
  readonly output: () => string;
  /** Resolves once the output matches `pattern`; rejects after `timeoutMs` or when the process exits. */
  readonly waitForOutput: (pattern: RegExp, timeoutMs?: number) => Promise<void>;
  readonly stop: () => Promise<void>;
}

/** How to start the fixture on one runtime configuration. */
interface Configuration {
  readonly title: string;
  readonly runtime: string;
  /** The command line: binary, bundles folder, port. */
  readonly command: (binary: string, bundles: string, port: number) => readonly string[];
  /** workerd only: whether the Worker runs with `nodejs_compat`. */
  readonly nodejsCompat?: boolean;
}

/** workerd's configuration (Cap'n Proto text): the Worker, its `ISSUER` binding and its socket. */
function workerdConfig(bundles: string, port: number, nodejsCompat: boolean): string {
  const file = join(bundles, `workerd-${nodejsCompat ? 'compat' : 'plain'}-${port}.capnp`);
  // A compatibility date before 2026-08-04, from which nodejs_compat is on by default: the
  // configurations differ only by the flag, as two Workers projects would.
  const flags = nodejsCompat ? '"nodejs_compat"' : '';
  writeFileSync(
    file,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .app), (name = "probe", worker = .probe) ],
  sockets = [
    (name = "http", address = "127.0.0.1:${port}", http = (), service = "main"),
    (name = "probe", address = "127.0.0.1:${port + 1}", http = (), service = "probe"),
  ],
);
const app :Workerd.Worker = (
  modules = [ (name = "worker.mjs", esModule = embed "worker.mjs") ],
  compatibilityDate = "${COMPATIBILITY_DATE}",
  compatibilityFlags = [ ${flags} ],
  bindings = [ (name = "ISSUER", text = "http://127.0.0.1:${port}") ],
);
const probe :Workerd.Worker = (
  modules = [ (name = "probe.mjs", esModule = embed "probe.mjs") ],
  compatibilityDate = "${COMPATIBILITY_DATE}",
  compatibilityFlags = [ ${flags} ],
);
`,
  );
  // Reports whether this configuration gives the library node:crypto, as it looks for it.
  writeFileSync(
    join(bundles, 'probe.mjs'),
    `export default { fetch: () => Response.json({ nodeCrypto: typeof globalThis.process?.getBuiltinModule?.('node:crypto')?.sign === 'function' }) };\n`,
  );
  return file;
}

const node = (binary: string, bundles: string) => [binary, join(bundles, 'node.mjs')];

const CONFIGURATIONS: readonly Configuration[] = [
  { title: 'Node 20', runtime: 'node20', command: node },
  { title: 'Node 22', runtime: 'node22', command: node },
  { title: 'Node 24', runtime: 'node24', command: node },
  { title: 'Node 26', runtime: 'node26', command: node },
  { title: 'Bun', runtime: 'bun', command: (binary, bundles) => [binary, join(bundles, 'bun.mjs')] },
  {
    title: 'Deno',
    runtime: 'deno',
    command: (binary, bundles) => [
      binary,
      'run',
      '--no-prompt',
      '--allow-net=127.0.0.1',
      '--allow-env=PORT,ISSUER',
      join(bundles, 'deno.mjs'),
    ],
  },
  {
    title: 'workerd without nodejs_compat',
    runtime: 'workerd',
    nodejsCompat: false,
    command: (binary, bundles, port) => [binary, 'serve', workerdConfig(bundles, port, false)],
  },
  {
    title: 'workerd with nodejs_compat',
    runtime: 'workerd',
    nodejsCompat: true,
    command: (binary, bundles, port) => [binary, 'serve', workerdConfig(bundles, port, true)],
  },
];

/** A free TCP port on 127.0.0.1 whose successor is free too (workerd's probe listens there). */
async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await listenOnce(0);
    if (port < 65535 && (await listenOnce(port + 1).catch(() => 0)) !== 0) return port;
  }
  throw new Error('no two consecutive free ports on 127.0.0.1');
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => resolve(bound));
    });
  });
}

/** Starts `command` and resolves once the issuer's discovery document answers. */
async function serve(command: readonly string[], issuer: string, port: number): Promise<Served> {
  const [binary, ...args] = command;
  const child: ChildProcess = spawn(binary!, args, {
    env: {
      ...process.env,
      PORT: String(port),
      ISSUER: issuer,
      DENO_NO_UPDATE_CHECK: '1',
      DENO_DIR: join(inject('bundles'), 'deno-cache'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const waiters = new Set<() => void>();
  let exited: string | undefined;
  const onData = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const waiter of waiters) waiter();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exit = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = `exited (code ${code}, signal ${signal})`;
      for (const waiter of waiters) waiter();
      resolve();
    });
  });

  const waitForOutput = (pattern: RegExp, timeoutMs = 10_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (pattern.test(output)) done(resolve);
        else if (exited !== undefined) done(() => reject(new Error(`${binary} ${exited}:\n${output}`)));
      };
      const timer = setTimeout(
        () => done(() => reject(new Error(`no ${pattern} in ${timeoutMs} ms; output:\n${output}`))),
        timeoutMs,
      );
      const done = (settle: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        settle();
      };
      waiters.add(check);
      check();
    });

  const stop = async () => {
    if (exited === undefined) child.kill('SIGTERM');
    await exit;
  };

  // Ready when the discovery document answers; each attempt waits for its answer (or refusal).
  const deadline = performance.now() + 30_000;
  for (;;) {
    if (exited !== undefined) throw new Error(`${binary} ${exited} before serving:\n${output}`);
    const answered = await fetch(`${issuer}/.well-known/openid-configuration`).then(
      (response) => response.ok,
      () => false,
    );
    if (answered) break;
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`${binary} did not serve ${issuer} within 30 s:\n${output}`);
    }
    // Not listening yet: retry when the process has printed something or 50 ms have passed.
    await Promise.race([new Promise((resolve) => setTimeout(resolve, 50)), exit]);
  }
  return { issuer, output: () => output, waitForOutput, stop };
}

/** A browser, as far as the flow needs one: cookies, forms, no JavaScript. */
class Browser {
  #cookies = new Map<string, string>();
  constructor(readonly origin: string) {}

  async request(url: string | URL, init: { method?: string; form?: Record<string, string> } = {}) {
    const headers: Record<string, string> = {};
    if (this.#cookies.size > 0) {
      headers.cookie = [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    }
    if (init.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers.origin = this.origin;
    }
    const response = await fetch(new URL(url, this.origin), {
      method: init.method ?? (init.form === undefined ? 'GET' : 'POST'),
      headers,
      body: init.form === undefined ? null : new URLSearchParams(init.form),
      redirect: 'manual',
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair!.split('=');
      this.#cookies.set(name!.trim(), value.join('='));
    }
    return response;
  }

  /** The hidden and named fields of the first form on an HTML page, and its action. */
  static form(html: string): { action: string; fields: Record<string, string> } {
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    if (action === undefined) throw new Error(`no form in:\n${html}`);
    const fields: Record<string, string> = {};
    for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
      fields[m[1]!] = m[2]!
        .replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)))
        .replace(
          /&(amp|quot|lt|gt);/g,
          (_, name: string) => ({ amp: '&', quot: '"', lt: '<', gt: '>' })[name]!,
        );
    }
    return { action: action.replace(/&amp;/g, '&'), fields };
  }

  /**
   * Opens the authorization URL, signs in as `user` on the login page it is sent to, allows on
   * the consent page, and returns the redirect to the client's callback.
   */
  async signInAndAllow(authorizationUrl: URL, user: string): Promise<URL> {
    const toLogin = await this.request(authorizationUrl);
    expect(toLogin.status).toBe(303);
    const loginUrl = new URL(toLogin.headers.get('location')!, this.origin);
    expect(loginUrl.pathname).toBe('/login');

    const loginPage = await this.request(loginUrl);
    expect(loginPage.status).toBe(200);
    const login = Browser.form(await loginPage.text());
    const signedIn = await this.request(login.action, { form: { ...login.fields, name: user } });
    expect(signedIn.status).toBe(303);

    // Back at the authorization endpoint, now signed in: the consent page.
    const consentPage = await this.request(signedIn.headers.get('location')!);
    expect(consentPage.status).toBe(200);
    const consent = Browser.form(await consentPage.text());
    expect(new URL(consent.action, this.origin).pathname).toBe('/oauth/authorize/decision');
    const decided = await this.request(consent.action, { form: { ...consent.fields, decision: 'allow' } });
    expect(decided.status).toBe(303);
    return new URL(decided.headers.get('location')!);
  }
}

/** An authorization URL with PKCE (S256), state and nonce. */
async function authorizationRequest(config: client.Configuration, scope: string) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: CALLBACK,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url, checks: { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce } };
}

/** Registers a public client (RFC 7591) after discovering the server (RFC 8414, OIDC Discovery). */
async function register(issuer: string): Promise<client.Configuration> {
  const config = await client.dynamicClientRegistration(
    new URL(issuer),
    {
      redirect_uris: [CALLBACK],
      client_name: 'runtime matrix',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    },
    client.None(),
    { execute },
  );
  // The ID token's signature is checked against the JWKS too (OIDC Core §3.1.3.7).
  client.enableNonRepudiationChecks(config);
  return config;
}

const runtimes = inject('runtimes');
const bundles = inject('bundles');

describe.each(CONFIGURATIONS)('the runtime fixture on $title', (configuration) => {
  const installed: InstalledRuntime = runtimes[configuration.runtime] ?? { error: 'not in the matrix' };
  const unavailable = 'error' in installed ? installed.error : undefined;
  // Outside CI a runtime that cannot be installed here (no network) is skipped; under CI it fails.
  const skip = unavailable !== undefined && process.env.CI !== 'true';
  if (skip) console.warn(`skipped ${configuration.title}: ${unavailable} (with CI=true this fails)`);
  let served: Served;
  let port: number;

  beforeAll(async () => {
    if (skip) return;
    if (unavailable !== undefined) throw new Error(`${configuration.title}: ${unavailable}`);
    const { binary } = installed as { binary: string };
    port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    served = await serve(configuration.command(binary, bundles, port), issuer, port);
  });

  afterAll(async () => {
    await served?.stop();
  });

  it.skipIf(skip)(
    'discovery, registration, login and consent, code exchange with a valid ID token, refresh, guarded API, revocation, JWKS (RFC 6749 §4.1, RFC 7591, RFC 7009, OIDC Core §3.1)',
    async () => {
      const { issuer } = served;
      const config = await register(issuer);
      expect(config.serverMetadata()).toMatchObject({
        issuer,
        token_endpoint: `${issuer}/oauth/token`,
        jwks_uri: `${issuer}/.well-known/jwks.json`,
      });
      const clientId = config.clientMetadata().client_id;

      const browser = new Browser(issuer);
      const { url, checks } = await authorizationRequest(config, 'openid profile email notes:read');
      const callback = await browser.signInAndAllow(url, 'ada');
      expect(callback.searchParams.get('iss')).toBe(issuer);

      // state, iss (RFC 9207), PKCE, and the ID token: signature (JWKS), iss, aud, nonce, iat, exp.
      const tokens = await client.authorizationCodeGrant(config, callback, {
        ...checks,
        idTokenExpected: true,
      });
      expect(tokens.claims()).toMatchObject({
        iss: issuer,
        sub: 'ada',
        aud: clientId,
        nonce: checks.expectedNonce,
      });
      expect(tokens.refresh_token).toBeTypeOf('string');

      // The JWKS verifies the ES256 access token (RFC 9068) and the RS256 ID token.
      const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!));
      const { payload: access } = await jwtVerify(tokens.access_token, jwks, { issuer, typ: 'at+jwt' });
      expect(access).toMatchObject({ sub: 'ada', client_id: clientId, aud: issuer });
      expect(decodeProtectedHeader(tokens.access_token).alg).toBe('ES256');
      await jwtVerify(tokens.id_token!, jwks, { issuer, audience: clientId });

      const info = await client.fetchUserInfo(config, tokens.access_token, 'ada');
      expect(info).toMatchObject({ sub: 'ada', name: 'Ada Lovelace', email: 'ada@example.com' });

      // The guarded route: 401 with a challenge without a token, the notes with one.
      const anonymous = await fetch(`${issuer}/api/notes`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer /);
      const notes = await client.fetchProtectedResource(
        config,
        tokens.access_token,
        new URL(`${issuer}/api/notes`),
        'GET',
      );
      expect(notes.status).toBe(200);
      expect(await notes.json()).toEqual({ owner: 'ada', notes: ['Buy milk'] });

      // Refresh (RFC 6749 §6): a new refresh token; the new access token works.
      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      const again = await client.fetchProtectedResource(
        config,
        refreshed.access_token,
        new URL(`${issuer}/api/notes`),
        'GET',
      );
      expect(again.status).toBe(200);

      // Revocation (RFC 7009): the refresh token no longer refreshes, the grant's tokens are dead.
      await client.tokenRevocation(config, refreshed.refresh_token!);
      const refused = await client.refreshTokenGrant(config, refreshed.refresh_token!).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(client.ResponseBodyError);
      expect((refused as client.ResponseBodyError).error).toBe('invalid_grant');
      const afterRevocation = await fetch(`${issuer}/api/notes`, {
        headers: { authorization: `Bearer ${refreshed.access_token}` },
      });
      expect(afterRevocation.status).toBe(401);
      expect(afterRevocation.headers.get('www-authenticate')).toContain('error="invalid_token"');
    },
  );

  it.skipIf(skip)(
    'an unexpected failure answers 500 server_error and is logged through the configured logger, without the token',
    async () => {
      const { issuer } = served;
      const config = await register(issuer);
      const { url, checks } = await authorizationRequest(config, 'openid profile notes:read');
      // lin has no profile: the app's claims callback throws, as a failing user database would.
      const callback = await new Browser(issuer).signInAndAllow(url, 'lin');
      const tokens = await client.authorizationCodeGrant(config, callback, checks);

      const response = await fetch(`${issuer}/oauth/userinfo`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect(response.status).toBe(500);
      const body = await response.text();
      expect(JSON.parse(body)).toMatchObject({ error: 'server_error' });
      // The client learns nothing of the cause; the operator's log has it.
      expect(body).not.toContain('no profile');

      await served.waitForOutput(/"level":"error","message":"request failed"[^\n]*no profile for user lin/);
      const logged = served
        .output()
        .split('\n')
        .find((line) => line.includes('"request failed"'))!;
      expect(JSON.parse(logged)).toMatchObject({ path: '/oauth/userinfo' });
      expect(served.output()).not.toContain(tokens.access_token);
    },
  );

  if (configuration.nodejsCompat !== undefined) {
    it.skipIf(skip)(
      `the Worker ${configuration.nodejsCompat ? 'has' : 'has no'} node:crypto, as the configuration says`,
      async () => {
        const probe = await fetch(`http://127.0.0.1:${port + 1}/`);
        expect(await probe.json()).toEqual({ nodeCrypto: configuration.nodejsCompat });
      },
    );
  }
});
