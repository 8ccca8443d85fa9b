/**
 * What handlers share: the resolved configuration, the key store, the clock, the event emitter and
 * client lookup. Built once per server.
 * @module
 */
import type { ServerConfig } from './config.js';
import { nowSeconds } from './core/context.js';
import type { AuthorizationServerEvent } from './core/events.js';
import { RecentlyIssued } from './grants/recently-issued.js';
import type { KeyStore } from './keys/key-store.js';
import type { ClientKeyResolver } from './protocol/client-keys.js';
import type { ReplayStore } from './protocol/replay-store.js';
import { type AccessTokenVerifier, storageVerifier } from './resource-server/verifier.js';
import type {
  AuthorizationCodeRecord,
  ClientRecord,
  PendingAuthorizationRecord,
  RefreshTokenRecord,
} from './storage/types.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An event without its timestamp (added when emitted). */
export type EventPayload = DistributiveOmit<AuthorizationServerEvent, 'at'>;

/**
 * Resolves a `client_id` that is not in storage (Client ID Metadata Documents plug in here).
 * Returns `null` for an id it does not handle; throws an `OAuthError` (`invalid_client`) to refuse.
 * `clientAddress` is the rate-limit key of the request that names the id (when known): the budget
 * of outbound fetches a request may cause is kept per address.
 *
 * @example
 * ```ts
 * import { type ClientResolver, createClientIdMetadataResolver } from 'portcullis';
 *
 * const resolve: ClientResolver = createClientIdMetadataResolver({ allowedHosts: ['*.example.com'] });
 * const client = await resolve('https://agent.example.com/client.json');
 * console.log(client?.origin); // 'metadata_document'
 * ```
 * @see draft-ietf-oauth-client-id-metadata-document-01 §3, §4
 * @group Client ID Metadata Documents
 */
export type ClientResolver = (clientId: string, clientAddress?: string) => Promise<ClientRecord | null>;

/** The state every handler reads. */
export interface ServerContext {
  readonly config: ServerConfig;
  readonly keys: KeyStore;
  /** Verifies this server's access tokens against its storage (UserInfo, guards). */
  readonly verifier: AccessTokenVerifier;
  /**
   * Where used one-time values (client assertion and DPoP proof `jti`s) are recorded: the
   * storage's `replay` aggregate, shared by every instance on that storage.
   */
  readonly replayStore: ReplayStore;
  /** The public keys of `private_key_jwt` clients (`jwks`, or `jwks_uri` fetched and cached). */
  readonly clientKeys: ClientKeyResolver | undefined;
  /** Epoch seconds from the configured clock. */
  now(): number;
  /** Emits an audit event; listener errors are logged, never propagated. */
  emit(event: EventPayload): void;
  /**
   * A client by id: configured clients first, then any external resolver (`https` ids), then
   * storage, whose records are reused for `clientCacheSeconds`. `clientAddress`, the rate-limit key
   * of the request naming the id, is passed to the external resolver (its per-address fetch budget).
   */
  getClient(clientId: string, clientAddress?: string): Promise<ClientRecord | null>;
  /**
   * {@link ServerContext.getClient}, saying whether storage was read for it (`false` for a
   * configured client, a cached record or an id remembered as unknown): client authentication
   * reads storage once on a failure that did not, so that its timing does not tell cached,
   * configured and unknown ids apart.
   */
  lookupClient(clientId: string, clientAddress?: string): Promise<ClientLookup>;
  /** Drops a client from the cache of {@link ServerContext.getClient}: call it after changing the client in storage. */
  forgetClient(clientId: string): void;
  /**
   * The codes and refresh tokens this server issued and nobody presented yet, and the pending
   * authorizations whose consent page it showed and nobody answered yet (`grants/recently-issued.ts`).
   */
  readonly recentlyIssued: {
    readonly codes: RecentlyIssued<AuthorizationCodeRecord>;
    readonly refreshTokens: RecentlyIssued<RefreshTokenRecord>;
    readonly pendingAuthorizations: RecentlyIssued<PendingAuthorizationRecord>;
  };
}

/** What {@link ServerContext.lookupClient} found, and whether it read storage to find it. */
export interface ClientLookup {
  readonly client: ClientRecord | null;
  readonly readStorage: boolean;
}

/** Entries the client cache holds at most (and, apart, the ids found unknown); the oldest goes first. */
const CLIENT_CACHE_MAX_ENTRIES = 10_000;
/** Longest unknown id remembered: generated ids are 43 characters; longer junk is not kept. */
const MAX_REMEMBERED_UNKNOWN_ID = 256;

interface CachedClient {
  readonly client: ClientRecord;
  /** Epoch milliseconds. */
  readonly until: number;
}

/** Builds the shared context. */
export function createServerContext(
  config: ServerConfig,
  keys: KeyStore,
  external?: ClientResolver,
  clientKeys?: ClientKeyResolver,
): ServerContext {
  const { clock, logger } = config.runtime;
  const listener = config.onEvent;
  const cacheMs = config.clientCacheSeconds * 1000;
  const clientCache = new Map<string, CachedClient>();
  // Ids found unknown, until when: a repeated unknown id (a junk authorization request, a retry)
  // does not read storage again. A failed client authentication reads it anyway (client-auth.ts).
  const unknownClients = new Map<string, number>();

  async function lookupClient(clientId: string, clientAddress?: string): Promise<ClientLookup> {
    if (clientId.length > 2048) return { client: null, readStorage: false };
    const configured = config.staticClients.get(clientId);
    if (configured !== undefined) return { client: configured, readStorage: false };
    // A metadata document's URL is public, and fetching it is what costs: nothing to hide.
    if (external !== undefined && clientId.startsWith('https://')) {
      return { client: await external(clientId, clientAddress), readStorage: true };
    }
    const nowMs = clock();
    const now = Math.floor(nowMs / 1000);
    const cached = clientCache.get(clientId);
    if (cached !== undefined) {
      const { client, until } = cached;
      if (until > nowMs && (client.expiresAt === undefined || client.expiresAt > now)) {
        return { client, readStorage: false };
      }
      clientCache.delete(clientId);
    }
    const unknownUntil = unknownClients.get(clientId);
    if (unknownUntil !== undefined) {
      if (unknownUntil > nowMs) return { client: null, readStorage: false };
      unknownClients.delete(clientId);
    }
    const client = await config.storage.clients.get(clientId, now);
    // A miss is remembered too. Generated ids are random, so nobody asks for one before it is
    // registered; one created in storage by hand is seen within the window, as a deletion is.
    if (client === null && cacheMs > 0 && clientId.length <= MAX_REMEMBERED_UNKNOWN_ID) {
      if (unknownClients.size >= CLIENT_CACHE_MAX_ENTRIES) {
        unknownClients.delete(unknownClients.keys().next().value as string);
      }
      unknownClients.set(clientId, nowMs + cacheMs);
    }
    if (client !== null && cacheMs > 0) {
      if (clientCache.size >= CLIENT_CACHE_MAX_ENTRIES) {
        clientCache.delete(clientCache.keys().next().value as string);
      }
      clientCache.set(clientId, { client, until: nowMs + cacheMs });
    }
    return { client, readStorage: true };
  }

  return {
    config,
    keys,
    verifier: storageVerifier({ storage: config.storage, clock }),
    replayStore: config.storage.replay,
    clientKeys,
    now: () => nowSeconds(clock),
    emit(event) {
      if (listener === undefined) return;
      try {
        const result = listener({ ...event, at: nowSeconds(clock) } as AuthorizationServerEvent);
        if (result instanceof Promise) {
          result.catch((error: unknown) =>
            logger.error('event listener failed', { type: event.type, error: String(error) }),
          );
        }
      } catch (error) {
        logger.error('event listener failed', { type: event.type, error: String(error) });
      }
    },
    lookupClient,
    async getClient(clientId, clientAddress) {
      return (await lookupClient(clientId, clientAddress)).client;
    },
    forgetClient(clientId) {
      clientCache.delete(clientId);
      unknownClients.delete(clientId);
    },
    recentlyIssued: {
      codes: new RecentlyIssued(),
      refreshTokens: new RecentlyIssued(),
      pendingAuthorizations: new RecentlyIssued(),
    },
  };
}
