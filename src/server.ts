/**
 * `createAuthorizationServer`: validates options, resolves them, and returns the pure handlers
 * and a router over them. No framework is imported here; adapters translate.
 * @module
 */
import { createClientIdMetadataResolver } from './cimd/resolver.js';
import { resolveConfig, type ServerConfig } from './config.js';
import { logFailure, OAuthError } from './core/errors.js';
import {
  errorResponse,
  type OAuthRequest,
  type OAuthResponse,
  payloadTooLarge,
  splitUrl,
} from './core/http.js';
import { bodySize } from './core/params.js';
import { handleAuthorize } from './handlers/authorize.js';
import { handleAuthorizeDecision } from './handlers/authorize-decision.js';
import { handleIntrospect } from './handlers/introspect.js';
import { discoveryDocuments, publicDocument } from './handlers/metadata.js';
import { handleRegister } from './handlers/register.js';
import { handleRevoke } from './handlers/revoke.js';
import { handleToken } from './handlers/token.js';
import { handleUserinfo } from './handlers/userinfo.js';
import { KeyStore, type SigningAlg } from './keys/key-store.js';
import { type AuthorizationServerOptions, DEFAULT_MAX_BODY_BYTES } from './options.js';
import { validateOptions } from './options-schema.js';
import { createResourceGuard, type ResourceGuard } from './resource-server/guard.js';
import type { AccessTokenVerifier } from './resource-server/verifier.js';
import { createServerContext, type ServerContext } from './server-context.js';

/**
 * A handler over the plain request model: one endpoint of {@link AuthorizationServerHandlers}.
 * It never throws: failures are OAuth error responses.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, type Handler, memoryStorage } from 'portcullis';
 *
 * const oauth = createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
 * const token: Handler = oauth.handlers.token;
 * const response = await token({ method: 'GET', url: '/api/oauth/token', headers: {} });
 * console.log(response.status); // 405: the token endpoint takes POST
 * ```
 * @see RFC 6749 §3
 * @group Authorization Server
 */
export type Handler = (request: OAuthRequest) => Promise<OAuthResponse>;

/**
 * The handlers of a server, one per endpoint, each usable on its own: for hosts that route
 * themselves (another path, another framework). Each answers its endpoint's OAuth errors as
 * responses, with the status the RFCs give (see the `@throws` of each endpoint below).
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * const oauth = createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
 * // Registration served at a path of your router's choosing.
 * const response = await oauth.handlers.register({
 *   method: 'POST',
 *   url: '/clients',
 *   headers: { 'content-type': 'application/json' },
 *   body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:49152/callback'] }),
 * });
 * console.log(response.status); // 201
 * ```
 * @see RFC 6749 §3, RFC 7591 §3, RFC 7009 §2, RFC 7662 §2, OpenID Connect Core §5.3
 * @group Authorization Server
 */
export interface AuthorizationServerHandlers {
  /**
   * `POST` dynamic client registration (RFC 7591).
   * @throws as responses: `400 invalid_redirect_uri` / `invalid_client_metadata`, `405`, `413`,
   * `429 too_many_requests`, or what `registration.policy` throws
   */
  readonly register: Handler;
  /**
   * `GET`/`POST` authorization endpoint (RFC 6749 §4.1.1): consent page, login hand-off, code redirect.
   * @throws as responses: a `400` HTML page while the client or redirect URI is unknown; after that,
   * a `303` to the client with `invalid_request`, `unsupported_response_type`, `invalid_scope`,
   * `invalid_target`, `unauthorized_client`, `access_denied`, `login_required`, `consent_required`,
   * `request_not_supported`, `request_uri_not_supported` or `server_error`, plus `state` and `iss`
   */
  readonly authorize: Handler;
  /**
   * `POST` of the consent form: the user's decision, answered `303` with a code or `access_denied`.
   * @throws as responses: a `403` page for a cross-site post, another user or session, or a bad CSRF
   * token; a `400` page for an incomplete, expired or already used form
   */
  readonly authorizeDecision: Handler;
  /**
   * `POST` token endpoint (RFC 6749 §3.2): the `authorization_code` and `refresh_token` grants.
   * @throws as JSON responses: `400 invalid_request`, `invalid_grant`, `unauthorized_client`,
   * `unsupported_grant_type`, `invalid_scope`, `invalid_target`; `invalid_client` (400, or 401 with
   * `WWW-Authenticate: Basic` after Basic authentication); `405`; `429 too_many_requests`
   */
  readonly token: Handler;
  /**
   * `GET`/`POST` UserInfo (OIDC Core §5.3): the claims the token's scopes release, and `sub`.
   * @throws as responses: `401` with a bare `Bearer` challenge without a token; `401 invalid_token`;
   * `403 insufficient_scope` without `openid`; `400 invalid_request` for two credentials
   */
  readonly userinfo: Handler;
  /**
   * `POST` token revocation (RFC 7009): `200` for known and unknown tokens alike.
   * @throws as JSON responses: `400 invalid_request` (no token), `invalid_client`,
   * `400 unauthorized_client` (another client's token: nothing is revoked), `429 too_many_requests`
   */
  readonly revoke: Handler;
  /**
   * `POST` token introspection (RFC 7662): `{"active": false}` for anything the caller may not see.
   * @throws as JSON responses: `401 invalid_client` for unauthenticated callers, `400
   * invalid_request`, `429 too_many_requests`
   */
  readonly introspect: Handler;
  /**
   * Any discovery document or the JWKS, by request path (RFC 8414 §3, RFC 9728 §3, OIDC Discovery §4).
   * @throws as responses: `404 not_found` for another path, `405` for methods other than GET, HEAD, OPTIONS
   */
  readonly discovery: Handler;
}

/**
 * One entry of {@link AuthorizationServer.listGrants}: an app the user authorized.
 *
 * @example
 * ```ts
 * import type { AuthorizationServer, AuthorizedApp } from 'portcullis';
 *
 * declare const oauth: AuthorizationServer;
 * const apps: AuthorizedApp[] = await oauth.listGrants('user-42');
 * for (const app of apps) console.log(app.clientName ?? app.clientId, app.scope.join(' '));
 * ```
 * @see RFC 7009 §2.1 (revoking a grant revokes its tokens)
 * @group Authorization Server
 */
export interface AuthorizedApp {
  /** Pass it to {@link AuthorizationServer.revokeGrant}. */
  readonly grantId: string;
  /** The client the user authorized. */
  readonly clientId: string;
  /** Its registered `client_name`, if any. */
  readonly clientName: string | undefined;
  /** The scopes granted. */
  readonly scope: readonly string[];
  /** The resources (RFC 8707) its tokens are for. */
  readonly resources: readonly string[];
  /** Epoch seconds. */
  readonly createdAt: number;
}

/**
 * An authorization server: the router, the individual handlers, and lifecycle methods. Created by
 * {@link createAuthorizationServer}; served by the adapters of `portcullis/express`,
 * `portcullis/fetch` and `portcullis/node`.
 *
 * @example
 * ```ts
 * import { type AuthorizationServer, createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * const oauth: AuthorizationServer = createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 * });
 * await oauth.ready(); // fails here, not on the first request, when keys or storage are broken
 * console.log(oauth.matches('/api/oauth/token')); // true
 * await oauth.close();
 * ```
 * @see RFC 6749, RFC 8414, RFC 9728, OpenID Connect Core 1.0
 * @group Authorization Server
 */
export interface AuthorizationServer {
  /** The issuer identifier. */
  readonly issuer: string;
  /** The largest request body accepted, in bytes; adapters stop reading beyond it. */
  readonly maxBodyBytes: number;
  /**
   * Resolves once keys are loaded (or generated) and the configuration is resolved; rejects on bad
   * setup (a storage that cannot be reached, a scope of `resources` the policy lacks, an invalid
   * static client). Adapters await it; await it at start-up to fail fast.
   */
  ready(): Promise<void>;
  /**
   * Routes a request to its handler. Returns `null` when the path is not one of this server's, so
   * an adapter can pass the request on. Never throws: errors become OAuth error responses
   * (RFC 6749 §5.2 JSON, or the authorization endpoint's page and redirects), and anything
   * unexpected becomes `500 server_error` without its message (logged at `error`).
   *
   * @param request - the plain request
   * @returns the response, or `null` for a path the server does not serve
   * @example
   * ```ts
   * import { createAuthorizationServer, memoryStorage } from 'portcullis';
   *
   * const oauth = createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
   * const response = await oauth.handle({ method: 'GET', url: '/.well-known/jwks.json', headers: {} });
   * console.log(response?.status, JSON.parse(response?.body ?? '{}').keys.length); // 200 2
   * ```
   */
  handle(request: OAuthRequest): Promise<OAuthResponse | null>;
  /** True when `path` (without query) is served by this server. Always false before {@link AuthorizationServer.ready} resolves. */
  matches(path: string): boolean;
  /** The handlers, for hosts that route themselves. */
  readonly handlers: AuthorizationServerHandlers;
  /**
   * The apps a user has authorized: active grants, newest first, with the client's name. For an
   * account page.
   *
   * @param userId - the user (`AuthenticatedUser.id`)
   * @returns the active grants; empty when there are none
   * @example
   * ```ts
   * import type { AuthorizationServer } from 'portcullis';
   *
   * declare const oauth: AuthorizationServer;
   * const apps = await oauth.listGrants('user-42');
   * console.log(apps.map((a) => `${a.clientName ?? a.clientId}: ${a.scope.join(' ')}`));
   * ```
   */
  listGrants(userId: string): Promise<AuthorizedApp[]>;
  /**
   * Revokes a grant and every token it issued, and forgets the user's consent for that client, so
   * the next authorization asks again. Pass `userId` to refuse revoking another user's grant.
   * Returns false when no such active grant exists. Emits `grant.revoked` with reason `user`.
   *
   * @param grantId - from {@link AuthorizationServer.listGrants}
   * @param options - `userId`: revoke only if the grant is this user's
   * @returns whether an active grant was revoked
   * @see RFC 7009 §2.1 (revoking a grant revokes its tokens)
   * @example
   * ```ts
   * import type { AuthorizationServer } from 'portcullis';
   *
   * declare const oauth: AuthorizationServer;
   * declare const signedInUser: string;
   * const [first] = await oauth.listGrants(signedInUser);
   * if (first !== undefined) await oauth.revokeGrant(first.grantId, { userId: signedInUser });
   * ```
   */
  revokeGrant(grantId: string, options?: { userId?: string }): Promise<boolean>;
  /**
   * Rotates the signing keys (see docs/storage.md, key rotation): the current keys stop signing but
   * stay published until every token they signed has expired; new keys sign at once. Other
   * instances pick the new keys up within `keys.refreshIntervalSeconds`. Run it from one place.
   *
   * @example
   * ```ts
   * import type { AuthorizationServer } from 'portcullis';
   *
   * declare const oauth: AuthorizationServer;
   * await oauth.rotateSigningKeys(); // e.g. from a monthly scheduled job
   * ```
   */
  rotateSigningKeys(): Promise<void>;
  /**
   * A resource-server guard for one of the configured `resources`, verifying tokens against this
   * server's storage (revocation is immediate) and pointing challenges at the resource's RFC 9728
   * metadata.
   *
   * @param options - `resource`: one of the configured `resources` (the issuer by default)
   * @returns the guard
   * @throws TypeError when `resource` is not one of the configured resources
   * @see RFC 6750 §3, RFC 8707 §2, RFC 9728 §5.1
   * @example
   * ```ts
   * import { createAuthorizationServer, memoryStorage } from 'portcullis';
   *
   * const oauth = createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
   * const guard = oauth.guard({ resource: 'https://auth.example.com' });
   * const result = await guard.check({ headers: {} }, { required: true });
   * console.log(result.ok ? 'served' : result.response.headers['www-authenticate']);
   * // Bearer resource_metadata="https://auth.example.com/.well-known/oauth-protected-resource"
   * ```
   */
  guard(options: { readonly resource: string }): ResourceGuard;
  /**
   * Verifies an access token issued by this server against its storage: `null` for an unknown,
   * expired or revoked token. What `guard` uses; pass it to `createResourceGuard` for a guard with
   * a resource metadata URL of your own.
   */
  readonly verifier: AccessTokenVerifier;
  /** Stops timers. Does not close the storage, which the host owns. */
  close(): Promise<void>;
}

type Route = (ctx: ServerContext, request: OAuthRequest) => Promise<OAuthResponse>;

interface Started {
  readonly ctx: ServerContext;
  readonly routes: ReadonlyMap<string, Route>;
}

function buildRoutes(config: ServerConfig, documents: ReadonlyMap<string, string>): Map<string, Route> {
  const routes = new Map<string, Route>();
  for (const [path, body] of documents) {
    routes.set(path, async (_ctx, request) => publicDocument(request, body));
  }
  routes.set(config.paths.jwks, async (ctx, request) => publicDocument(request, await ctx.keys.jwks()));
  if (config.registration.enabled) routes.set(config.paths.registration, handleRegister);
  routes.set(config.paths.authorization, handleAuthorize);
  routes.set(config.paths.authorizationDecision, handleAuthorizeDecision);
  routes.set(config.paths.token, handleToken);
  routes.set(config.paths.userinfo, handleUserinfo);
  routes.set(config.paths.revocation, handleRevoke);
  if (config.introspection.enabled) routes.set(config.paths.introspection, handleIntrospect);
  return routes;
}

/**
 * Creates an authorization server.
 *
 * @param options - see {@link AuthorizationServerOptions}; only `issuer` and `storage` are required
 * @returns the server: a router (`handle`), the individual handlers, and lifecycle methods
 * @throws InvalidOptionsError synchronously, naming every invalid option. Problems that need the
 * storage or cross-option checks (an unreachable database, a resource scope the policy lacks, a
 * static client's bad redirect URI) reject {@link AuthorizationServer.ready} instead. Requests never
 * throw: the endpoints answer OAuth errors (see {@link AuthorizationServerHandlers}).
 * @see RFC 6749, RFC 7591, RFC 8414, RFC 9728, OpenID Connect Core 1.0
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * const server = createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * const response = await server.handle({
 *   method: 'GET',
 *   url: '/.well-known/oauth-authorization-server',
 *   headers: {},
 * });
 * console.log(response?.status); // 200
 * ```
 * @group Authorization Server
 */
export function createAuthorizationServer(options: AuthorizationServerOptions): AuthorizationServer {
  validateOptions(options);
  let started: Started | undefined;
  let housekeeping: ReturnType<typeof setInterval> | undefined;

  const starting: Promise<Started> = (async () => {
    const config = await resolveConfig(options);
    const algs: SigningAlg[] = [
      ...new Set<SigningAlg>([config.keys.accessTokenAlg, config.keys.idTokenAlg, 'RS256', 'ES256']),
    ];
    const keys = new KeyStore(config.storage, config.runtime, {
      algs:
        config.keys.privateJwks === undefined ? algs : [config.keys.idTokenAlg, config.keys.accessTokenAlg],
      privateJwks: config.keys.privateJwks,
      refreshIntervalSeconds: config.keys.refreshIntervalSeconds,
      retentionSeconds: Math.max(config.tokens.accessTokenTtlSeconds, config.tokens.idTokenTtlSeconds) + 300,
    });
    await keys.init();
    // `https` client ids resolve through their metadata documents only when the host enabled it.
    const metadataDocuments = config.cimdEnabled
      ? createClientIdMetadataResolver({
          ...options.clientIdMetadataDocuments,
          clock: config.runtime.clock,
          logger: config.runtime.logger,
        })
      : undefined;
    const ctx = createServerContext(config, keys, metadataDocuments);
    const routes = buildRoutes(config, discoveryDocuments(config));
    if (config.housekeepingIntervalSeconds > 0) {
      housekeeping = setInterval(() => {
        config.storage.deleteExpired(ctx.now()).catch((error: unknown) => {
          config.runtime.logger.warn('deleting expired records failed', { error: String(error) });
        });
      }, config.housekeepingIntervalSeconds * 1000);
      (housekeeping as { unref?: () => void }).unref?.();
    }
    started = { ctx, routes };
    return started;
  })();
  // Avoid an unhandled rejection before anyone awaits; `ready()` and `handle()` report the error.
  starting.catch(() => {});

  async function run(route: Route, request: OAuthRequest): Promise<OAuthResponse> {
    const s = started ?? (await starting);
    try {
      if (bodySize(request) > s.ctx.config.maxBodyBytes) {
        return payloadTooLarge();
      }
      return await route(s.ctx, request);
    } catch (error) {
      const response = errorResponse(error);
      if (response.status >= 500) {
        logFailure(s.ctx.config.runtime.logger, 'request failed', error, {
          path: splitUrl(request.url).path,
        });
      }
      return response;
    }
  }

  return {
    issuer: options.issuer,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    async ready() {
      await starting;
    },
    async handle(request) {
      const s = started ?? (await starting.catch(() => undefined));
      if (s === undefined) return errorResponse(new OAuthError('server_error', 'the server failed to start'));
      const route = s.routes.get(splitUrl(request.url).path);
      if (route === undefined) return null;
      return run(route, request);
    },
    matches(path) {
      return started?.routes.has(path) ?? false;
    },
    handlers: {
      register: (request) => run(handleRegister, request),
      authorize: (request) => run(handleAuthorize, request),
      authorizeDecision: (request) => run(handleAuthorizeDecision, request),
      token: (request) => run(handleToken, request),
      userinfo: (request) => run(handleUserinfo, request),
      revoke: (request) => run(handleRevoke, request),
      introspect: (request) => run(handleIntrospect, request),
      discovery: async (request) => {
        const s = started ?? (await starting);
        const route = s.routes.get(splitUrl(request.url).path);
        if (route === undefined) return errorResponse(new OAuthError('not_found', 'no such document'));
        return run(route, request);
      },
    },
    async listGrants(userId) {
      const { ctx } = started ?? (await starting);
      const grants = await ctx.config.storage.grants.listByUser(userId, ctx.now());
      return Promise.all(
        grants.map(async (g) => ({
          grantId: g.grantId,
          clientId: g.clientId,
          // A metadata-document client whose document cannot be fetched right now is listed without a name.
          clientName: (await ctx.getClient(g.clientId).catch(() => null))?.metadata.client_name,
          scope: g.scope,
          resources: g.resources,
          createdAt: g.createdAt,
        })),
      );
    },
    async revokeGrant(grantId, revokeOptions = {}) {
      const { ctx } = started ?? (await starting);
      const storage = ctx.config.storage;
      const grant = await storage.grants.get(grantId);
      if (grant === null || grant.revokedAt !== undefined) return false;
      if (revokeOptions.userId !== undefined && grant.userId !== revokeOptions.userId) return false;
      const revoked = await storage.grants.revoke(grantId, ctx.now());
      await storage.consents.delete(grant.userId, grant.clientId);
      if (revoked) ctx.emit({ type: 'grant.revoked', grantId, reason: 'user' });
      return revoked;
    },
    guard({ resource }) {
      const configured = (options.resources ?? [{ resource: options.issuer }]).some(
        (r) => r.resource === resource,
      );
      if (!configured) throw new TypeError(`guard: ${resource} is not one of options.resources`);
      let inner: ResourceGuard | undefined;
      return {
        resource,
        async check(request, requirement) {
          if (inner === undefined) {
            const { ctx } = started ?? (await starting);
            const metadataUrl = ctx.config.resources.find((r) => r.resource === resource)?.metadataUrl;
            inner = createResourceGuard({
              resource,
              verifier: ctx.verifier,
              ...(metadataUrl === undefined ? {} : { resourceMetadataUrl: metadataUrl }),
            });
          }
          return inner.check(request, requirement);
        },
      };
    },
    verifier: {
      async verify(token) {
        const { ctx } = started ?? (await starting);
        return ctx.verifier.verify(token);
      },
    },
    async rotateSigningKeys() {
      const s = started ?? (await starting);
      await s.ctx.keys.rotate();
    },
    async close() {
      if (housekeeping !== undefined) clearInterval(housekeeping);
    },
  };
}
