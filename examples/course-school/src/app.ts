/**
 * Composes the reference server: storage, seed, sessions, the library's authorization server,
 * the guards, the generated documents, and one `node:http` server routing between the library
 * (OAuth endpoints and `/.well-known/*`) and our router (pages, documents, `/mcp`, `/api/v1`).
 * @module
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from 'portcullis/node';
import { createSessionManager } from './accounts/sessions.js';
import { authorizeRoute, runRoute } from './api/dispatch.js';
import { API_PREFIX, type ApiServices } from './api/route.js';
import { API_ROUTES } from './api/route-table.js';
import { createBearerGuard } from './auth/bearer-guard.js';
import type { AppConfig } from './config.js';
import { withUserCache } from './data/user-cache.js';
import { buildAuthMd } from './docs/auth-md.js';
import { buildLlmsTxt } from './docs/llms-txt.js';
import { loadDiscovery } from './docs/metadata.js';
import { buildOpenApi } from './docs/openapi.js';
import { buildPricingMd } from './docs/pricing-md.js';
import type { Endpoint } from './http/endpoint.js';
import { errorResponse, HttpError, type HttpResponse, json, text, writeResponse } from './http/response.js';
import { Router } from './http/router.js';
import { mcpEndpoint } from './mcp/mcp-endpoint.js';
import { createCourseSchoolOAuth } from './oauth.js';
import { accountEndpoints } from './pages/account.js';
import { homeEndpoint } from './pages/home.js';
import { LOGIN_PATH, loginEndpoints } from './pages/login.js';
import { courseSchoolScopes } from './scopes.js';
import { seed } from './seed.js';
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
  readonly server: Server;
  /** Stops accepting connections, then closes the authorization server and the storage. */
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** Cached public documents: safe to cache briefly and to read cross-origin. */
const PUBLIC_DOC = { 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' } as const;

/**
 * Starts the server. It listens first (port 0 picks a free port, which the default issuer needs),
 * then builds everything; requests that arrive meanwhile wait for it.
 */
export async function startCourseSchool(config: AppConfig): Promise<CourseSchoolServer> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined;
  let whenReady: (() => void) | undefined;
  const ready = new Promise<void>((resolve) => {
    whenReady = resolve;
  });
  const server = createServer((req, res) => {
    if (handler !== undefined) void handler(req, res);
    else void ready.then(() => handler?.(req, res));
  });
  const address = await listen(server, config.port, config.host);
  const issuer = config.issuer ?? `http://127.0.0.1:${address.port}`;

  const storage = await openStorage(config.storage).catch(async (error: unknown) => {
    server.close();
    throw error;
  });
  try {
    // Users are read on every authorization step, UserInfo call and API call: reuse each record
    // for a few seconds (data/user-cache.ts).
    const data = withUserCache(storage.data);
    await seed(data, Date.now());
    const secret =
      process.env.SESSION_SECRET ??
      (await data.putMetaIfAbsent('session_secret', randomBytes(32).toString('base64url')));
    // Secure cookies and the __Host- prefix only over https; see accounts/sessions.ts.
    const sessions = createSessionManager(data, secret, issuer.startsWith('https:'));
    const { oauth, registration, grantable } = await createCourseSchoolOAuth({
      issuer,
      storage: storage.oauth,
      data,
      sessions,
      title: TITLE,
      rateLimit: config.rateLimit,
    });
    const discovery = await loadDiscovery(oauth);
    const services: ApiServices = { data, issuer, now: Date.now };
    const apiGuard = createBearerGuard(oauth, discovery.api.metadata.resource);
    const mcpGuard = createBearerGuard(oauth, discovery.mcp.metadata.resource);

    const openapi = JSON.stringify(
      buildOpenApi({ routes: API_ROUTES, discovery, scopes: courseSchoolScopes, title: TITLE }),
    );
    const authMd = buildAuthMd({
      discovery,
      scopes: courseSchoolScopes,
      registration,
      studentGrantable: grantable('student'),
      title: TITLE,
    });
    const llmsTxt = buildLlmsTxt({ discovery, title: TITLE });

    const router = new Router<Endpoint>();
    const now = Date.now;
    const login = loginEndpoints({ data, sessions, issuer, now });
    const account = accountEndpoints({ oauth, sessions, scopes: courseSchoolScopes, issuer, grantable, now });
    const constant =
      (response: HttpResponse): Endpoint =>
      async () =>
        response;
    router
      .add('GET', '/', homeEndpoint({ data, sessions, issuer, now }))
      .add('GET', LOGIN_PATH, login.show)
      .add('POST', LOGIN_PATH, login.submit)
      .add('POST', '/logout', login.logout)
      .add('GET', '/account', account.show)
      .add('POST', '/account/apps/revoke', account.revoke)
      .add('GET', '/openapi.json', constant({ ...json(200, null, PUBLIC_DOC), body: openapi }))
      .add('GET', '/auth.md', constant(text(authMd, 'text/markdown', PUBLIC_DOC)))
      .add('GET', '/llms.txt', constant(text(llmsTxt, 'text/plain', PUBLIC_DOC)))
      .add('GET', '/pricing.md', async () =>
        text(await buildPricingMd(data, TITLE, issuer), 'text/markdown', { 'cache-control': 'no-cache' }),
      );
    const mcp = mcpEndpoint({
      data,
      issuer,
      title: TITLE,
      version: VERSION,
      guard: mcpGuard,
      allowedOrigins: new Set([new URL(issuer).origin, ...config.mcpAllowedOrigins]),
    });
    for (const method of ['GET', 'POST', 'DELETE']) router.add(method, '/mcp', mcp);
    for (const route of API_ROUTES) {
      router.add(route.method, `${API_PREFIX}${route.path}`, async ({ req, params, query }) => {
        const authorization = await authorizeRoute(apiGuard, req, route, services);
        if (!authorization.ok) return authorization.response;
        return runRoute(route, req, params, query, authorization.caller, services);
      });
    }

    const oauthHandler = toNodeHandler(oauth);
    handler = async (req, res) => {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const path = q === -1 ? url : url.slice(0, q);
      try {
        if (oauth.matches(path)) {
          await oauthHandler(req, res);
          return;
        }
        const match = router.find(req.method ?? 'GET', path);
        if (match.kind === 'not_found') throw new HttpError('not_found', 'no such resource');
        if (match.kind === 'method_not_allowed') {
          throw new HttpError('method_not_allowed', `use ${match.allow.join(', ')}`, {
            headers: { allow: match.allow.join(', ') },
          });
        }
        const response = await match.value({
          req,
          res,
          path,
          query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)),
          params: match.params,
        });
        if (response !== undefined) writeResponse(res, response);
      } catch (error) {
        if (!(error instanceof HttpError)) console.error(`${req.method} ${path} failed:`, error);
        if (res.headersSent) res.destroy();
        else writeResponse(res, errorResponse(error));
      }
    };

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
    await storage.close();
    throw error;
  }
}
