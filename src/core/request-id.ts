/**
 * Request ids: the id a failed request is logged under, sent back to the client in
 * `X-Request-Id`, so that an operator can find the log line a user reports. A proxy's id is kept
 * when it is a plain token; anything else gets a fresh random one.
 * @module
 */
import type { Runtime } from './context.js';
import type { RandomSource } from './crypto.js';
import { logFailure } from './errors.js';
import { type OAuthRequest, type OAuthResponse, splitUrl } from './http.js';

/** What an incoming `X-Request-Id` may look like to be reused: no spaces, quotes or control characters. */
const PLAIN_ID = /^[A-Za-z0-9._:-]{8,64}$/;

/** The header that carries the id, both ways. */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * The id of a request: its `X-Request-Id` when a proxy set a plain one (8 to 64 letters, digits,
 * `.`, `_`, `:` or `-`), otherwise 16 random hex digits.
 */
export function requestIdOf(
  request: Pick<OAuthRequest, 'headers'> | undefined,
  random: RandomSource,
): string {
  const given = request?.headers[REQUEST_ID_HEADER];
  if (given !== undefined && PLAIN_ID.test(given)) return given;
  return Array.from(random(8), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * The response with the request id in `X-Request-Id`. The body is left as it is: the members of
 * an OAuth error are those of RFC 6749 §5.2, and clients compare some of them.
 */
export function withRequestId(response: OAuthResponse, id: string): OAuthResponse {
  return { ...response, headers: { ...response.headers, [REQUEST_ID_HEADER]: id } };
}

/**
 * Logs a request that failed with a 5xx once ({@link logFailure}), under its request id, and
 * returns the id for the response ({@link withRequestId}).
 */
export function logRequestFailure(
  runtime: Pick<Runtime, 'logger' | 'random'>,
  request: OAuthRequest,
  message: string,
  error: unknown,
): string {
  const requestId = requestIdOf(request, runtime.random);
  logFailure(runtime.logger, message, error, { path: splitUrl(request.url).path, requestId });
  return requestId;
}
