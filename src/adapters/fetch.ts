/**
 * `portcullis/fetch`: a `(Request) => Promise<Response>` router over an {@link AuthorizationServer},
 * for Hono, Bun, Deno, Cloudflare Workers and every other Fetch runtime. It only translates.
 * @module portcullis/fetch
 */
import { bodyless, type OAuthRequest, type OAuthResponse, payloadTooLarge } from '../core/http.js';
import type { GuardRequirement, Principal, ResourceGuard } from '../resource-server/guard.js';
import type { AuthorizationServer } from '../server.js';

/**
 * Options of {@link createFetchHandler}.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { createFetchHandler, type FetchHandlerOptions } from 'portcullis/fetch';
 *
 * const options: FetchHandlerOptions = {
 *   fallback: () => new Response('Not here', { status: 404 }),
 *   remoteAddress: (request) => request.headers.get('cf-connecting-ip') ?? undefined,
 * };
 * const oauth = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
 * export default { fetch: createFetchHandler(oauth, options) };
 * ```
 * @see RFC 6749 §10.10 (rate limiting by client address needs the real address)
 * @group Adapters
 */
export interface FetchHandlerOptions {
  /** Answers requests for paths the server does not serve. Default: a JSON 404. */
  fallback?: (request: Request) => Response | Promise<Response>;
  /** The client IP, for rate limiting (e.g. from `CF-Connecting-IP` behind Cloudflare). */
  remoteAddress?: (request: Request) => string | undefined;
}

async function readBody(request: Request, limit: number): Promise<Uint8Array | null> {
  if (Number(request.headers.get('content-length')) > limit) return null;
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/**
 * Converts a core response into a Fetch `Response`: status, headers and body as they are (no body
 * for 204 and 304). Use it to return a guard's refusal, or a handler's answer, from a Fetch route.
 *
 * @param response - a response of the core, e.g. `GuardResult.response`
 * @returns the Fetch `Response`
 * @see RFC 6750 §3 (the challenges a guard's refusal carries)
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { toResponse } from 'portcullis/fetch';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
 * const guard = oauth.guard({ resource: 'https://auth.example.com' });
 *
 * export async function courses(request: Request): Promise<Response> {
 *   const authorization = request.headers.get('authorization') ?? undefined;
 *   const result = await guard.check({ headers: { authorization } }, { scope: 'courses:read', required: true });
 *   if (!result.ok) return toResponse(result.response); // 400/401/403 with WWW-Authenticate
 *   return Response.json({ courses: [] });
 * }
 * ```
 * @group Adapters
 */
export function toResponse(response: OAuthResponse): Response {
  const body = response.status === 204 || response.status === 304 ? null : (response.body ?? null);
  return new Response(body, { status: response.status, headers: response.headers });
}

const notFound = () =>
  new Response('{"error":"not_found"}', { status: 404, headers: { 'content-type': 'application/json' } });

/**
 * Creates a Fetch handler serving every endpoint and discovery document of `server`. Requests for
 * other paths get `options.fallback` (default: a JSON 404). Errors never escape as exceptions: each
 * endpoint answers its own OAuth error response (see {@link AuthorizationServer.handle}); a body
 * larger than `maxBodyBytes` is answered `413` (`invalid_request`) without being read further.
 *
 * @param server - the authorization server
 * @param options - fallback for other paths, client IP
 * @returns `(request) => Promise<Response>`
 * @see RFC 6749 §3 (endpoints), RFC 8414 §3 and RFC 9728 §3 (metadata locations)
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { createFetchHandler } from 'portcullis/fetch';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
 * export default { fetch: createFetchHandler(oauth) };
 * ```
 * @group Adapters
 */
export function createFetchHandler(
  server: AuthorizationServer,
  options: FetchHandlerOptions = {},
): (request: Request) => Promise<Response> {
  const fallback = options.fallback ?? notFound;
  return async (request) => {
    const url = new URL(request.url);
    if (!server.matches(url.pathname)) return fallback(request);
    let body: Uint8Array | undefined;
    if (!bodyless(request.method)) {
      const read = await readBody(request, server.maxBodyBytes);
      if (read === null) return toResponse(payloadTooLarge());
      body = read;
    }
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const oauthRequest: OAuthRequest = {
      method: request.method,
      url: url.pathname + url.search,
      headers,
      body,
      remoteAddress: options.remoteAddress?.(request),
    };
    const response = await server.handle(oauthRequest);
    return response === null ? fallback(request) : toResponse(response);
  };
}

/**
 * Wraps a Fetch handler with a resource-server guard: the handler runs with the caller, or the
 * 400/401/403 response (with its `WWW-Authenticate` challenge) is returned instead: `400
 * invalid_request` (two `Authorization` headers, another scheme, an empty credential), `401
 * invalid_token` (malformed, unknown, expired, revoked, or for another resource), `401` without an
 * error code (no token and `required`), `403 insufficient_scope`. A verifier that fails rejects
 * the returned promise.
 *
 * @param guard - from `server.guard(...)` or `createResourceGuard(...)`
 * @param requirement - the route's scope and whether a token is required
 * @param handler - the protected handler
 * @returns a Fetch handler
 * @see RFC 6750 §3, RFC 9728 §5.1
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { withGuard } from 'portcullis/fetch';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
 * const courses = withGuard(oauth.guard({ resource: 'https://auth.example.com' }), { scope: 'courses:read' }, async (_request, auth) =>
 *   Response.json({ caller: auth.anonymous ? null : auth.subject }),
 * );
 * ```
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export function withGuard(
  guard: ResourceGuard,
  requirement: GuardRequirement,
  handler: (request: Request, principal: Principal) => Response | Promise<Response>,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const result = await guard.check(
      { headers: { authorization: request.headers.get('authorization') ?? undefined } },
      requirement,
    );
    return result.ok ? handler(request, result.principal) : toResponse(result.response);
  };
}
