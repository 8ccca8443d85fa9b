/**
 * The client identifier URL of a Client ID Metadata Document (draft §3), checked on the raw
 * string before anything is fetched.
 * @see draft-ietf-oauth-client-id-metadata-document-01 §3, §6.5
 * @module
 */
import type { AddressRange } from '../protocol/ip-address.js';
import { type HttpsUrlParts, parseHttpsUrl } from '../protocol/url.js';
import { ClientMetadataDocumentError } from './errors.js';
import { addressRefusal } from './special-use.js';

/**
 * A client_id URL that passed the client_id URL checks (§3): what a {@link MetadataFetcher} is
 * asked to fetch, with the URL's raw parts (no WHATWG normalisation).
 *
 * @example
 * ```ts
 * import type { ClientIdUrl, MetadataFetcher } from 'portcullis';
 *
 * // An egress-proxy fetcher reads the host it may connect to from the checked URL.
 * declare function viaProxy(target: ClientIdUrl, timeoutMs: number): ReturnType<MetadataFetcher>;
 * const fetcher: MetadataFetcher = ({ target, timeoutMs }) => viaProxy(target, timeoutMs);
 * ```
 * @see draft-ietf-oauth-client-id-metadata-document-01 §3
 * @group Client ID Metadata Documents
 */
export interface ClientIdUrl extends HttpsUrlParts {
  /** The client_id, unchanged. */
  readonly clientId: string;
}

function invalid(problem: string): ClientMetadataDocumentError {
  return new ClientMetadataDocumentError('invalid_client_id', `the client_id URL ${problem}`);
}

/**
 * True when `host` is allowed by `allowedHosts`: an exact entry, or an entry `*.example.com` for
 * any name below `example.com` (not `example.com` itself).
 */
function hostAllowed(host: string, allowedHosts: readonly string[]): boolean {
  for (const entry of allowedHosts) {
    const pattern = entry.toLowerCase();
    if (pattern.startsWith('*.')) {
      if (host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1) return true;
    } else if (host === pattern) {
      return true;
    }
  }
  return false;
}

/**
 * Checks a client_id URL: https, a lower-case host, a path naming the document, no fragment, no
 * user info, no `.`/`..` segments, a port of 1-65535 other than the default 443 written out (two
 * spellings of one document would be two clients), no numeric host forms, and no IP literal in a
 * special-use range. A query is allowed (§3 only discourages it).
 *
 * @param clientId - the client_id as received, compared later byte for byte with the document's
 * @param allowedHosts - when set, the only hosts (or `*.suffix` patterns) accepted
 * @param allowedAddresses - special-use ranges the host exempts
 * @returns the URL's raw parts
 * @throws ClientMetadataDocumentError `invalid_client_id`, `host_not_allowed` or `forbidden_address`
 * @see draft-ietf-oauth-client-id-metadata-document-01 §3, §6.5
 * @example
 * ```ts
 * checkClientIdUrl('https://app.example/client.json', undefined, []).host; // 'app.example'
 * checkClientIdUrl('https://app.example/a/../b', undefined, []); // throws: . or .. path segments
 * ```
 */
export function checkClientIdUrl(
  clientId: string,
  allowedHosts: readonly string[] | undefined,
  allowedAddresses: readonly AddressRange[],
): ClientIdUrl {
  const parsed = parseHttpsUrl(clientId);
  if (!parsed.ok) throw invalid(parsed.problem);
  const url = parsed.url;
  if (url.hostKind === 'name' && url.host !== url.host.toLowerCase())
    throw invalid('must have a lower-case host');
  if (url.path === '' || url.path === '/')
    throw invalid('must have a path naming the document, such as /client.json');
  if (url.port === 443) throw invalid('must not spell out the default port :443');
  if (allowedHosts !== undefined && !hostAllowed(url.host, allowedHosts)) {
    throw new ClientMetadataDocumentError(
      'host_not_allowed',
      `this server does not accept metadata documents from ${url.host}`,
    );
  }
  if (url.hostKind !== 'name') {
    const refusal = addressRefusal(url.host, allowedAddresses);
    if (refusal !== undefined) {
      // Read from the string alone, so saying why reveals nothing about the network.
      throw new ClientMetadataDocumentError(
        'forbidden_address',
        `the client_id host is a ${refusal} address`,
        undefined,
        true,
      );
    }
  }
  return { clientId, ...url };
}
