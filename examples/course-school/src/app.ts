/**
 * Composes the reference server: storage, seed, sessions, the library's authorization server, and
 * one `node:http` server: the library answers its endpoints and `/.well-known/*` documents through
 * its node adapter, and one Hono app on `@hono/node-server` serves everything else (the pages, the
 * documents, `/mcp` and the business API).
 * @module
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener, type HttpBindings } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { type ClientAddressResolver, createClientAddressResolver, createHostCheck } from 'portcullis';
import { hardenServer, toNodeHandler } from 'portcullis/node';
import { createLoginGuard } from './accounts/login-guard.js';
import { createSessionManager, repeatsCookie, type SessionManager } from './accounts/sessions.js';
import { createApiApp } from './api/app.js';
import { errorResponse, json, logFailure } from './api/errors.js';
import { API_ROUTES } from './api/route-table.js';
import { createBearerGuard } from './auth/bearer-guard.js';
import type { AppConfig } from './config.js';
import type { DataStore } from './data/store.js';
import { withUserCache } from './data/user-cache.js';
import { buildAuthMd } from './docs/auth-md.js';
import { buildLlmsTxt } from './docs/llms-txt.js';
import { loadDiscovery } from './docs/metadata.js';
import { buildOpenApi } from './docs/openapi.js';
import { createDocumentsApp } from './docs/routes.js';
import { signingKeyOptions } from './key-wrapping.js';
import { createMcpApp } from './mcp/mcp-endpoint.js';
import { type CourseSchoolOAuth, createCourseSchoolOAuth } from './oauth.js';
import { createPagesApp } from './pages/app.js';
import { loginCookieName } from './pages/login.js';
import { courseSchoolScopes } from './scopes.js';
import { DEMO_ACCOUNTS, seed, withoutDemoAccounts } from './seed.js';
import { openStorage } from './storage.js';

/** The school's name on pages and documents. */
export const TITLE = 'Lovelace School of Computing';
const VERSION = '0.1.0';

/** A running reference server. */
export interface CourseSchoolServer {
  /** The issuer: the base URL of every endpoint. */
  readonly issuer: string;
  /** Where the socket listens, e.g. `127.0.0.1:3000`. */
  readonly address: string;
  readonly storageDescription: string;
  /** Whether the demo accounts exist (and are shown). */
  readonly demo: boolean;
  /** The server's own data (users, sessions, the school's records), as its handlers see it. */
  readonly data: DataStore;
  readonly server: Server;
  /** Stops accepting connections, then closes the authorization server and the storage. */
  close(): Promise<void>;
}

type AppEnv = { Bindings: HttpBindings };

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * A path served with some methods answers the others `405` with `Allow` (RFC 9110 §15.5.6), not
 * `404`: registered after every route, this catch-all runs only when no route of the path answered.
 */
function answerOtherMethods(app: OpenAPIHono<AppEnv>): void {
  const methods = new Map<string, string[]>();
  for (const route of app.routes) {
    if (route.method === 'ALL' || route.path.includes('*')) continue;
    const known = methods.get(route.path) ?? [];
    if (!known.includes(route.method)) methods.set(route.path, [...known, route.method]);
  }
  const order = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
  for (const [path, allowed] of methods) {
    const sorted = allowed.sort((a, b) => order.indexOf(a) - order.indexOf(b));
    const allow = [...sorted, ...(allowed.includes('GET') ? ['HEAD'] : [])].join(', ');
    app.all(path, () =>
      json(405, { error: 'method_not_allowed', error_description: `use ${allow}` }, { allow }),
    );
  }
}

/** What the Hono app is made of. */
interface AppParts {
  readonly config: AppConfig;
  readonly issuer: string;
  readonly data: DataStore;
  readonly sessions: SessionManager;
  readonly clients: ClientAddressResolver;
  /** The started authorization server and the facts the documents repeat. */
  readonly library: CourseSchoolOAuth;
}

/** Builds the Hono app around a started authorization server. */
async function createApp(parts: AppParts): Promise<OpenAPIHono<AppEnv>> {
  const { config, issuer, data, sessions, clients } = parts;
  const { oauth, registration, grantable } = parts.library;
  const now = (): number => Date.now();
  const discovery = await loadDiscovery(oauth);
  const demoAccounts = config.demo ? DEMO_ACCOUNTS : [];
  const clientKey = (c: Context) =>
    clients.key(getConnInfo(c).remote.address, c.req.header('x-forwarded-for')) ?? 'unknown';

  const app = new OpenAPIHono<AppEnv>();

  // Before pages, API, /mcp and the library: a request naming another host is a DNS-rebinding
  // page's (ABU-06). The library's own check, with the same hosts, answers its routes alike.
  const hostAllowed = createHostCheck({ issuer, allowedHosts: config.allowedHosts });
  app.use('*', async (c, next) => {
    if (hostAllowed(c.req.header('host'))) return next();
    return json(421, {
      error: 'invalid_request',
      error_description: 'this server does not answer for the host this request names',
    });
  });

  // Two session (or login) cookies of one name: another origin of this host planted one. Refused
  // before the pages read either; the server sends such requests here even for the library's paths.
  const ownCookies = [sessions.cookieName, loginCookieName(sessions.secure)];
  app.use('*', async (c, next) => {
    if (!repeatsCookie(c.req.header('cookie'), ownCookies)) return next();
    return c.html(
      "<!doctype html><title>Bad request</title><p>Your browser sent two sign-in cookies for this site, one of them set by another site. Clear this site's cookies and sign in again.</p>",
      400,
    );
  });

  app.route(
    '/',
    createPagesApp({
      data,
      sessions,
      issuer,
      oauth,
      scopes: courseSchoolScopes,
      grantable,
      guard: createLoginGuard(config.loginLimits),
      clientKey,
      demoAccounts,
      now,
    }),
  );
  // Built on the first GET /openapi.json, once every route below is declared: generating the
  // document from the route schemas is a fifth of the start-up CPU, and most starts never serve it.
  let openapi: string | undefined;
  app.route(
    '/',
    createDocumentsApp({
      openapi: () =>
        (openapi ??= JSON.stringify(
          buildOpenApi(app, { discovery, scopes: courseSchoolScopes, title: TITLE }),
        )),
      authMd: buildAuthMd({
        discovery,
        scopes: courseSchoolScopes,
        registration,
        studentGrantable: grantable('student'),
        title: TITLE,
        demoAccounts,
      }),
      llmsTxt: buildLlmsTxt({ discovery, title: TITLE }),
      data,
      title: TITLE,
      issuer,
    }),
  );
  app.route(
    '/',
    createMcpApp({
      data,
      issuer,
      title: TITLE,
      version: VERSION,
      guard: createBearerGuard(oauth, discovery.mcp.metadata.resource),
      allowedOrigins: new Set([new URL(issuer).origin, ...config.mcpAllowedOrigins]),
    }),
  );
  app.route(
    '/',
    createApiApp(API_ROUTES, {
      guard: createBearerGuard(oauth, discovery.api.metadata.resource),
      services: { data, issuer, now },
    }),
  );
  answerOtherMethods(app);
  app.notFound(() => json(404, { error: 'not_found', error_description: 'no such resource' }));
  app.onError((error, c) => {
    return errorResponse(error, logFailure(c.req.method, c.req.path, error));
  });
  return app;
}

/**
 * Starts the server. It listens first (port 0 picks a free port, which the default issuer needs),
 * then builds everything; requests that arrive meanwhile wait: the library's endpoints and metadata
 * until the library has started, every other path until the seeding and the app are done too.
 */
export async function startCourseSchool(config: AppConfig): Promise<CourseSchoolServer> {
  let app: OpenAPIHono<AppEnv> | undefined;
  let whenReady: (() => void) | undefined;
  const ready = new Promise<void>((resolve) => {
    whenReady = resolve;
  });
  const hono = getRequestListener(
    async (request, env) => {
      if (app === undefined) await ready;
      return app!.fetch(request, env);
    },
    // Node's HTTP/1 server discards a request body nobody read once the response is sent; the
    // adapter's own clean-up listeners cost ~40 µs per POST for nothing.
    { autoCleanupIncoming: false },
  );
  // Until the library has started, every request waits for it and is then dispatched as any later
  // one: the library's paths to the library, the rest to Hono (which waits for `ready`). Waiting in
  // Hono instead would answer a library path that arrived early 404, as an app route it lacks.
  let whenLibraryUp: (() => void) | undefined;
  const libraryUp = new Promise<void>((resolve) => {
    whenLibraryUp = resolve;
  });
  let dispatch = (req: IncomingMessage, res: ServerResponse): void =>
    void libraryUp.then(() => dispatch(req, res));
  // Timeouts for slow clients and a connection cap (config.ts, DEFAULT_CONNECTION_LIMITS): set
  // before listening, when Node reads how often to enforce them.
  const server = hardenServer(
    createServer((req, res) => dispatch(req, res)),
    config.connectionLimits,
  );
  const address = await listen(server, config.port, config.host);
  const issuer = config.issuer ?? `http://127.0.0.1:${address.port}`;

  const storage = await openStorage(config.storage).catch(async (error: unknown) => {
    server.close();
    throw error;
  });
  let oauthClose: (() => Promise<void>) | undefined;
  try {
    // Users are read on every authorization step, UserInfo call and API call: reuse each record
    // for a few seconds (data/user-cache.ts).
    const cached = withUserCache(storage.data);
    // Seeding (scrypt for the demo accounts) and the library's start (its schema, signing keys:
    // an RSA key on a first start) wait on libuv's pool and share nothing: run side by side.
    const seeding = seed(cached, Date.now(), { demo: config.demo });
    seeding.catch(() => {}); // awaited below; until then a failure must not be unhandled
    const data = config.demo ? cached : withoutDemoAccounts(cached);
    const secret =
      config.sessionSecret ??
      (await data.putMetaIfAbsent('session_secret', randomBytes(32).toString('base64url')));
    // Secure cookies and the __Host- prefix only over https; see accounts/sessions.ts.
    const sessions = createSessionManager(data, secret, issuer.startsWith('https:'));
    const clients = createClientAddressResolver({ trustProxy: config.trustProxy });
    const library = await createCourseSchoolOAuth({
      issuer,
      storage: storage.oauth,
      data,
      sessions,
      title: TITLE,
      rateLimit: config.rateLimit,
      timeInTokens: config.timeInTokens,
      clients,
      allowedHosts: config.allowedHosts,
      keys: await signingKeyOptions(config.keyWrappingSecret),
    });
    const { oauth } = library;
    oauthClose = () => oauth.close();
    // The library answers its own endpoints and documents through its node adapter, ahead of Hono:
    // it checks the Host itself (the same allowed hosts), reads its bodies, and needs none of the
    // app's middleware, so its requests skip a second Fetch request and Hono's dispatch (about
    // 18 µs of server CPU per request: `npm run bench -- --workloads userinfo`). Every other path,
    // and a request with two session cookies (refused by the middleware above), goes to Hono.
    // From here on: the library needs neither the demo accounts nor the app's routes, so its
    // metadata answers while the seeding (two scrypt hashes on a first start) and the app finish;
    // a sign-in meanwhile is a page of Hono's, which waits for both.
    const answerOAuth = toNodeHandler(oauth);
    const ownCookies = [sessions.cookieName, loginCookieName(sessions.secure)];
    dispatch = (req, res) => {
      if (repeatsCookie(req.headers.cookie, ownCookies)) return void hono(req, res);
      void answerOAuth(req, res, () => void hono(req, res));
    };
    whenLibraryUp?.();
    await seeding;
    app = await createApp({ config, issuer, data, sessions, clients, library });

    const sweeper = setInterval(() => {
      data
        .deleteExpiredSessions(Date.now())
        .catch((error: unknown) => console.error('session sweep failed:', error));
    }, 10 * 60_000);
    sweeper.unref();
    whenReady?.();

    return {
      issuer,
      address: `${address.address}:${address.port}`,
      storageDescription: storage.description,
      demo: config.demo,
      data,
      server,
      async close() {
        clearInterval(sweeper);
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          // Connections still busy after a grace period are cut, so shutdown is bounded.
          setTimeout(() => server.closeAllConnections(), 2000).unref();
        });
        await oauth.close();
        await storage.close();
      },
    };
  } catch (error) {
    server.close();
    await oauthClose?.();
    await storage.close();
    throw error;
  }
}
