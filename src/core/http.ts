/**
 * The plain request and response every handler speaks. Adapters (Express, Fetch, node:http)
 * translate to and from these; nothing in the core sees a framework object.
 * @module
 */
import { OAuthError, toOAuthError } from './errors.js';

/**
 * A request as the core sees it. Adapters build it; tests can write it by hand. The body is parsed
 * by each endpoint as its RFC says: form-encoded at the token, revocation and introspection
 * endpoints (RFC 6749 §3.2), JSON at registration (RFC 7591 §3.1).
 *
 * @example
 * ```ts
 * import type { OAuthRequest } from 'portcullis';
 *
 * const request: OAuthRequest = {
 *   method: 'POST',
 *   url: '/oauth/register',
 *   headers: { 'content-type': 'application/json' },
 *   body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:49152/cb'] }),
 * };
 * ```
 * @see RFC 6749 §3.1, §3.2
 * @group Request and Response
 */
export interface OAuthRequest {
  /** Upper-case HTTP method. */
  readonly method: string;
  /** Path and query as received (`/oauth/authorize?client_id=...`). The origin is never used: the issuer comes from options. */
  readonly url: string;
  /**
   * Request headers with lower-case names. A header sent several times is joined with `", "`, as the
   * Fetch `Headers` class does.
   */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The raw body, unparsed. The core parses it according to `content-type`. */
  readonly body?: Uint8Array | string | undefined;
  /** The peer address, used for rate limiting. */
  readonly remoteAddress?: string | undefined;
}

/**
 * A response as the core returns it: a status, lower-case headers and an already serialised body.
 * The adapters write it out; `toResponse` (Fetch) and `writeResponse` (node) do it for yours.
 *
 * @example
 * ```ts
 * import type { OAuthResponse } from 'portcullis';
 *
 * const consentPage: OAuthResponse = {
 *   status: 200,
 *   headers: { 'content-type': 'text/html; charset=utf-8', 'x-frame-options': 'DENY' },
 *   body: '<!doctype html><title>Allow?</title>',
 * };
 * ```
 * @see RFC 6749 §5.1, §5.2 (token responses and errors)
 * @group Request and Response
 */
export interface OAuthResponse {
  /** The HTTP status. */
  readonly status: number;
  /** Response headers with lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The serialised body (JSON or HTML); absent for redirects and 204. */
  readonly body?: string | undefined;
}

/** `Cache-Control: no-store` plus `Pragma: no-cache` for RFC 6749 §5.1 clients. */
export const NO_STORE: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-store',
  pragma: 'no-cache',
});

const JSON_TYPE = 'application/json';

/** A JSON response. */
export function jsonResponse(
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = NO_STORE,
): OAuthResponse {
  return { status, headers: { 'content-type': JSON_TYPE, ...headers }, body: JSON.stringify(body) };
}

/** A JSON response from a body that is already serialised (metadata documents are built once). */
export function rawJsonResponse(
  status: number,
  body: string,
  headers: Readonly<Record<string, string>>,
): OAuthResponse {
  return { status, headers: { 'content-type': JSON_TYPE, ...headers }, body };
}

/** The JSON error response of RFC 6749 §5.2, never cacheable. */
export function errorResponse(error: unknown): OAuthResponse {
  const e = toOAuthError(error);
  return {
    status: e.status,
    headers: { 'content-type': JSON_TYPE, ...NO_STORE, ...e.headers },
    body: JSON.stringify(e.toJSON()),
  };
}

/** A redirect. `303` after a POST (RFC 9700 §4.12), `302` or `303` otherwise; never `307`. */
export function redirectResponse(location: string, status: 302 | 303 = 303): OAuthResponse {
  return { status, headers: { location, ...NO_STORE } };
}

/** `405 Method Not Allowed` with the `Allow` header. */
export function methodNotAllowed(allow: readonly string[]): OAuthError {
  return new OAuthError('method_not_allowed', `use ${allow.join(' or ')}`, {
    headers: { allow: allow.join(', ') },
  });
}

/**
 * Reads a header that must appear at most once. Duplicates arrive joined with `", "` (see
 * {@link OAuthRequest.headers}); for credentials, whose syntax has no comma, that is a repeat.
 */
export function singleCredentialHeader(request: OAuthRequest, name: string): string | undefined {
  const value = request.headers[name];
  if (value === undefined) return undefined;
  if (value.includes(',')) {
    throw new OAuthError('invalid_request', `the ${name} header was sent more than once`);
  }
  return value;
}

/** The media type of the request without parameters, lower-cased (`application/json`). */
export function mediaType(request: OAuthRequest): string | undefined {
  const value = request.headers['content-type'];
  if (value === undefined) return undefined;
  const semi = value.indexOf(';');
  return (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase();
}

/** Splits the request URL into its path and its raw query (without `?`). */
export function splitUrl(url: string): { path: string; query: string } {
  const q = url.indexOf('?');
  const hash = url.indexOf('#');
  const end = hash === -1 ? url.length : hash;
  if (q === -1 || q > end) return { path: url.slice(0, end), query: '' };
  return { path: url.slice(0, q), query: url.slice(q + 1, end) };
}

/** The 413 every adapter answers when a body exceeds the limit. */
export function payloadTooLarge(): OAuthResponse {
  return errorResponse(new OAuthError('invalid_request', 'the request body is too large', { status: 413 }));
}

/** Methods whose requests carry no body the core reads. */
export function bodyless(method: string): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
}
