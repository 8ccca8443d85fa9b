/**
 * Client ID Metadata Documents: resolves an `https` client_id into a public client by fetching and
 * validating the document it names, and caches valid documents within bounds.
 *
 * Steps for each client_id: cache → join a fetch already running for it → check the URL (§3, raw
 * string) → recent failure of this URL, or of its host, answered from memory → admission (a global
 * cap on concurrent fetches, a share of it and a budget per minute for the requesting client
 * address, a budget of fetches per host and minute) → fetch → status 200 only (§4) → size → media
 * type → validate (§4.1) → cache per `Cache-Control` (§4.4).
 *
 * Outbound fetches are bounded (`fetch-bounds.ts`) so that inbound junk cannot turn the server into
 * a relay (ABU-04): a failure is remembered for `failureCacheSeconds` (30 s) per URL, and per host
 * when no response came back, so 300 junk requests naming one unreachable document cost one fetch. Such a failure
 * is never a cached *document* (§4.4, CIMD-09): it expires quickly, and a fixed document works once
 * it has (ATK-41). Documents that were valid before skip the host's budget and failures, so a
 * stranger's junk naming other URLs of a host cannot keep that host's real clients out.
 * @see draft-ietf-oauth-client-id-metadata-document-01
 * @module
 */
import { type Clock, type Logger, nowSeconds, silentLogger } from '../core/context.js';
import { DEFAULTS } from '../defaults.js';
import type { ClientIdMetadataDocumentOptions } from '../options.js';
import type { SignatureAlgorithm } from '../protocol/public-jwk.js';
import type { ClientResolver } from '../server-context.js';
import type { ClientRecord } from '../storage/types.js';
import { type CacheLifetimeBounds, cacheLifetimeSeconds, ExpiringLruCache } from './cache.js';
import { type ClientIdUrl, checkClientIdUrl } from './client-id.js';
import { validateMetadataDocument } from './document.js';
import { ClientMetadataDocumentError, isClientMetadataDocumentError } from './errors.js';
import { type AdmittedFetch, createFetchBounds } from './fetch-bounds.js';
import type { MetadataFetcher, MetadataFetchResponse } from './fetcher.js';
import { createNodeMetadataFetcher, parseAllowedAddresses } from './node-fetcher.js';

/**
 * Options of {@link createClientIdMetadataResolver}: the server's CIMD options plus its runtime.
 *
 * @example
 * ```ts
 * import { createClientIdMetadataResolver, type ClientIdMetadataResolverOptions } from 'portcullis';
 *
 * const options: ClientIdMetadataResolverOptions = { allowedHosts: ['agents.example.com'], logger: console };
 * const resolve = createClientIdMetadataResolver(options);
 * ```
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4.4
 * @group Client ID Metadata Documents
 */
export interface ClientIdMetadataResolverOptions extends Omit<ClientIdMetadataDocumentOptions, 'enabled'> {
  /** Clock for cache lifetimes, epoch milliseconds. Default `Date.now`. */
  clock?: Clock;
  /** Where refusals are logged (at `info`, with the host and the problem code). Default: silent. */
  logger?: Logger;
  /**
   * The algorithms the keys of a `private_key_jwt` document may use (`jwks`, `jwks_uri`); `null`
   * refuses such documents, as a server without `private_key_jwt` must. Default: every supported one.
   */
  keyAlgorithms?: readonly SignatureAlgorithm[] | null;
}

/** Defaults of {@link ClientIdMetadataDocumentOptions}: the server's, also when used on its own. */
const CIMD_DEFAULTS = DEFAULTS.clientIdMetadataDocuments;

const URL_SHAPED = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
const JSON_MEDIA_TYPE = /^application\/(?:[A-Za-z0-9.!#$&^_-]+\+)?json$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function statusProblem(status: number): ClientMetadataDocumentError {
  if (status >= 300 && status < 400) {
    return new ClientMetadataDocumentError(
      'bad_status',
      `the client_id URL answered HTTP ${status}, a redirect, which is not followed`,
    );
  }
  return new ClientMetadataDocumentError(
    'bad_status',
    `the client_id URL answered HTTP ${status} instead of 200`,
  );
}

/** Checks a fetched response and turns its body into client metadata. */
function readDocument(
  clientId: string,
  response: MetadataFetchResponse,
  maxBytes: number,
  maxRedirectUris: number,
  keyRules: Parameters<typeof validateMetadataDocument>[3],
): ClientRecord['metadata'] {
  if (response.status !== 200) throw statusProblem(response.status);
  if (response.body.byteLength > maxBytes) {
    throw new ClientMetadataDocumentError('too_large', `the document is larger than ${maxBytes} bytes`);
  }
  const type = response.contentType?.split(';')[0]?.trim().toLowerCase();
  if (type === undefined || !JSON_MEDIA_TYPE.test(type)) {
    throw new ClientMetadataDocumentError(
      'invalid_document',
      'the document is not served as application/json',
    );
  }
  let text: string;
  try {
    text = utf8.decode(response.body);
  } catch {
    throw new ClientMetadataDocumentError('invalid_document', 'the document is not valid UTF-8');
  }
  return validateMetadataDocument(clientId, text, maxRedirectUris, keyRules);
}

/**
 * Creates the resolver the server consults for `https` client ids. Pass it to the server through
 * `clientIdMetadataDocuments: { enabled: true }` (the server builds it), or call it yourself.
 *
 * @param options - timeouts, size cap, cache bounds, allowed hosts, and the fetcher or its settings
 * @returns a {@link ClientResolver}: the client for an `https` client_id, `null` for an id that is
 * not a URL (a generated id, for storage to answer). Its second argument, the rate-limit key of the
 * request naming the id, is what the per-address fetch budget counts under (none: not counted).
 * @throws TypeError at creation when `allowSpecialUseAddresses` has an invalid entry
 * @throws ClientMetadataDocumentError (`invalid_client`, 400) from the returned resolver, with
 * `problem` and `reason`, whenever the URL, the fetch or the document is unusable
 * @throws OAuthError from the returned resolver: `too_many_requests` (429) past the address's share
 * or budget, `temporarily_unavailable` (503) past the global cap or the host's budget, with `Retry-After`
 * @see draft-ietf-oauth-client-id-metadata-document-01 §3, §4, §4.1, §4.4, §6.5, §6.6
 * @example
 * ```ts
 * import { createClientIdMetadataResolver } from 'portcullis';
 *
 * const resolve = createClientIdMetadataResolver({ allowedHosts: ['*.example.com'] });
 * const client = await resolve('https://app.example.com/oauth/client.json');
 * console.log(client?.metadata.client_name);
 * ```
 * @group Client ID Metadata Documents
 */
export function createClientIdMetadataResolver(
  options: ClientIdMetadataResolverOptions = {},
): ClientResolver {
  const clock = options.clock ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const timeoutMs = options.timeoutMs ?? CIMD_DEFAULTS.timeoutMs;
  const maxBytes = options.maxBytes ?? CIMD_DEFAULTS.maxBytes;
  const maxRedirectUris = options.maxRedirectUris ?? CIMD_DEFAULTS.maxRedirectUris;
  const bounds: CacheLifetimeBounds = {
    defaultTtlSeconds: options.cache?.defaultTtlSeconds ?? CIMD_DEFAULTS.cache.defaultTtlSeconds,
    minTtlSeconds: options.cache?.minTtlSeconds ?? CIMD_DEFAULTS.cache.minTtlSeconds,
    maxTtlSeconds: options.cache?.maxTtlSeconds ?? CIMD_DEFAULTS.cache.maxTtlSeconds,
  };
  const maxEntries = options.cache?.maxEntries ?? CIMD_DEFAULTS.cache.maxEntries;
  const allowedAddresses = parseAllowedAddresses(options.allowSpecialUseAddresses);
  const keyRules =
    options.keyAlgorithms === null
      ? null
      : {
          allowedAddresses,
          ...(options.keyAlgorithms === undefined ? {} : { algorithms: options.keyAlgorithms }),
        };
  const fetcher: MetadataFetcher =
    options.fetcher ??
    createNodeMetadataFetcher({
      ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
      ...(options.allowSpecialUseAddresses === undefined
        ? {}
        : { allowSpecialUseAddresses: options.allowSpecialUseAddresses }),
      ...(options.ca === undefined ? {} : { ca: options.ca }),
      ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
      ...(options.userAgent === undefined ? {} : { userAgent: options.userAgent }),
    });
  const cache = new ExpiringLruCache<ClientRecord>(maxEntries);
  // One fetch per client_id at a time: a burst of authorizations for one client costs one request.
  const inflight = new Map<string, Promise<ClientRecord>>();
  const fetchBounds = createFetchBounds({
    maxConcurrent: options.maxConcurrentFetches ?? CIMD_DEFAULTS.maxConcurrentFetches,
    perAddressConcurrent:
      options.maxConcurrentFetchesPerAddress ?? CIMD_DEFAULTS.maxConcurrentFetchesPerAddress,
    perAddressPerMinute: options.addressFetchesPerMinute ?? CIMD_DEFAULTS.addressFetchesPerMinute,
    perHostPerMinute: options.hostFetchesPerMinute ?? CIMD_DEFAULTS.hostFetchesPerMinute,
    failureMs: (options.failureCacheSeconds ?? CIMD_DEFAULTS.failureCacheSeconds) * 1000,
    busySeconds: timeoutMs / 1000,
  });

  function refused(error: ClientMetadataDocumentError, host: string | undefined): void {
    // A host that resolves to a special-use address may be someone probing the network.
    const level = error.problem === 'forbidden_address' ? 'warn' : 'info';
    logger[level]('client metadata document refused', {
      problem: error.problem,
      reason: error.reason,
      ...(host === undefined ? {} : { host }),
    });
  }

  async function load(target: ClientIdUrl, admitted: AdmittedFetch): Promise<ClientRecord> {
    try {
      let response: MetadataFetchResponse;
      try {
        response = await fetcher({ target, maxBytes, timeoutMs });
      } catch (error) {
        if (isClientMetadataDocumentError(error)) throw error;
        throw new ClientMetadataDocumentError('fetch_failed', 'the document could not be fetched', error);
      }
      const metadata = readDocument(target.clientId, response, maxBytes, maxRedirectUris, keyRules);
      const record: ClientRecord = {
        clientId: target.clientId,
        metadata,
        origin: 'metadata_document',
        createdAt: nowSeconds(clock),
      };
      const now = clock();
      admitted.succeeded(now);
      const ttl = cacheLifetimeSeconds(response.cacheControl, bounds);
      if (ttl > 0 && maxEntries > 0) cache.set(target.clientId, record, now + ttl * 1000);
      return record;
    } catch (error) {
      const refusal = isClientMetadataDocumentError(error) ? error : undefined;
      if (refusal !== undefined) refused(refusal, target.host);
      admitted.failed(refusal, clock());
      throw error;
    }
  }

  return async (clientId, clientAddress) => {
    // Ids that are not URLs (generated ones) are not ours; other URL schemes are refused with a reason.
    if (!URL_SHAPED.test(clientId)) return null;
    const now = clock();
    const cached = cache.get(clientId, now);
    if (cached !== undefined) return cached;
    const running = inflight.get(clientId);
    if (running !== undefined) return running;
    let target: ClientIdUrl;
    try {
      target = checkClientIdUrl(clientId, options.allowedHosts, allowedAddresses);
    } catch (error) {
      if (isClientMetadataDocumentError(error)) refused(error, undefined);
      throw error;
    }
    // A recent failure is answered from memory (no fetch, no log line); a fetch past the bounds is a 503.
    const started = load(target, fetchBounds.admit(target, now, clientAddress));
    inflight.set(clientId, started);
    // Forget the request once settled: a failure is remembered only by the bounds, briefly.
    const forget = () => {
      if (inflight.get(clientId) === started) inflight.delete(clientId);
    };
    started.then(forget, forget);
    return started;
  };
}
