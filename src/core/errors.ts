/**
 * The one error type of the library: an OAuth error code, the HTTP status it is answered with,
 * a description a developer can act on, and the headers the response must carry.
 *
 * @see RFC 6749 §5.2 (token endpoint errors), RFC 6750 §3.1 (resource errors), RFC 7591 §3.2.2
 * @module
 */
import { classifyStorageFailure, STORAGE_RETRY_AFTER_SECONDS } from '../storage/unavailable.js';
import type { LogFields, Logger } from './context.js';

/**
 * Error codes defined by the RFCs this library implements, plus the ones it documents itself
 * (`too_many_requests` with 429, `not_found` with 404, `method_not_allowed` with 405). Each has a
 * default HTTP status: 401 for `invalid_token`, 403 for `insufficient_scope` and `access_denied`,
 * 500 for `server_error`, 503 for `temporarily_unavailable`, 400 for the rest.
 *
 * @example
 * ```ts
 * import { type OAuthErrorCode, OAuthError } from 'portcullis';
 *
 * const code: OAuthErrorCode = 'invalid_scope';
 * console.log(new OAuthError(code).status); // 400
 * ```
 * @see RFC 6749 §4.1.2.1, §5.2; RFC 6750 §3.1; RFC 7009 §2.2.1; RFC 7591 §3.2.2; RFC 8707 §2;
 * RFC 9449 §5, §8; OpenID Connect Core §3.1.2.6
 * @group Errors (RFC 6749 §5.2)
 */
export type OAuthErrorCode =
  // RFC 6749 §4.1.2.1 and §5.2
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'server_error'
  | 'temporarily_unavailable'
  // RFC 6750 §3.1
  | 'invalid_token'
  | 'insufficient_scope'
  // RFC 7009 §2.2.1
  | 'unsupported_token_type'
  // RFC 7591 §3.2.2
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  // RFC 8707 §2
  | 'invalid_target'
  // RFC 9449 §5, §7.1, §8, §9 (DPoP): 401 with `WWW-Authenticate: DPoP` at a resource server
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  // OpenID Connect Core §3.1.2.6
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  | 'account_selection_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'registration_not_supported'
  // Not an OAuth code: answered with 429 and `Retry-After` (documented in docs/security.md).
  | 'too_many_requests'
  // Routing errors that keep the OAuth JSON shape.
  | 'not_found'
  | 'method_not_allowed';

const DEFAULT_STATUS: Readonly<Record<OAuthErrorCode, number>> = {
  invalid_request: 400,
  invalid_client: 400,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  access_denied: 403,
  unsupported_response_type: 400,
  server_error: 500,
  temporarily_unavailable: 503,
  invalid_token: 401,
  insufficient_scope: 403,
  unsupported_token_type: 400,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  invalid_target: 400,
  invalid_dpop_proof: 400,
  use_dpop_nonce: 400,
  login_required: 400,
  consent_required: 400,
  interaction_required: 400,
  account_selection_required: 400,
  request_not_supported: 400,
  request_uri_not_supported: 400,
  registration_not_supported: 400,
  too_many_requests: 429,
  not_found: 404,
  method_not_allowed: 405,
};

/**
 * Options of {@link OAuthError}.
 *
 * @example
 * ```ts
 * import { OAuthError, type OAuthErrorOptions } from 'portcullis';
 *
 * // RFC 7591 §3: require an initial access token at registration.
 * const options: OAuthErrorOptions = { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } };
 * throw new OAuthError('invalid_token', 'registration needs an initial access token', options);
 * ```
 * @see RFC 6749 §5.2, RFC 6750 §3
 * @group Errors (RFC 6749 §5.2)
 */
export interface OAuthErrorOptions {
  /** HTTP status; defaults to the status the RFCs give the code (400 for most). */
  status?: number;
  /** Extra response headers, e.g. `WWW-Authenticate` or `Retry-After`. Names are lower-cased. */
  headers?: Readonly<Record<string, string>>;
  /** The underlying error, kept for logs and never sent to the client. */
  cause?: unknown;
}

const MAX_DESCRIPTION = 300;

/**
 * RFC 6749 §5.2 limits `error_description` to %x20-21 / %x23-5B / %x5D-7E: printable ASCII
 * without `"` and `\`. Descriptions often quote client input, so they are cleaned here, once.
 */
function cleanDescription(text: string): string {
  let out = '';
  for (let i = 0; i < text.length && out.length < MAX_DESCRIPTION; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) out += "'";
    else if (c === 0x5c) out += '/';
    else if (c >= 0x20 && c <= 0x7e) out += text[i];
    else out += '?';
  }
  return out;
}

/**
 * An OAuth error: the RFC error `code`, the HTTP `status`, a `description` and response headers.
 * Handlers throw it; the response is built from it in one place, so the status is never decided
 * at a catch site. Anything that is not an `OAuthError` becomes `server_error` / 500 and its message
 * is never sent to the client.
 *
 * @example
 * ```ts
 * import { OAuthError } from 'portcullis';
 *
 * throw new OAuthError('invalid_scope', "scope 'courses:delete' is not supported");
 * ```
 * @see RFC 6749 §5.2
 * @group Errors (RFC 6749 §5.2)
 */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  /** The RFC error code, sent as `error`. */
  readonly code: OAuthErrorCode;
  /** The HTTP status of the response. */
  readonly status: number;
  /** Human-readable text sent as `error_description` (restricted to the RFC 6749 charset). */
  readonly description: string | undefined;
  /** Headers the response must carry (lower-case names). */
  readonly headers: Readonly<Record<string, string>>;

  /**
   * @param code - the RFC error code
   * @param description - what went wrong, in words a developer can act on
   * @param options - status override, extra headers, cause
   */
  constructor(code: OAuthErrorCode, description?: string, options: OAuthErrorOptions = {}) {
    const cleaned = description === undefined ? undefined : cleanDescription(description);
    super(cleaned ?? code, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status ?? DEFAULT_STATUS[code];
    this.description = cleaned;
    this.headers = options.headers ?? {};
  }

  /** The RFC 6749 §5.2 JSON body: `{ error, error_description? }`. */
  toJSON(): { error: OAuthErrorCode; error_description?: string } {
    return this.description === undefined
      ? { error: this.code }
      : { error: this.code, error_description: this.description };
  }
}

/**
 * True when `value` is an {@link OAuthError}. Works across bundle copies (checks the name and code),
 * so an error thrown by one copy of the library (the ESM build) is recognised by another (CJS).
 *
 * @param value - anything thrown or returned
 * @returns whether it is an `OAuthError`; the type narrows accordingly
 * @see RFC 6749 §5.2
 * @example
 * ```ts
 * import { isOAuthError, OAuthError } from 'portcullis';
 *
 * try {
 *   throw new OAuthError('invalid_grant', 'the code was already used');
 * } catch (error) {
 *   if (isOAuthError(error)) console.log(error.status, error.toJSON()); // 400 { error: 'invalid_grant', ... }
 * }
 * ```
 * @group Errors (RFC 6749 §5.2)
 */
export function isOAuthError(value: unknown): value is OAuthError {
  return (
    value instanceof OAuthError ||
    (value instanceof Error && value.name === 'OAuthError' && typeof (value as OAuthError).code === 'string')
  );
}

/**
 * Turns anything thrown into an {@link OAuthError}. A transient storage failure (the database is
 * down, restarting or overloaded: see `isStorageUnavailable`) becomes `temporarily_unavailable` /
 * 503 with `Retry-After` (FLT-01); any other unknown failure becomes `server_error` / 500. Neither
 * carries the original message.
 */
export function toOAuthError(value: unknown): OAuthError {
  if (isOAuthError(value)) return value;
  if (classifyStorageFailure(value) !== undefined) {
    return new OAuthError(
      'temporarily_unavailable',
      'the service is temporarily unavailable; retry shortly',
      {
        headers: { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) },
        cause: value,
      },
    );
  }
  return new OAuthError('server_error', 'the server could not complete the request', { cause: value });
}

/**
 * Logs a request that failed with a 5xx, once: a transient storage failure at `warn` (the server
 * answered 503 and the client will retry), anything else at `error`. The failure is named by
 * `describeFailure`: its name and first line, a database error by its SQLSTATE only, never a
 * statement, its parameters or a token. The server logs its own failures this way; use it for the
 * routes you serve beside it, so that every failure of the service logs alike.
 *
 * @param logger - where to log (e.g. {@link defaultLogger})
 * @param message - what failed (`request failed`, `consent decision failed`)
 * @param error - what was thrown
 * @param fields - more context: the path, the request id the response carries
 * @see docs/security.md, "Logging"
 * @example
 * ```ts
 * import { defaultLogger, logFailure } from 'portcullis';
 *
 * try {
 *   throw Object.assign(new Error('invalid input syntax for type uuid: "x"'), { code: '22P02' });
 * } catch (error) {
 *   // {"level":"error","message":"GET /api/courses failed","requestId":"r-1","error":"Error: SQLSTATE 22P02",...}
 *   logFailure(defaultLogger, 'GET /api/courses failed', error, { requestId: 'r-1' });
 * }
 * ```
 * @group Runtime
 */
export function logFailure(
  logger: Pick<Logger, 'warn' | 'error'>,
  message: string,
  error: unknown,
  fields: LogFields = {},
): void {
  const unavailable = classifyStorageFailure(error);
  if (unavailable !== undefined) {
    logger.warn(`${message}: storage unavailable`, {
      ...fields,
      reason: unavailable.reason,
      error: unavailable.message,
    });
    return;
  }
  logger.error(message, { ...fields, error: describeFailure(error) });
}

/** Longest error text a log line carries. */
const MAX_ERROR_TEXT = 300;

/**
 * What a log line says about a failure: its name and first line, cut short. A database error (one
 * with a SQLSTATE `code`) is named by its code alone: PostgreSQL puts values of the statement in
 * some messages (`invalid input syntax for type uuid: "..."`), and those may be tokens or
 * personal data. A driver's `query` and `parameters` fields are never read.
 */
export function describeFailure(error: unknown): string {
  if (!(error instanceof Error))
    return typeof error === 'string' ? 'a string was thrown' : `${typeof error} thrown`;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return `${error.name}: SQLSTATE ${code}`;
  const firstLine = error.message.split(/\r?\n/, 1)[0] ?? '';
  const text = `${error.name}: ${firstLine}`;
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}...` : text;
}
