/**
 * Routing over the plain request model: the route table (built once from the configured paths),
 * the handlers one by one, and the error boundary every request passes through (an oversized body
 * is a 413, a thrown `OAuthError` its response, anything else a 500 without its message).
 * @module
 */
import { OAuthError } from './core/errors.js';
import {
  errorResponse,
  type OAuthRequest,
  type OAuthResponse,
  payloadTooLarge,
  splitUrl,
} from './core/http.js';
import { bodySize } from './core/params.js';
import { logRequestFailure, withRequestId } from './core/request-id.js';
import { handleAuthorize } from './handlers/authorize.js';
import { handleAuthorizeDecision } from './handlers/authorize-decision.js';
import { handleIntrospect } from './handlers/introspect.js';
import { discoveryDocuments, publicDocument } from './handlers/metadata.js';
import { handleRegister } from './handlers/register.js';
import { handleRevoke } from './handlers/revoke.js';
import { handleToken } from './handlers/token.js';
import { handleUserinfo } from './handlers/userinfo.js';
import { JWKS_MAX_AGE_SECONDS } from './keys/key-store.js';
import { createHostCheck, misdirected } from './protocol/host.js';
import type { ServerContext } from './server-context.js';

/**
 * A handler over the plain request model: one endpoint of {@link AuthorizationServerHandlers}.
 * It never throws: failures are OAuth error responses.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, type Handler, memoryStorage } from 'portcullis';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
 * const token: Handler = oauth.handlers.token;
 * const response = await token({ method: 'GET', url: '/oauth/token', headers: {} });
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
 * const oauth = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
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

type Route = (ctx: ServerContext, request: OAuthRequest) => Promise<OAuthResponse>;

/** The router of one server. */
export interface Router {
  /** The response of the route for the request's path, or `null` when no route serves it. */
  handle(request: OAuthRequest): Promise<OAuthResponse | null>;
  /** True when `path` (without query) has a route. */
  matches(path: string): boolean;
  readonly handlers: AuthorizationServerHandlers;
}

function routeTable(ctx: ServerContext): Map<string, Route> {
  const { config } = ctx;
  const routes = new Map<string, Route>();
  for (const [path, body] of discoveryDocuments(config)) {
    routes.set(path, async (_ctx, request) => publicDocument(request, body));
  }
  routes.set(config.paths.jwks, async (ctx, request) =>
    publicDocument(request, await ctx.keys.jwks(), `public, max-age=${JWKS_MAX_AGE_SECONDS}`),
  );
  if (config.registration.enabled) routes.set(config.paths.registration, handleRegister);
  routes.set(config.paths.authorization, handleAuthorize);
  routes.set(config.paths.authorizationDecision, handleAuthorizeDecision);
  routes.set(config.paths.token, handleToken);
  routes.set(config.paths.userinfo, handleUserinfo);
  routes.set(config.paths.revocation, handleRevoke);
  if (config.introspection.enabled) routes.set(config.paths.introspection, handleIntrospect);
  return routes;
}

/** Builds the route table of a started server and the error boundary around each route. */
export function createRouter(ctx: ServerContext): Router {
  const routes = routeTable(ctx);
  const { maxBodyBytes, runtime } = ctx.config;
  const hostAllowed = createHostCheck(ctx.config);

  async function run(route: Route, request: OAuthRequest): Promise<OAuthResponse> {
    try {
      // Before anything else: a request for another host name is a DNS-rebinding page's (ABU-06).
      if (!hostAllowed(request.headers.host ?? request.headers[':authority'])) throw misdirected();
      if (bodySize(request) > maxBodyBytes) return payloadTooLarge();
      return await route(ctx, request);
    } catch (error) {
      const response = errorResponse(error);
      if (response.status < 500) return response;
      // Logged once, under the id the response carries: what a user reports finds the line.
      return withRequestId(response, logRequestFailure(runtime, request, 'request failed', error));
    }
  }

  return {
    async handle(request) {
      const route = routes.get(splitUrl(request.url).path);
      return route === undefined ? null : run(route, request);
    },
    matches: (path) => routes.has(path),
    handlers: {
      register: (request) => run(handleRegister, request),
      authorize: (request) => run(handleAuthorize, request),
      authorizeDecision: (request) => run(handleAuthorizeDecision, request),
      token: (request) => run(handleToken, request),
      userinfo: (request) => run(handleUserinfo, request),
      revoke: (request) => run(handleRevoke, request),
      introspect: (request) => run(handleIntrospect, request),
      async discovery(request) {
        const route = routes.get(splitUrl(request.url).path);
        if (route === undefined) return errorResponse(new OAuthError('not_found', 'no such document'));
        return run(route, request);
      },
    },
  };
}
