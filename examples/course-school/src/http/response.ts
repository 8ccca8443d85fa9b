/**
 * The response model of the reference server and its one error type. Handlers return an
 * {@link HttpResponse} or throw an {@link HttpError}; one writer turns either into bytes, so every
 * error has the same JSON shape: `{ "error": code, "error_description": text, "issues"?: [...] }`
 * (the RFC 6749 §5.2 shape, so clients parse OAuth and API errors alike).
 * @module
 */
import type { ServerResponse } from 'node:http';

/** Response headers, lower-case names. An array writes one header line per value (`set-cookie`). */
export type HttpHeaders = Readonly<Record<string, string | readonly string[]>>;

/** A response before it is written. */
export interface HttpResponse {
  readonly status: number;
  readonly headers: HttpHeaders;
  readonly body?: string | Uint8Array | undefined;
}

/** Error codes of the business API. OAuth codes come from the library's guard unchanged. */
export type HttpErrorCode =
  | 'invalid_request'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'not_found'
  | 'method_not_allowed'
  | 'forbidden'
  | 'conflict'
  | 'too_many_requests'
  | 'server_error';

const STATUS: Readonly<Record<HttpErrorCode, number>> = {
  invalid_request: 400,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  server_error: 500,
};

/** One problem with a request field, e.g. `{ path: "body.title", message: "Required" }`. */
export interface Issue {
  readonly path: string;
  readonly message: string;
}

/** An error that carries its status, so no catch site decides one. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly code: HttpErrorCode;
  readonly status: number;
  readonly issues: readonly Issue[];
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: HttpErrorCode,
    description: string,
    options: { issues?: readonly Issue[]; headers?: Readonly<Record<string, string>> } = {},
  ) {
    super(description);
    this.code = code;
    this.status = STATUS[code];
    this.issues = options.issues ?? [];
    this.headers = options.headers ?? {};
  }
}

const NO_STORE = 'no-store';

/** A JSON response; private data is never cached unless the caller says otherwise. */
export function json(
  status: number,
  value: unknown,
  headers: Readonly<Record<string, string>> = {},
): HttpResponse {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': NO_STORE, ...headers },
    body: JSON.stringify(value),
  };
}

/** A plain-text or Markdown document. */
export function text(body: string, contentType: string, headers: Readonly<Record<string, string>> = {}) {
  return {
    status: 200,
    headers: { 'content-type': `${contentType}; charset=utf-8`, ...headers },
    body,
  } satisfies HttpResponse;
}

/** `204 No Content`. */
export function noContent(): HttpResponse {
  return { status: 204, headers: { 'cache-control': NO_STORE } };
}

/** `303 See Other`: the answer to a form POST (RFC 9110 §15.4.4), never `307`. */
export function seeOther(location: string, headers: HttpHeaders = {}): HttpResponse {
  return { status: 303, headers: { location, 'cache-control': NO_STORE, ...headers } };
}

/** The response for anything thrown. Unknown errors become a 500 whose message is not sent. */
export function errorResponse(error: unknown): HttpResponse {
  if (error instanceof HttpError) {
    const body: Record<string, unknown> = { error: error.code, error_description: error.message };
    if (error.issues.length > 0) body.issues = error.issues;
    return json(error.status, body, error.headers);
  }
  return json(500, { error: 'server_error', error_description: 'the server could not complete the request' });
}

/** Writes a response. `HEAD` bodies are dropped by Node itself. */
export function writeResponse(res: ServerResponse, response: HttpResponse): void {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    headers[name] = typeof value === 'string' ? value : [...value];
  }
  if (response.body !== undefined) headers['content-length'] = String(Buffer.byteLength(response.body));
  res.writeHead(response.status, headers);
  res.end(response.body);
}
