/**
 * Resolution of a client's public keys for `private_key_jwt`: registered `jwks` as they are, and a
 * `jwks_uri` fetched through the SSRF-safe, bounded {@link MetadataFetcher}, with a bounded cache
 * and at most one refetch per client per interval when no known key verifies (the client rotated).
 * Fetch failures are reported without network detail (status, address, timing): the reasons go to
 * the logger, and a failure is remembered for one interval.
 * @see RFC 7523 §3, RFC 7517 §5, draft-ietf-oauth-client-id-metadata-document-01 §6.5 and §6.6
 * @module
 */
import { cacheLifetimeSeconds, ExpiringLruCache } from '../cimd/cache.js';
import type { ClientIdUrl } from '../cimd/client-id.js';
import type { MetadataFetcher, MetadataFetchResponse } from '../cimd/fetcher.js';
import { parseAllowedAddresses } from '../cimd/node-fetcher.js';
import { type Clock, type Logger, silentLogger } from '../core/context.js';
import { OAuthError } from '../core/errors.js';
import { DEFAULTS } from '../defaults.js';
import {
  CLIENT_JWKS_DEFAULTS,
  type ClientJwks,
  type ClientJwksRules,
  clientJwksProblem,
  jwksUriProblem,
} from './client-jwks.js';
import type { PublicJwk } from './public-jwk.js';

/**
 * The least time between two fetches of one client's key set, in seconds, and how long a failure
 * is remembered: a rotated key is picked up within a minute, and no client can make the server
 * fetch more often. The resolver's own setting, not an option of the server.
 */
const REFETCH_INTERVAL_SECONDS = 60;

// A jwks_uri is fetched within the bounds of a metadata document: the same time budget and cache.
const DOCUMENT_BOUNDS = DEFAULTS.clientIdMetadataDocuments;

/**
 * Where a client's keys come from: its id and its validated `jwks` or `jwks_uri`.
 *
 * @example
 * ```ts
 * import type { ClientKeySource } from 'portcullis';
 *
 * const source: ClientKeySource = {
 *   clientId: 'https://agent.example.com/oauth/client.json',
 *   jwksUri: 'https://agent.example.com/.well-known/jwks.json',
 * };
 * ```
 * @see RFC 7591 §2
 * @group Client Authentication (RFC 7523)
 */
export interface ClientKeySource {
  /** The client_id; the cache and the refetch budget are per client. */
  readonly clientId: string;
  /** Registered keys, by value. */
  readonly jwks?: ClientJwks | undefined;
  /** Registered key set URL. */
  readonly jwksUri?: string | undefined;
  /** The rate-limit key of the request being authenticated: a fetch counts against its budget. */
  readonly clientAddress?: string | undefined;
}

/**
 * The keys of one client. `refresh: false` answers from the cache when it can; `refresh: true` is
 * asked after no key verified, and refetches `jwks_uri` unless the client's set was fetched less
 * than the refetch interval ago (then the very same array is returned again: nothing new).
 *
 * @example
 * ```ts
 * import type { ClientKeyLookup, PublicJwk } from 'portcullis';
 *
 * declare const registered: PublicJwk[];
 * const fixed: ClientKeyLookup = async () => registered; // keys that never change
 * ```
 * @see RFC 7523 §3
 * @group Client Authentication (RFC 7523)
 */
export type ClientKeyLookup = (refresh: boolean) => Promise<readonly PublicJwk[]>;

/**
 * Options of {@link createClientKeyResolver}.
 *
 * @example
 * ```ts
 * import { createClientKeyResolver, createNodeMetadataFetcher, type ClientKeyResolverOptions } from 'portcullis';
 *
 * const options: ClientKeyResolverOptions = { fetcher: createNodeMetadataFetcher(), refetchIntervalSeconds: 30 };
 * const resolver = createClientKeyResolver(options);
 * ```
 * @see RFC 7523 §3, draft-ietf-oauth-client-id-metadata-document-01 §6.6
 * @group Client Authentication (RFC 7523)
 */
export interface ClientKeyResolverOptions {
  /** Performs the GET; the same SSRF-safe, bounded fetcher as metadata documents. */
  readonly fetcher: MetadataFetcher;
  /**
   * Special-use ranges (CIDR or single addresses) a `jwks_uri` IP literal may name; the fetcher vets
   * resolved names itself. Default none. Use the same list as the fetcher's.
   */
  readonly allowSpecialUseAddresses?: readonly string[];
  /** Clock, epoch milliseconds. Default `Date.now`. */
  readonly clock?: Clock;
  /** Where fetch failures are logged, with their reason (at `info`). Default: silent. */
  readonly logger?: Logger;
  /** Algorithms, key count and size of a published set. */
  readonly rules?: ClientJwksRules;
  /** Total time budget of one fetch, in milliseconds. Default: a metadata document's (5000). */
  readonly timeoutMs?: number;
  /** The least time between two fetches of one client's set, in seconds; failures are remembered as long. Default 60. */
  readonly refetchIntervalSeconds?: number;
  /**
   * Cache lifetime bounds (from `Cache-Control`); `no-store` still keeps a set `minTtlSeconds`.
   * Defaults: a metadata document's, {@link DEFAULTS}`.clientIdMetadataDocuments.cache` (300 / 60 /
   * 3600 / 1000).
   */
  readonly cache?: {
    /** Lifetime without `Cache-Control: max-age`, seconds. */
    readonly defaultTtlSeconds?: number;
    /** The least lifetime, seconds (also for `no-store`: bounds the fetches a client can cause). */
    readonly minTtlSeconds?: number;
    /** The longest lifetime, seconds. */
    readonly maxTtlSeconds?: number;
    /** The most clients whose sets are kept. */
    readonly maxEntries?: number;
  };
}

/**
 * Resolves clients' keys. See {@link createClientKeyResolver}.
 *
 * @example
 * ```ts
 * import type { ClientKeyResolver } from 'portcullis';
 *
 * declare const resolver: ClientKeyResolver;
 * const keys = await resolver.lookup({ clientId: 'c1', jwksUri: 'https://c1.example/jwks.json' })(false);
 * ```
 * @see RFC 7523 §3
 * @group Client Authentication (RFC 7523)
 */
export interface ClientKeyResolver {
  /** The lookup of one client's keys, for one verification. */
  lookup(source: ClientKeySource): ClientKeyLookup;
}

type KeysEntry = {
  readonly kind: 'keys';
  readonly keys: readonly PublicJwk[];
  readonly fetchedAt: number;
  readonly expiresAt: number;
};
type Entry = KeysEntry | { readonly kind: 'failed'; readonly fetchedAt: number };

const JSON_MEDIA_TYPE = /^application\/(?:[A-Za-z0-9.!#$&^_-]+\+)?json$/;
/** What the fetch bounds answer when they turn a fetch away (`cimd/fetch-bounds.ts`). */
const BOUNDS_REFUSALS: ReadonlySet<string> = new Set(['too_many_requests', 'temporarily_unavailable']);
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The one description of every jwks_uri failure: nothing about the network, nothing to probe with. */
function unusable(cause?: unknown): OAuthError {
  return new OAuthError(
    'invalid_client',
    "the client's jwks_uri could not be fetched or did not hold a usable key set",
    cause === undefined ? {} : { cause },
  );
}

/**
 * Creates the resolver of clients' public keys. Registered `jwks` are returned as they are; a
 * `jwks_uri` is fetched through `fetcher` (one fetch per client at a time), cached per
 * `Cache-Control` within bounds, refetched at most once per `refetchIntervalSeconds` per client when
 * no key verified (the client rotated its keys), and a failure is remembered for the same interval
 * so a broken or hostile URL cannot make every request an outbound fetch.
 *
 * @param options - the fetcher, clock, logger, bounds
 * @returns the resolver
 * @throws TypeError at creation when `allowSpecialUseAddresses` has an invalid entry
 * @throws OAuthError `invalid_client` (400) from a lookup whose `jwks_uri` cannot be fetched or holds
 * no usable key set; the description names no network detail, the logger gets the reason
 * @see RFC 7523 §3, RFC 7517 §5, draft-ietf-oauth-client-id-metadata-document-01 §6.5 and §6.6
 * @example
 * ```ts
 * import { createClientKeyResolver, createNodeMetadataFetcher } from 'portcullis';
 *
 * const resolver = createClientKeyResolver({ fetcher: createNodeMetadataFetcher() });
 * const lookup = resolver.lookup({ clientId: 'agent', jwksUri: 'https://agent.example.com/jwks.json' });
 * const keys = await lookup(false);
 * ```
 * @group Client Authentication (RFC 7523)
 */
export function createClientKeyResolver(options: ClientKeyResolverOptions): ClientKeyResolver {
  const clock = options.clock ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const rules: ClientJwksRules = options.rules ?? {};
  const maxBytes = rules.maxBytes ?? CLIENT_JWKS_DEFAULTS.maxBytes;
  const timeoutMs = options.timeoutMs ?? DOCUMENT_BOUNDS.timeoutMs;
  const intervalMs = (options.refetchIntervalSeconds ?? REFETCH_INTERVAL_SECONDS) * 1000;
  const bounds = {
    defaultTtlSeconds: options.cache?.defaultTtlSeconds ?? DOCUMENT_BOUNDS.cache.defaultTtlSeconds,
    minTtlSeconds: options.cache?.minTtlSeconds ?? DOCUMENT_BOUNDS.cache.minTtlSeconds,
    maxTtlSeconds: options.cache?.maxTtlSeconds ?? DOCUMENT_BOUNDS.cache.maxTtlSeconds,
  };
  const cache = new ExpiringLruCache<Entry>(options.cache?.maxEntries ?? DOCUMENT_BOUNDS.cache.maxEntries);
  const allowedAddresses = parseAllowedAddresses(options.allowSpecialUseAddresses);
  const inflight = new Map<string, Promise<Entry>>();

  function refused(clientId: string, reason: string, cause?: unknown): never {
    logger.info('client jwks_uri refused', { clientId, reason });
    throw unusable(cause);
  }

  function read(clientId: string, response: MetadataFetchResponse): readonly PublicJwk[] {
    if (response.status !== 200) return refused(clientId, `HTTP status ${response.status}`);
    if (response.body.byteLength > maxBytes) return refused(clientId, `larger than ${maxBytes} bytes`);
    const type = response.contentType?.split(';')[0]?.trim().toLowerCase();
    if (type === undefined || !JSON_MEDIA_TYPE.test(type)) return refused(clientId, 'not served as JSON');
    let value: unknown;
    try {
      value = JSON.parse(utf8.decode(response.body));
    } catch (error) {
      return refused(clientId, 'not valid UTF-8 JSON', error);
    }
    const result = clientJwksProblem(value, 'published', rules);
    if (!result.ok) return refused(clientId, result.problem);
    return result.jwks.keys;
  }

  async function fetchKeys(
    clientId: string,
    target: ClientIdUrl,
    cacheKey: string,
    previous: KeysEntry | undefined,
    clientAddress: string | undefined,
  ): Promise<Entry> {
    const fetchedAt = clock();
    // A fetch the bounds turned away (429/503) says nothing about the URL: not remembered as its
    // failure, or one address over its budget could make a client's keys fail for everyone.
    let turnedAway = false;
    try {
      let response: MetadataFetchResponse;
      try {
        response = await options.fetcher({
          target,
          maxBytes,
          timeoutMs,
          ...(clientAddress === undefined ? {} : { clientAddress }),
        });
      } catch (error) {
        turnedAway = error instanceof OAuthError && BOUNDS_REFUSALS.has(error.code);
        return refused(clientId, turnedAway ? 'the fetch bounds refused it' : 'the fetch failed', error);
      }
      const keys = read(clientId, response);
      const ttlSeconds = Math.max(bounds.minTtlSeconds, cacheLifetimeSeconds(response.cacheControl, bounds));
      const entry: KeysEntry = { kind: 'keys', keys, fetchedAt, expiresAt: fetchedAt + ttlSeconds * 1000 };
      cache.set(cacheKey, entry, entry.expiresAt);
      return entry;
    } catch (error) {
      if (previous !== undefined) {
        // A failed refetch keeps the set it would have replaced, until that set's own expiry.
        const kept: KeysEntry = { ...previous, fetchedAt };
        cache.set(cacheKey, kept, kept.expiresAt);
        return kept;
      }
      // Remembered for one interval: no outbound fetch per request for a broken or hostile URL.
      if (!turnedAway) cache.set(cacheKey, { kind: 'failed', fetchedAt }, fetchedAt + intervalMs);
      throw error;
    }
  }

  function load(
    clientId: string,
    target: ClientIdUrl,
    cacheKey: string,
    previous: KeysEntry | undefined,
    clientAddress: string | undefined,
  ): Promise<Entry> {
    const running = inflight.get(cacheKey);
    if (running !== undefined) return running;
    const started = fetchKeys(clientId, target, cacheKey, previous, clientAddress);
    inflight.set(cacheKey, started);
    const forget = () => {
      if (inflight.get(cacheKey) === started) inflight.delete(cacheKey);
    };
    started.then(forget, forget);
    return started;
  }

  return {
    lookup(source) {
      return async (refresh) => {
        if (source.jwks !== undefined) return source.jwks.keys;
        if (source.jwksUri === undefined) return [];
        const checked = jwksUriProblem(source.jwksUri, allowedAddresses);
        if (!checked.ok) return refused(source.clientId, checked.problem);
        const cacheKey = `${source.clientId}\n${source.jwksUri}`;
        const now = clock();
        const cached = cache.get(cacheKey, now);
        if (cached !== undefined) {
          if (cached.kind === 'failed') throw unusable();
          if (!refresh || now - cached.fetchedAt < intervalMs) return cached.keys;
        }
        const entry = await load(source.clientId, checked.target, cacheKey, cached, source.clientAddress);
        return entry.kind === 'keys' ? entry.keys : [];
      };
    },
  };
}
