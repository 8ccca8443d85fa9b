/**
 * The contract between the metadata document resolver and whatever performs the HTTP GET. The
 * default is `createNodeMetadataFetcher` (node:https, loaded lazily); on runtimes without it, or
 * behind an egress proxy, the host supplies its own.
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4, §6.5, §6.6
 * @module
 */
import type { ClientIdUrl } from './client-id.js';

/**
 * What the resolver asks a fetcher for.
 *
 * @example
 * ```ts
 * import type { MetadataFetcher, MetadataFetchRequest } from 'portcullis';
 *
 * const fetcher: MetadataFetcher = async (request: MetadataFetchRequest) => {
 *   console.log(request.target.clientId, request.maxBytes, request.timeoutMs); // ... 5120 5000
 *   return { status: 404, contentType: undefined, cacheControl: undefined, body: new Uint8Array() };
 * };
 * ```
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4, §6.6
 * @group Client ID Metadata Documents
 */
export interface MetadataFetchRequest {
  /** The client_id URL, already checked by the §3 rules, with its raw parts. */
  readonly target: ClientIdUrl;
  /** Abort once the body exceeds this many bytes. */
  readonly maxBytes: number;
  /** Total time budget for resolving, connecting and reading, in milliseconds. */
  readonly timeoutMs: number;
  /**
   * The rate-limit key of the request that needs the document, when known: the server's fetch
   * bounds count per address with it. A fetcher may ignore it (or log it); it is never sent.
   */
  readonly clientAddress?: string;
}

/**
 * What a fetcher returns: the status, the two headers the resolver reads, and the body. The
 * resolver accepts only `200` with a JSON media type, and caches per `Cache-Control`.
 *
 * @example
 * ```ts
 * import type { MetadataFetchResponse } from 'portcullis';
 *
 * const response: MetadataFetchResponse = {
 *   status: 200,
 *   contentType: 'application/json',
 *   cacheControl: 'max-age=600',
 *   body: new TextEncoder().encode('{"client_id":"https://agent.example.com/client.json"}'),
 * };
 * ```
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4, §4.4
 * @group Client ID Metadata Documents
 */
export interface MetadataFetchResponse {
  /** The HTTP status; only 200 is accepted, and a redirect must be returned as is, not followed. */
  readonly status: number;
  /** `Content-Type` of the response. */
  readonly contentType: string | undefined;
  /** `Cache-Control` of the response. */
  readonly cacheControl: string | undefined;
  /** The body; may be empty for a status other than 200. */
  readonly body: Uint8Array;
  /** The peer address the fetcher connected to, when it knows it (logs, tests). */
  readonly remoteAddress?: string;
}

/**
 * Performs the GET of a metadata document. A fetcher MUST NOT follow redirects (return the 3xx as
 * is), MUST refuse hosts that are or resolve to special-use addresses before connecting, and MUST
 * connect to the address it vetted. It SHOULD stop reading past `maxBytes` and at `timeoutMs`; the
 * resolver re-checks the size. It throws `ClientMetadataDocumentError` for failures it can name;
 * anything else it throws is reported as `fetch_failed` without its message.
 *
 * @example
 * ```ts
 * import type { MetadataFetcher } from 'portcullis';
 *
 * // A test double: every client_id resolves to the same document.
 * const fetcher: MetadataFetcher = async ({ target }) => ({
 *   status: 200,
 *   contentType: 'application/json',
 *   cacheControl: 'max-age=60',
 *   body: new TextEncoder().encode(
 *     JSON.stringify({ client_id: target.clientId, client_name: 'Test', redirect_uris: ['http://127.0.0.1/cb'] }),
 *   ),
 * });
 * ```
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4, §6.5, §6.6
 * @group Client ID Metadata Documents
 */
export type MetadataFetcher = (request: MetadataFetchRequest) => Promise<MetadataFetchResponse>;

/**
 * One address a host name resolves to.
 *
 * @example
 * ```ts
 * import type { ResolvedAddress } from 'portcullis';
 *
 * const answers: ResolvedAddress[] = [
 *   { address: '93.184.215.14', family: 4 },
 *   { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
 * ];
 * ```
 * @see RFC 6890 (special-use addresses the fetcher refuses)
 * @group Client ID Metadata Documents
 */
export interface ResolvedAddress {
  /** The address as text: dotted IPv4 or IPv6, without brackets. */
  readonly address: string;
  /** The address family. */
  readonly family: 4 | 6;
}

/**
 * Resolves a host name to every address it has (all families). The fetcher vets every one of
 * them and connects only to the first.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, type HostLookup, memoryStorage } from 'portcullis';
 *
 * // A fixed table in tests: every name resolves to a test server on loopback.
 * const lookup: HostLookup = async () => [{ address: '127.0.0.1', family: 4 }];
 * await createAuthorizationServer({
 *   issuer: 'http://127.0.0.1:3000',
 *   storage: memoryStorage(),
 *   clientIdMetadataDocuments: { enabled: true, lookup, allowSpecialUseAddresses: ['127.0.0.1'] },
 * });
 * ```
 * @see draft-ietf-oauth-client-id-metadata-document-01 §6.5
 * @group Client ID Metadata Documents
 */
export type HostLookup = (hostname: string) => Promise<readonly ResolvedAddress[]>;
