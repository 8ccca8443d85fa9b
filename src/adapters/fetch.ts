/**
 * `portcullis/fetch`: the Fetch entry to an {@link AuthorizationServer}. `createFetchHandler` is a
 * `(Request) => Promise<Response>` for Hono, Bun, Deno, Cloudflare Workers and every other Fetch
 * runtime; the node:http and Express adapters are built on it. It only translates.
 * @module portcullis/fetch
 */
import type { AuthorizationServer } from '../server.js';
import { answerFetchRequest, onceWarning, toResponse } from './fetch-messages.js';

export { withGuard } from '../resource-server/fetch.js';
export type { FetchRequestOptions, TranslatedRequest } from './fetch-messages.js';
export { toOAuthRequest, toResponse } from './fetch-messages.js';

/**
 * Options of {@link createFetchHandler}. `Context` is what the runtime passes after the request
 * (Deno's `info`, Bun's `server`, the node adapter's `{ incoming, outgoing }`): both callbacks
 * receive it. Leave it out where the request says everything (Workers: `CF-Connecting-IP`).
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
export interface FetchHandlerOptions<Context = undefined> {
  /** Answers requests for paths the server does not serve. Default: a JSON 404. */
  fallback?: (request: Request, context: Context) => Response | Promise<Response>;
  /**
   * The client IP, for per-address rate limits: from the platform (`info.remoteAddr.hostname` on
   * Deno, `server.requestIP(request)?.address` on Bun, `CF-Connecting-IP` behind Cloudflare).
   * Without it, per-address limits cannot tell clients apart and count nothing; a server with a
   * `rateLimiter` then warns once through its logger. IPv6 addresses are keyed by their /64
   * (`ipv6PrefixLength`).
   */
  remoteAddress?: (request: Request, context: Context) => string | undefined;
}

/**
 * The handler {@link createFetchHandler} returns: `(request) => Promise<Response>`, or
 * `(request, context)` when the options read a runtime context.
 *
 * @example
 * ```ts
 * import type { FetchHandler } from 'portcullis/fetch';
 *
 * declare const handler: FetchHandler;
 * const response: Promise<Response> = handler(new Request('https://auth.example.com/.well-known/jwks.json'));
 * ```
 * @see RFC 6749 §3 (the endpoints it answers)
 * @group Adapters
 */
export type FetchHandler<Context = undefined> = (
  request: Request,
  ...context: [Context] extends [undefined] ? [] : [context: Context]
) => Promise<Response>;

const notFound = (): Response =>
  new Response('{"error":"not_found"}', { status: 404, headers: { 'content-type': 'application/json' } });

/**
 * Creates a Fetch handler serving every endpoint and discovery document of `server`. Requests for
 * other paths get `options.fallback` (default: a JSON 404). Errors never escape as exceptions: each
 * endpoint answers its own OAuth error response (see {@link AuthorizationServer.handle}); a body
 * larger than `maxBodyBytes` is answered `413` (`invalid_request`, see {@link toOAuthRequest}); a
 * body that a middleware already read is answered `400` (`invalid_request`) and announced once as
 * a `PortcullisWarning`: mount the handler before anything that reads bodies.
 *
 * @param server - the authorization server
 * @param options - fallback for other paths, client IP
 * @returns `(request) => Promise<Response>`, or `(request, context)` when the options read one
 * @see RFC 6749 §3 (endpoints), RFC 8414 §3 and RFC 9728 §3 (metadata locations)
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { createFetchHandler } from 'portcullis/fetch';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
 * export default { fetch: createFetchHandler(oauth) };
 * ```
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { createFetchHandler } from 'portcullis/fetch';
 *
 * // Deno passes the peer address as the second argument of its handler.
 * interface ServeHandlerInfo { remoteAddr: { hostname: string } }
 * const oauth = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
 * const handler = createFetchHandler(oauth, {
 *   remoteAddress: (_request, info: ServeHandlerInfo) => info.remoteAddr.hostname,
 * });
 * ```
 * @group Adapters
 */
export function createFetchHandler<Context = undefined>(
  server: AuthorizationServer,
  options: FetchHandlerOptions<Context> = {},
): FetchHandler<Context> {
  const fallback = options.fallback ?? notFound;
  const warnBodyAlreadyRead = onceWarning(
    'PORTCULLIS_BODY_ALREADY_READ',
    'a request body was read before it reached the authorization server, which answered 400: mount its handler before any middleware that reads bodies',
  );
  return async (request, ...rest) => {
    const context = rest[0] as Context;
    const remoteAddress = options.remoteAddress?.(request, context);
    const response = await answerFetchRequest(server, request, remoteAddress, warnBodyAlreadyRead);
    return response === null ? fallback(request, context) : toResponse(response);
  };
}
