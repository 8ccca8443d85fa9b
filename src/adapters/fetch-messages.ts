/**
 * The one place where a Fetch `Request` becomes the core's {@link OAuthRequest} and an
 * {@link OAuthResponse} becomes a Fetch `Response`. Every adapter (Fetch, node:http, Express) goes
 * through `answerFetchRequest`, so they read bodies, headers and limits the same way. Nothing here
 * decides anything about OAuth: the core answers every request it is given.
 * @module
 */
import { OAuthError } from '../core/errors.js';
import {
  bodyless,
  errorResponse,
  type OAuthRequest,
  type OAuthResponse,
  payloadTooLarge,
  splitUrl,
} from '../core/http.js';
import type { AuthorizationServer } from '../server.js';

/**
 * Options of {@link toOAuthRequest}.
 *
 * @example
 * ```ts
 * import type { FetchRequestOptions } from 'portcullis/fetch';
 *
 * const options: FetchRequestOptions = { maxBodyBytes: 64 * 1024, remoteAddress: '203.0.113.7' };
 * ```
 * @see RFC 6749 §10.10 (per-address limits need the client's address)
 * @group Adapters
 */
export interface FetchRequestOptions {
  /** The largest body accepted, in bytes: pass `server.maxBodyBytes`. */
  readonly maxBodyBytes: number;
  /**
   * The client's address, for per-address rate limits. The Fetch API does not carry it: take it
   * from the platform (the socket on Node, `info.remoteAddr` on Deno, `server.requestIP()` on Bun,
   * `CF-Connecting-IP` on Cloudflare).
   */
  readonly remoteAddress?: string | undefined;
}

/**
 * What {@link toOAuthRequest} made of a Fetch request: the core's request, or the refusal to send
 * instead (`413` for a body over the limit, `400` for a body that was already read or could not
 * be read).
 *
 * @example
 * ```ts
 * import type { TranslatedRequest } from 'portcullis/fetch';
 *
 * declare const translated: TranslatedRequest;
 * console.log(translated.ok ? translated.request.url : translated.response.status);
 * ```
 * @see RFC 9110 §15.5.14 (413 Content Too Large)
 * @group Adapters
 */
export type TranslatedRequest =
  | { readonly ok: true; readonly request: OAuthRequest }
  | { readonly ok: false; readonly response: OAuthResponse };

/**
 * A body over the limit but no larger than this is still read to its end (and thrown away) before
 * the `413` goes out: a client that sends its whole body before reading, and one whose request
 * said `Connection: close`, then read the `413` instead of a connection reset (ABU-07). A larger
 * body is left unread.
 */
export const DISCARD_LIMIT_BYTES = 16 * 1024 * 1024;
/** How long the rest of a refused body may take to arrive before it is abandoned. */
export const DISCARD_TIMEOUT_MS = 5_000;

const EMPTY = new Uint8Array(0);

/** The `400` for a body that something else read first: the developer's misconfiguration. */
export function bodyAlreadyRead(): OAuthResponse {
  return errorResponse(
    new OAuthError(
      'invalid_request',
      'the request body was read before it reached the authorization server: mount the authorization server before any body parser',
    ),
  );
}

/** The `400` for a body whose stream failed (the client went away, or sent broken framing). */
function bodyUnreadable(): OAuthResponse {
  return errorResponse(new OAuthError('invalid_request', 'the request body could not be read'));
}

/** The declared length, when the header is one plain number. */
function declaredLength(headers: Readonly<Record<string, string>>): number | undefined {
  const value = headers['content-length'];
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
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
 * Reads and throws away what is left of a refused body, up to {@link DISCARD_LIMIT_BYTES} in all
 * and for at most {@link DISCARD_TIMEOUT_MS}; then gives up and cancels the stream.
 */
async function discardRest(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  alreadyRead: number,
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(resolve, DISCARD_TIMEOUT_MS, 'expired');
  });
  try {
    for (let total = alreadyRead; total <= DISCARD_LIMIT_BYTES; ) {
      const next = await Promise.race([reader.read(), expired]);
      if (next === 'expired') break;
      if (next.done) return;
      total += next.value.byteLength;
    }
    await reader.cancel().catch(() => {});
  } finally {
    clearTimeout(timer);
  }
}

/** The body as bytes, or `null` when it is larger than `limit` (what was sent has been discarded). */
async function readBody(
  request: Request,
  headers: Readonly<Record<string, string>>,
  limit: number,
): Promise<Uint8Array | null> {
  const declared = declaredLength(headers);
  if (declared !== undefined && declared <= limit) {
    // HTTP framing ends the body at its declared length, so reading it whole stays within the limit
    // (and skips a stream per chunk; on Node the bridge reads it straight off the socket). The
    // check after is for a runtime that let more through.
    const bytes = new Uint8Array(await request.arrayBuffer());
    return bytes.byteLength > limit ? null : bytes;
  }
  const body = request.body;
  if (body === null) return EMPTY;
  if (declared !== undefined && declared > DISCARD_LIMIT_BYTES) {
    await body.cancel().catch(() => {});
    return null;
  }
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return concat(chunks, size);
    size += value.byteLength;
    if (size > limit) {
      await discardRest(reader, size);
      return null;
    }
    chunks.push(value);
  }
}

/**
 * The request headers with lower-case names. A header sent twice arrives joined with `", "` (the
 * Fetch `Headers` class joins repeats), which is how the core sees a repeated `Authorization` and
 * refuses it (RFC 6750 §2, RFC 6749 §2.3).
 */
function headersOf(request: Request): Record<string, string> {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

/**
 * Translates a Fetch `Request` into the core's {@link OAuthRequest}: method, path and query,
 * headers (repeats joined, so a repeated `Authorization` stays visible and is refused), the body
 * read up to `maxBodyBytes` (not for GET, HEAD and OPTIONS), and the client address you pass.
 * For hosts that route themselves and call `server.handlers.*`; `createFetchHandler` uses it.
 *
 * A body over the limit is refused with `413 invalid_request`. Unless it is very large (over
 * 16 MiB declared or sent) the rest of it is read and discarded first, for at most 5 s, so that the
 * client reads the `413` rather than a reset connection. A body something else already read
 * (`request.bodyUsed`) is refused with `400 invalid_request`: re-reading it would see nothing.
 *
 * @param request - the Fetch request, its body not read yet
 * @param options - the body limit (`server.maxBodyBytes`) and the client's address
 * @returns `{ ok: true, request }`, or `{ ok: false, response }` with the refusal to send
 * @see RFC 6749 §3.2 (form-encoded token requests), RFC 7591 §3.1 (JSON registration), RFC 9110
 * §15.5.14 (413 Content Too Large)
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { toOAuthRequest, toResponse } from 'portcullis/fetch';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
 *
 * // Only the token endpoint, at a route of our own.
 * export async function token(request: Request): Promise<Response> {
 *   const translated = await toOAuthRequest(request, { maxBodyBytes: oauth.maxBodyBytes });
 *   if (!translated.ok) return toResponse(translated.response);
 *   return toResponse(await oauth.handlers.token(translated.request));
 * }
 * ```
 * @group Adapters
 */
export function toOAuthRequest(request: Request, options: FetchRequestOptions): Promise<TranslatedRequest> {
  return translate(request, pathAndQuery(request.url), headersOf(request), options);
}

/** The path and query of an absolute URL, as the URL parser reads them. */
function pathAndQuery(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

/** Only characters the URL parser keeps as they are, in a path and in a query alike. */
const VERBATIM_TARGET = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@/%?]*$/;
/** A `.` or `..` segment, literal or percent-encoded, which the URL parser would resolve. */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:[/?]|$)/i;

/**
 * `target` (a request target in origin form, `/path?query`) when the URL parser would give back
 * exactly it as the path and query of a URL ending in it, else `undefined`: no character it
 * percent-encodes or reads as a delimiter (`'` in a query, `#`, spaces, non-ASCII), no dot segment
 * to resolve, no empty query (which it drops). Lets an adapter that has the target verbatim (the
 * node adapter) skip parsing the URL a second time; any other target is parsed as before.
 */
export function verbatimTarget(target: string): string | undefined {
  if (!VERBATIM_TARGET.test(target) || DOT_SEGMENT.test(target) || target.endsWith('?')) return undefined;
  return target;
}

async function translate(
  request: Request,
  target: string,
  headers: Record<string, string>,
  options: FetchRequestOptions,
): Promise<TranslatedRequest> {
  let body: Uint8Array | undefined;
  if (!bodyless(request.method)) {
    if (request.bodyUsed) return { ok: false, response: bodyAlreadyRead() };
    let read: Uint8Array | null;
    try {
      read = await readBody(request, headers, options.maxBodyBytes);
    } catch {
      return { ok: false, response: bodyUnreadable() };
    }
    if (read === null) return { ok: false, response: payloadTooLarge() };
    body = read;
  }
  return {
    ok: true,
    request: {
      method: request.method,
      url: target,
      headers,
      body,
      remoteAddress: options.remoteAddress,
    },
  };
}

/**
 * The server's answer to a Fetch request, or `null` when the path is not one of the server's (its
 * body then stays unread, for the host). What `createFetchHandler` and the node adapter share:
 * they differ only in how the answer is written and where other paths go. `headers`, when the host
 * already has them as {@link toOAuthRequest} would read them (the node adapter, from Node's raw
 * list), spare building the Fetch `Headers`; `target`, the path and query as parsing the request's
 * URL would give them (see {@link verbatimTarget}), spares parsing it.
 */
export async function answerFetchRequest(
  server: AuthorizationServer,
  request: Request,
  remoteAddress: string | undefined,
  onBodyAlreadyRead: () => void,
  headers?: Record<string, string>,
  target?: string,
): Promise<OAuthResponse | null> {
  const url = target ?? pathAndQuery(request.url);
  if (!server.matches(splitUrl(url).path)) return null;
  const readBefore = request.bodyUsed;
  const translated = await translate(request, url, headers ?? headersOf(request), {
    maxBodyBytes: server.maxBodyBytes,
    remoteAddress,
  });
  if (translated.ok) return server.handle(translated.request);
  if (readBefore) onBodyAlreadyRead();
  return translated.response;
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
 *   const headers = {
 *     authorization: request.headers.get('authorization') ?? undefined,
 *     dpop: request.headers.get('dpop') ?? undefined, // DPoP-bound tokens come with a proof
 *   };
 *   const result = await guard.check(
 *     { headers, method: request.method, url: request.url },
 *     { scope: 'courses:read', required: true },
 *   );
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

/**
 * Emits a warning the first time it is called only: a misconfiguration is announced once, not on
 * every request.
 * Node's `process.emitWarning` where there is one (it prints once to stderr and reaches
 * `process.on('warning')`), `console.warn` elsewhere.
 */
export function onceWarning(code: string, message: string): () => void {
  let warned = false;
  return () => {
    if (warned) return;
    warned = true;
    const host = globalThis as { process?: { emitWarning?: (message: string, options: object) => void } };
    if (typeof host.process?.emitWarning === 'function') {
      host.process.emitWarning(message, { type: 'PortcullisWarning', code });
    } else {
      console.warn(`PortcullisWarning [${code}]: ${message}`);
    }
  };
}
