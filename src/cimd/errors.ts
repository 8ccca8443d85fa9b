/**
 * The error a Client ID Metadata Document client fails with: an {@link OAuthError} (`invalid_client`,
 * 400) whose description reads "the client's metadata document could not be used: <reason>", plus a
 * stable {@link ClientMetadataDocumentProblem} for code and a `reason` for the error page.
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4.3
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

/**
 * A metadata document client could not be used. It is an {@link OAuthError} (`invalid_client`, 400),
 * so the token endpoint answers it as any unknown client; the authorization endpoint shows its
 * description on its 400 page, never redirecting.
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
  /** What went wrong, in words for the error page (never a secret; never the document body). */
  readonly reason: string;

  /**
   * @param problem - the stable code
   * @param reason - the words shown after "the client's metadata document could not be used: "
   * @param cause - the underlying error, for logs only
   */
  constructor(problem: ClientMetadataDocumentProblem, reason: string, cause?: unknown) {
    super(
      'invalid_client',
      `the client's metadata document could not be used: ${reason}`,
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
