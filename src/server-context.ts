/**
 * What handlers share: the resolved configuration, the key store, the clock, the event emitter and
 * client lookup. Built once per server.
 * @module
 */
import type { ServerConfig } from './config.js';
import { nowSeconds } from './core/context.js';
import type { AuthorizationServerEvent } from './core/events.js';
import type { KeyStore } from './keys/key-store.js';
import { type AccessTokenVerifier, storageVerifier } from './resource-server/verifier.js';
import type { ClientRecord } from './storage/types.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An event without its timestamp (added when emitted). */
export type EventPayload = DistributiveOmit<AuthorizationServerEvent, 'at'>;

/**
 * Resolves a `client_id` that is not in storage (Client ID Metadata Documents plug in here).
 * Returns `null` for an id it does not handle; throws an `OAuthError` (`invalid_client`) to refuse.
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
export type ClientResolver = (clientId: string) => Promise<ClientRecord | null>;

/** The state every handler reads. */
export interface ServerContext {
  readonly config: ServerConfig;
  readonly keys: KeyStore;
  /** Verifies this server's access tokens against its storage (UserInfo, guards). */
  readonly verifier: AccessTokenVerifier;
  /** Epoch seconds from the configured clock. */
  now(): number;
  /** Emits an audit event; listener errors are logged, never propagated. */
  emit(event: EventPayload): void;
  /** A client by id: configured clients first, then storage, then any external resolver. */
  getClient(clientId: string): Promise<ClientRecord | null>;
}

/** Builds the shared context. */
export function createServerContext(
  config: ServerConfig,
  keys: KeyStore,
  external?: ClientResolver,
): ServerContext {
  const { clock, logger } = config.runtime;
  const listener = config.onEvent;
  return {
    config,
    keys,
    verifier: storageVerifier({ storage: config.storage, clock }),
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
    async getClient(clientId) {
      if (clientId.length > 2048) return null;
      const configured = config.staticClients.get(clientId);
      if (configured !== undefined) return configured;
      if (external !== undefined && clientId.startsWith('https://')) return external(clientId);
      return config.storage.getClient(clientId, nowSeconds(clock));
    },
  };
}
