/**
 * The business API's one error type and its JSON responses. Handlers throw an {@link ApiError}
 * (the status lives on the error); the app's error handler turns it, Hono's own refusals
 * (`HTTPException`: bad JSON, wrong media type, body too large) and a storage outage (the
 * library's `isStorageUnavailable`: `503` with `Retry-After`, as the library answers its own
 * endpoints) into the same shape: `{ "error": code, "error_description": text, "issues"?: [...] }`,
 * the RFC 6749 §5.2 shape, so clients parse OAuth and API errors alike.
 * @module
 */
import { HTTPException } from 'hono/http-exception';
import {
  defaultLogger,
  isStorageUnavailable,
  logFailure as logLibraryFailure,
  STORAGE_RETRY_AFTER_SECONDS,
} from 'portcullis';
import type { z } from 'zod';

/** Error codes of the business API. OAuth codes come from the library's guard unchanged. */
export type ApiErrorCode =
  | 'invalid_request'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'not_found'
  | 'method_not_allowed'
  | 'forbidden'
  | 'conflict'
  | 'too_many_requests'
  | 'server_error'
  | 'temporarily_unavailable';

const STATUS: Readonly<Record<ApiErrorCode, number>> = {
  invalid_request: 400,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  server_error: 500,
  temporarily_unavailable: 503,
};

/** One problem with a request field, e.g. `{ path: "body.title", message: "Required" }`. */
export interface Issue {
  readonly path: string;
  readonly message: string;
}

/** An error that carries its status, so no catch site decides one. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ApiErrorCode;
  readonly status: number;
  readonly issues: readonly Issue[];
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ApiErrorCode,
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

/** A JSON response; private data is never cached unless the caller says otherwise. */
export function json(
  status: number,
  value: unknown,
  headers: Readonly<Record<string, string>> = {},
): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  });
}

/** `204 No Content`. */
export function noContent(): Response {
  return new Response(null, { status: 204, headers: { 'cache-control': 'no-store' } });
}

/** One issue per problem, located (`body.title`); each unknown field is its own issue. */
export function issuesOf(where: string, error: z.ZodError): Issue[] {
  return error.issues.flatMap((issue) => {
    const path = [where, ...issue.path.map(String)];
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: [...path, key].join('.'), message: 'unknown field' }));
    }
    return [{ path: path.join('.'), message: issue.message }];
  });
}

/** The error a list of issues makes: `invalid_request`, naming the first problem. */
export function invalidRequest(issues: readonly Issue[], what = 'the request is invalid'): ApiError {
  const first = issues[0];
  return new ApiError(
    'invalid_request',
    first === undefined ? what : `${what}: ${first.path} ${first.message}`,
    {
      issues,
    },
  );
}

/** What Hono's own refusals mean in this API. */
const FROM_HONO: Readonly<Record<number, readonly [ApiErrorCode, string]>> = {
  400: ['invalid_request', 'the body is not valid JSON: send it as application/json'],
  403: ['forbidden', 'this request came from another site'],
  413: ['payload_too_large', 'the request body is too large'],
  415: ['unsupported_media_type', 'send the body as application/json'],
};

/** True for the refusals a request can cause (nothing to log); false for failures of the server. */
export function isRefusal(error: unknown): boolean {
  return error instanceof ApiError || error instanceof HTTPException;
}

/** A fresh request id: 16 hex digits, sent in `X-Request-Id` and logged with the failure. */
export function newRequestId(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, '0')).join(
    '',
  );
}

/**
 * Logs a failure of the server once (a refusal is not one) as the library logs its own: one JSON
 * line on standard error, a storage outage at `warn` by its reason (answered 503, the client
 * retries), anything else at `error` by its name and first line. Never the SQL of a failed
 * statement or its parameters (a driver's error carries both), never a request's body.
 *
 * @returns the request id the response must carry (`X-Request-Id`), or `undefined` for a refusal
 */
export function logFailure(method: string, path: string, error: unknown): string | undefined {
  if (isRefusal(error)) return undefined;
  const requestId = newRequestId();
  logLibraryFailure(defaultLogger, `${method} ${path} failed`, error, { requestId });
  return requestId;
}

/**
 * The response for anything thrown. A storage outage is `503 temporarily_unavailable` with
 * `Retry-After`; other unknown errors become a 500 whose message is not sent.
 */
export function errorResponse(error: unknown, requestId?: string): Response {
  const response = errorResponseOf(error);
  if (requestId !== undefined) response.headers.set('x-request-id', requestId);
  return response;
}

function errorResponseOf(error: unknown): Response {
  if (error instanceof HTTPException) {
    const known = FROM_HONO[error.status];
    if (known !== undefined) error = new ApiError(known[0], known[1]);
  } else if (!(error instanceof ApiError) && isStorageUnavailable(error)) {
    error = new ApiError('temporarily_unavailable', 'the service is temporarily unavailable; retry shortly', {
      headers: { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) },
    });
  }
  if (error instanceof ApiError) {
    const body: Record<string, unknown> = { error: error.code, error_description: error.message };
    if (error.issues.length > 0) body.issues = error.issues;
    return json(error.status, body, error.headers);
  }
  return json(500, { error: 'server_error', error_description: 'the server could not complete the request' });
}
