/**
 * `portcullis/node`: serves an {@link AuthorizationServer} from `node:http` (and anything built on
 * it). It only translates: reads the body up to the limit, maps headers, writes the response.
 * @module portcullis/node
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bodyless, type OAuthRequest, type OAuthResponse, payloadTooLarge } from '../core/http.js';
import type { GuardRequirement, Principal, ResourceGuard } from '../resource-server/guard.js';
import type { AuthorizationServer } from '../server.js';

/**
 * Called for requests that are not the server's (Connect and Express `next`); with an error when
 * the handler failed unexpectedly.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { type NextFunction, toNodeHandler } from 'portcullis/node';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * const handle = toNodeHandler(oauth);
 * createServer((req, res) => {
 *   const next: NextFunction = () => res.writeHead(404).end('not found');
 *   void handle(req, res, next);
 * }).listen(3000, '127.0.0.1');
 * ```
 * @see RFC 6749 §3 (the endpoints the handler serves; everything else goes to `next`)
 * @group Adapters
 */
export type NextFunction = (error?: unknown) => void;

/** A request as Express leaves it after its own body parsers may have run. */
type MaybeParsed = IncomingMessage & { originalUrl?: string; body?: unknown; _body?: boolean };

/**
 * The headers of a Node request as the core reads them. Node merges or drops repeated headers (it
 * keeps only the first `Authorization`); a repeated credential must be refused (RFC 6750 §2,
 * RFC 6749 §2.3), so the raw list is checked for that one header and both values are kept, joined
 * with `", "` as the Fetch API joins them. Pass this, not `req.headers`, to a guard.
 *
 * @param req - the request
 * @returns lower-case header names to values
 * @see RFC 6750 §2 (one credential per request), RFC 6749 §2.3
 * @group Adapters
 * @example
 * ```ts
 * import type { IncomingMessage } from 'node:http';
 * import type { ResourceGuard } from 'portcullis';
 * import { nodeHeaders } from 'portcullis/node';
 *
 * async function check(guard: ResourceGuard, req: IncomingMessage) {
 *   return guard.check({ headers: nodeHeaders(req) }, { scope: 'courses:read' });
 * }
 * ```
 */
export function nodeHeaders(req: IncomingMessage): Record<string, string | undefined> {
  const headers = req.headers as Record<string, string | undefined>;
  if (headers.authorization === undefined) return headers;
  const raw = req.rawHeaders;
  let seen: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === 13 && raw[i]!.toLowerCase() === 'authorization') {
      if (seen === undefined) seen = raw[i + 1]!;
      else return { ...headers, authorization: `${seen}, ${raw[i + 1]!}` };
    }
  }
  return headers;
}

/** Serialises a body an Express parser already consumed back to what the client sent. */
function reencode(req: MaybeParsed): Uint8Array | string | undefined {
  const body = req.body;
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return body;
  const type = req.headers['content-type'] ?? '';
  if (type.startsWith('application/x-www-form-urlencoded') && typeof body === 'object') {
    const parts: string[] = [];
    for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
      for (const v of Array.isArray(value) ? value : [value]) {
        // Nested objects (qs's `a[b]=c`) cannot be OAuth parameters; keep them visible as invalid.
        const text = typeof v === 'string' ? v : JSON.stringify(v);
        parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(text)}`);
      }
    }
    return parts.join('&');
  }
  return JSON.stringify(body);
}

type BodyResult = { ok: true; body: Uint8Array | string | undefined } | { ok: false };

function readBody(req: MaybeParsed, limit: number): Promise<BodyResult> {
  if (req._body === true || req.readableEnded) return Promise.resolve({ ok: true, body: reencode(req) });
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.resolve({ ok: false });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.off('end', onEnd);
        req.pause();
        resolve({ ok: false });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      resolve({ ok: true, body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) });
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', reject);
  });
}

/**
 * Writes a core response to a Node response: status, headers (plus `content-length`) and body.
 *
 * @param res - the Node response, not yet written to
 * @param response - the core response, e.g. `GuardResult.response` or the result of `server.handle`
 * @param close - add `Connection: close` (after refusing a body that was not read to its end)
 * @see RFC 6750 §3 (the challenges a guard's refusal carries)
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { nodeHeaders, writeResponse } from 'portcullis/node';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * const guard = oauth.guard({ resource: 'http://127.0.0.1:3000' });
 * createServer(async (req, res) => {
 *   const result = await guard.check({ headers: nodeHeaders(req) }, { required: true });
 *   if (!result.ok) return writeResponse(res, result.response);
 *   res.end('hello');
 * });
 * ```
 * @group Adapters
 */
export function writeResponse(res: ServerResponse, response: OAuthResponse, close = false): void {
  const headers: Record<string, string> = { ...response.headers };
  if (close) headers.connection = 'close';
  if (response.body !== undefined) headers['content-length'] = String(Buffer.byteLength(response.body));
  res.writeHead(response.status, headers);
  res.end(response.body);
}

/**
 * Translates a Node request into the core's {@link OAuthRequest}, reading the body. `null` when it
 * is too large. A body an Express parser already consumed is re-encoded, so duplicate-parameter
 * checks still apply. For hosts that route themselves and call `server.handlers.*` directly.
 *
 * @param req - the request (its body not read yet, or parsed by Express)
 * @param limit - the largest body to read, in bytes (use `server.maxBodyBytes`)
 * @returns the core request, or `null` when the body exceeds `limit` (answer 413)
 * @see RFC 6749 §3.2 (form-encoded token requests), RFC 7591 §3.1 (JSON registration)
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { toOAuthRequest, writeResponse } from 'portcullis/node';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * // Only the token endpoint, at a path of our choosing.
 * createServer(async (req, res) => {
 *   const request = await toOAuthRequest(req, oauth.maxBodyBytes);
 *   if (request === null) return writeResponse(res, { status: 413, headers: {} }, true);
 *   writeResponse(res, await oauth.handlers.token(request));
 * });
 * ```
 * @group Adapters
 */
export async function toOAuthRequest(req: IncomingMessage, limit: number): Promise<OAuthRequest | null> {
  const method = req.method ?? 'GET';
  let body: Uint8Array | string | undefined;
  if (!bodyless(method)) {
    const result = await readBody(req as MaybeParsed, limit);
    if (!result.ok) return null;
    body = result.body;
  }
  return {
    method,
    url: (req as MaybeParsed).originalUrl ?? req.url ?? '/',
    headers: nodeHeaders(req),
    body,
    remoteAddress: req.socket.remoteAddress,
  };
}

/**
 * Creates a `(req, res, next?)` handler for `node:http`, Connect or Express. Requests for paths the
 * server does not serve go to `next`, or get a 404 when there is none. Errors never escape as
 * exceptions: each endpoint answers its own OAuth error response (see
 * {@link AuthorizationServer.handle}); a body larger than `maxBodyBytes` is answered `413`
 * (`invalid_request`) with `Connection: close`.
 *
 * @param server - the authorization server
 * @returns a request listener
 * @see RFC 6749 §3 (endpoints), RFC 8414 §3 and RFC 9728 §3 (metadata locations)
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { toNodeHandler } from 'portcullis/node';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * createServer(toNodeHandler(oauth)).listen(3000, '127.0.0.1');
 * ```
 * @group Adapters
 */
export function toNodeHandler(
  server: AuthorizationServer,
): (req: IncomingMessage, res: ServerResponse, next?: NextFunction) => Promise<void> {
  return async (req, res, next) => {
    const notOurs = () => {
      if (next !== undefined) next();
      else
        writeResponse(res, {
          status: 404,
          headers: { 'content-type': 'application/json' },
          body: '{"error":"not_found"}',
        });
    };
    try {
      const url = (req as MaybeParsed).originalUrl ?? req.url ?? '/';
      const q = url.indexOf('?');
      if (!server.matches(q === -1 ? url : url.slice(0, q))) {
        notOurs();
        return;
      }
      const request = await toOAuthRequest(req, server.maxBodyBytes);
      if (request === null) {
        writeResponse(res, payloadTooLarge(), true);
        return;
      }
      const response = await server.handle(request);
      if (response === null) {
        notOurs();
        return;
      }
      writeResponse(res, response);
    } catch (error) {
      if (next !== undefined) next(error);
      else if (!res.headersSent) {
        writeResponse(res, {
          status: 500,
          headers: { 'content-type': 'application/json' },
          body: '{"error":"server_error"}',
        });
      }
    }
  };
}

/**
 * Runs a resource-server guard on a Node request. Returns the principal, or `null` after writing the
 * 400/401/403 response (with its `WWW-Authenticate` challenge): `400 invalid_request` (two
 * `Authorization` headers, another scheme, an empty credential), `401 invalid_token` (malformed,
 * unknown, expired, revoked, or for another resource), `401` without an error code (no token and
 * `required`), `403 insufficient_scope`. A verifier that fails rejects the returned promise.
 *
 * @param guard - from `server.guard(...)` or `createResourceGuard(...)`
 * @param req - the request
 * @param res - the response, written to when the request is refused
 * @param requirement - the route's scope and whether a token is required
 * @returns the caller, or `null` when the response has been sent
 * @see RFC 6750 §3
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { guardNodeRequest } from 'portcullis/node';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * const guard = oauth.guard({ resource: 'http://127.0.0.1:3000' });
 * createServer(async (req, res) => {
 *   const principal = await guardNodeRequest(guard, req, res, { scope: 'courses:read', required: true });
 *   if (principal === null) return;
 *   res.end(JSON.stringify({ hello: principal.anonymous ? 'anonymous' : principal.subject }));
 * });
 * ```
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export async function guardNodeRequest(
  guard: ResourceGuard,
  req: IncomingMessage,
  res: ServerResponse,
  requirement?: GuardRequirement,
): Promise<Principal | null> {
  const result = await guard.check({ headers: nodeHeaders(req) }, requirement);
  if (result.ok) return result.principal;
  writeResponse(res, result.response);
  return null;
}
