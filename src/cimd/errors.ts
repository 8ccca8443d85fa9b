/**
 * The error a Client ID Metadata Document client fails with: an {@link OAuthError} (`invalid_client`,
 * 400) whose description reads "the client's metadata document could not be used: <reason>", plus a
 * stable {@link ClientMetadataDocumentProblem} for code and a `reason` for logs.
 *
 * What the caller learns is limited to what it could learn without this server: when no response
 * came back (`fetch_failed`, `timeout`, `forbidden_address` after resolving), the description says
 * only "the document could not be fetched", so that client ids cannot be used to map which ports
 * answer or which host names resolve from where the server stands. The detailed `reason` goes to
 * the log. Problems with a response a public host sent (status, size, content) are described.
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4.3, §6.5
 * @module
 */
import { OAuthError } from '../core/errors.js';

/**
 * Why a metadata document client was refused, as a stable code:
 * - `invalid_client_id`: the client_id URL breaks §3 (scheme, path, fragment, user info, dot segments, port);
 * - `host_not_allowed`: the host is outside the configured `allowedHosts`;
 * - `forbidden_address`: the host is, or resolves to, a special-use address (§6.5);
 * - `fetch_failed`: DNS, connection or TLS failure;
 * - `timeout`: the connect or total time budget ran out;
 * - `bad_status`: an HTTP status other than 200, redirects included (§4);
 * - `too_large`: the body exceeds the size cap (§6.6);
 * - `invalid_document`: not JSON, not an object, or metadata that breaks §4.1 or this server's rules.
 *
 * The description of `fetch_failed`, `timeout` and `forbidden_address` (from resolving a name) is
 * the same generic text; see {@link ClientMetadataDocumentError.reason} for the detail.
 *
 * @example
 * ```ts
 * import type { ClientMetadataDocumentProblem } from 'portcullis';
 *
 * // Problems worth an alert: someone may be probing your network through client ids.
 * const suspicious: ReadonlySet<ClientMetadataDocumentProblem> = new Set(['forbidden_address', 'host_not_allowed']);
 * ```
 * @see draft-ietf-oauth-client-id-metadata-document-01 §3, §4, §4.1, §6.5, §6.6
 * @group Client ID Metadata Documents
 */
export type ClientMetadataDocumentProblem =
  | 'invalid_client_id'
  | 'host_not_allowed'
  | 'forbidden_address'
  | 'fetch_failed'
  | 'timeout'
  | 'bad_status'
  | 'too_large'
  | 'invalid_document';

/** Problems where no response came back: their detail would map the server's network for strangers. */
const UNDISCLOSED: ReadonlySet<ClientMetadataDocumentProblem> = new Set([
  'fetch_failed',
  'timeout',
  'forbidden_address',
]);

/** The description clients get for a problem whose detail stays in the log. */
export const UNDISCLOSED_REASON = 'the document could not be fetched';

/**
 * A metadata document client could not be used. It is an {@link OAuthError} (`invalid_client`, 400),
 * so the token endpoint answers it as any unknown client; the authorization endpoint shows its
 * description on its 400 page, never redirecting. For `fetch_failed`, `timeout` and
 * `forbidden_address` the description is generic ("the document could not be fetched") unless
 * `disclose` is set (a refusal read from the client_id string alone, such as an IP literal).
 *
 * @example
 * ```ts
 * import { ClientMetadataDocumentError, createClientIdMetadataResolver } from 'portcullis';
 *
 * const resolveClient = createClientIdMetadataResolver();
 * try {
 *   await resolveClient('https://app.example/client.json');
 * } catch (error) {
 *   if (error instanceof ClientMetadataDocumentError) console.log(error.problem, error.reason);
 * }
 * ```
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4.3
 * @group Client ID Metadata Documents
 */
export class ClientMetadataDocumentError extends OAuthError {
  /** The stable code of the failure. */
  readonly problem: ClientMetadataDocumentProblem;
  /**
   * What went wrong, in words for logs (never a secret; never the document body). The description
   * sent to the client repeats it, except where it would reveal network detail (see the class).
   */
  readonly reason: string;

  /**
   * @param problem - the stable code
   * @param reason - what went wrong, for logs and, where harmless, the description
   * @param cause - the underlying error, for logs only
   * @param disclose - describe a `fetch_failed`/`timeout`/`forbidden_address` in full anyway
   * (only for what the client_id string alone shows)
   */
  constructor(problem: ClientMetadataDocumentProblem, reason: string, cause?: unknown, disclose = false) {
    const shown = disclose || !UNDISCLOSED.has(problem) ? reason : UNDISCLOSED_REASON;
    super(
      'invalid_client',
      `the client's metadata document could not be used: ${shown}`,
      cause === undefined ? {} : { cause },
    );
    this.problem = problem;
    this.reason = reason;
  }
}

/**
 * True when `value` is a {@link ClientMetadataDocumentError}, also across bundle copies.
 *
 * @param value - anything thrown
 * @returns whether it is a metadata document failure
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4.3
 * @example
 * ```ts
 * import { isClientMetadataDocumentError } from 'portcullis';
 *
 * function pageText(error: unknown): string {
 *   return isClientMetadataDocumentError(error) ? (error.description ?? error.reason) : 'unknown client';
 * }
 * ```
 * @group Client ID Metadata Documents
 */
export function isClientMetadataDocumentError(value: unknown): value is ClientMetadataDocumentError {
  return (
    value instanceof ClientMetadataDocumentError ||
    (value instanceof Error &&
      value.name === 'OAuthError' &&
      typeof (value as ClientMetadataDocumentError).problem === 'string' &&
      typeof (value as ClientMetadataDocumentError).reason === 'string')
  );
}
