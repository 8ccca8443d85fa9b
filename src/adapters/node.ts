/**
 * `portcullis/node`: serves an {@link AuthorizationServer} from `node:http`, Connect or Express. It
 * only translates: `@hono/node-server`'s request listener turns the `IncomingMessage` into a Fetch
 * `Request` (raw headers, body, errors and clean-up included), the Fetch entry of `portcullis/fetch`
 * turns that into the core's request, and the core's response is written straight to the
 * `ServerResponse`. What is Node's own: the client address comes from the socket, and a body that a
 * body parser already read is refused instead of being re-encoded.
 * @module portcullis/node
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener, type Http2Bindings, type HttpBindings, RequestError } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { OAuthError } from '../core/errors.js';
import { bodyless, errorResponse } from '../core/http.js';
import type { AuthorizationServer } from '../server.js';
import {
  answerFetchRequest,
  bodyAlreadyRead,
  onceWarning,
  toResponse,
  verbatimTarget,
} from './fetch-messages.js';
import { writeResponse } from './node-messages.js';

export { guardNodeRequest } from '../resource-server/node.js';
export { type HardenServerOptions, hardenServer } from './harden-server.js';
export { nodeHeaders, writeResponse } from './node-messages.js';

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

/** A request as Connect or Express leave it after their own middleware ran. */
type HostRequest = IncomingMessage & {
  originalUrl?: string;
  body?: unknown;
  /** Set by body-parser (Express, Connect) once it has read the body. */
  _body?: boolean;
  /** The raw bytes, kept by a body parser's `verify` callback or a platform (Firebase, Vercel). */
  rawBody?: unknown;
};

/**
 * Whether the body is still there to be read: untouched, or kept as raw bytes (`req.rawBody`, or
 * the Buffer `express.raw()` leaves in `req.body`), which the bridge then reads instead of the
 * stream. A body only left in parsed form is gone: re-encoding it would let a parser's notions
 * through (`code[]=x` read as `code=x` by `urlencoded({ extended: true })`).
 */
function bodyStillReadable(req: HostRequest): boolean {
  if (req._body !== true && !req.readableDidRead && !req.readableEnded) return true;
  const raw =
    req.rawBody instanceof Uint8Array ? req.rawBody : req.body instanceof Uint8Array ? req.body : undefined;
  if (raw === undefined) return false;
  // The bridge reads `rawBody` when it is a Buffer.
  req.rawBody = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  return true;
}

/** True for the whitespace HTTP allows around a field value (RFC 9110 §5.5). */
const isSpace = (code: number): boolean => code === 0x20 || code === 0x09;

/**
 * The request's headers as the Fetch `Headers` of the bridge lists them (lower-case names, repeats
 * joined with `", "` and cookies with `"; "`, values without surrounding whitespace, HTTP/2
 * pseudo-headers left out), read from Node's raw list without building a `Headers` object first.
 */
function headerRecord(raw: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.charCodeAt(0) === 0x3a) continue;
    let value = raw[i + 1]!;
    if (value !== '' && (isSpace(value.charCodeAt(0)) || isSpace(value.charCodeAt(value.length - 1)))) {
      value = value.replace(/^[ \t]+|[ \t]+$/g, '');
    }
    const key = name.toLowerCase();
    const previous = Object.hasOwn(headers, key) ? headers[key] : undefined;
    // As undici's Headers: repeated cookies joined as one Cookie header would carry them.
    headers[key] = previous === undefined ? value : `${previous}${key === 'cookie' ? '; ' : ', '}${value}`;
  }
  return headers;
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** What the bridge answers when it cannot make a Fetch request (bad Host, bad target) or failed. */
function bridgeError(error: unknown): Response {
  if (error instanceof RequestError) {
    return toResponse(
      errorResponse(new OAuthError('invalid_request', 'the request target or Host header is malformed')),
    );
  }
  return toResponse(errorResponse(new OAuthError('server_error')));
}

const notFound = {
  status: 404,
  headers: { 'content-type': 'application/json' },
  body: '{"error":"not_found"}',
};

/**
 * Creates a `(req, res, next?)` handler for `node:http`, Connect or Express. Requests for paths the
 * server does not serve go to `next`, or get a JSON 404 when there is none. Errors never escape as
 * exceptions: each endpoint answers its own OAuth error response (see
 * {@link AuthorizationServer.handle}). A body larger than `maxBodyBytes` is answered `413`
 * (`invalid_request`) after the rest of it has been read and discarded (up to 16 MiB, for at most
 * 5 s), so the client reads the `413` instead of a reset connection. A body a body parser already
 * read is answered `400` (`invalid_request`, "mount the authorization server before any body
 * parser") and announced once as a `PortcullisWarning`, unless its raw bytes were kept
 * (`req.rawBody`, or `express.raw()`), which are then read instead. The client address for
 * per-address limits is the socket's peer address.
 *
 * Give the `http.Server` timeouts and a connection cap: see {@link hardenServer}.
 *
 * @param server - the authorization server
 * @returns a request listener; its promise settles once the response is written
 * @see RFC 6749 §3 (endpoints), RFC 8414 §3 and RFC 9728 §3 (metadata locations)
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { hardenServer, toNodeHandler } from 'portcullis/node';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * hardenServer(createServer(toNodeHandler(oauth))).listen(3000, '127.0.0.1');
 * ```
 * @group Adapters
 */
export function toNodeHandler(
  server: AuthorizationServer,
): (req: IncomingMessage, res: ServerResponse, next?: NextFunction) => Promise<void> {
  const warnBodyAlreadyRead = onceWarning(
    'PORTCULLIS_BODY_ALREADY_READ',
    'a body parser read the request body before the authorization server, which answered 400: mount its router or handler before any body parser (or keep the raw body in req.rawBody)',
  );
  const listener = getRequestListener(
    async (request, env: HttpBindings | Http2Bindings) => {
      const { incoming, outgoing } = env as HttpBindings;
      const response = await answerFetchRequest(
        server,
        request,
        incoming.socket.remoteAddress,
        warnBodyAlreadyRead,
        headerRecord(incoming.rawHeaders),
        // The bridge built `request.url` from this same target (set below).
        verbatimTarget(incoming.url ?? '/'),
      );
      // The core's response is a status, headers and a string: written as is, without a Response.
      writeResponse(outgoing, response ?? notFound);
      return RESPONSE_ALREADY_SENT;
    },
    // No global `Request`/`Response` replaced behind the host's back; a request without `Host`
    // (HTTP/1.0) still has a URL: the core reads only its path and query.
    { overrideGlobalObjects: false, hostname: 'localhost', errorHandler: bridgeError },
  );
  return async (req, res, next) => {
    try {
      const request = req as HostRequest;
      // Express strips its mount path from `req.url`; the server's paths are absolute.
      const url = request.originalUrl ?? req.url ?? '/';
      if (!server.matches(pathOf(url))) {
        if (next !== undefined) next();
        else writeResponse(res, notFound);
        return;
      }
      if (!bodyless(req.method ?? 'GET') && !bodyStillReadable(request)) {
        warnBodyAlreadyRead();
        writeResponse(res, bodyAlreadyRead());
        return;
      }
      req.url = url;
      await listener(req, res);
    } catch (error) {
      if (next !== undefined) next(error);
      else if (!res.headersSent) writeResponse(res, errorResponse(new OAuthError('server_error')));
    }
  };
}
