/**
 * The clients aggregate: registered OAuth clients (RFC 7591), keyed by `client_id`.
 * @module
 */
import type { ClientJwks } from '../../protocol/client-jwks.js';

/**
 * Client metadata as registered (RFC 7591 §2), with the wire's snake_case names: the effective
 * values, defaults applied, as the registration response echoes them.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage, OAuthError } from 'portcullis';
 *
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   registration: {
 *     // `metadata` is a ClientMetadata: validated, with defaults applied.
 *     policy: ({ metadata }) => {
 *       if (metadata.token_endpoint_auth_method !== 'none') {
 *         throw new OAuthError('invalid_client_metadata', 'only public clients may register');
 *       }
 *     },
 *   },
 * });
 * ```
 * @see RFC 7591 §2, OpenID Connect Dynamic Client Registration §2
 * @group Client Registration (RFC 7591)
 */
export interface ClientMetadata {
  readonly redirect_uris: readonly string[];
  readonly token_endpoint_auth_method:
    | 'none'
    | 'client_secret_post'
    | 'client_secret_basic'
    | 'private_key_jwt';
  readonly grant_types: readonly ('authorization_code' | 'refresh_token' | 'client_credentials')[];
  readonly response_types: readonly 'code'[];
  readonly application_type: 'native' | 'web';
  readonly client_name?: string;
  readonly client_uri?: string;
  readonly logo_uri?: string;
  readonly policy_uri?: string;
  readonly tos_uri?: string;
  readonly contacts?: readonly string[];
  readonly scope?: string;
  readonly software_id?: string;
  readonly software_version?: string;
  readonly id_token_signed_response_alg?: 'RS256' | 'ES256';
  /**
   * True: every token request of this client must carry a DPoP proof, and its access tokens are
   * always DPoP-bound (RFC 9449 §5.2).
   */
  readonly dpop_bound_access_tokens?: boolean;
  /** The client's public keys, by value (`private_key_jwt`, RFC 7591 §2); never with `jwks_uri`. */
  readonly jwks?: ClientJwks;
  /** Where the client publishes its public keys (`private_key_jwt`, RFC 7591 §2): an https URL. */
  readonly jwks_uri?: string;
}

/**
 * A registered client.
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * const client = await storage.clients.get('x7Gd9...', Math.floor(Date.now() / 1000));
 * console.log(client?.metadata.client_name, client?.origin); // 'My CLI' 'dynamic'
 * ```
 * @see RFC 7591 §3.2.1 (the registered client), RFC 6749 §2.3.1 (secrets)
 * @group Storage
 * @category Records
 */
export interface ClientRecord {
  readonly clientId: string;
  /** Base64url SHA-256 of the client secret; absent for public clients. */
  readonly secretHash?: string;
  readonly metadata: ClientMetadata;
  /**
   * How the client came to exist: dynamic registration, host configuration, or a Client ID
   * Metadata Document fetched from its `https` client_id (such records are never stored).
   */
  readonly origin: 'dynamic' | 'static' | 'metadata_document';
  /** Epoch seconds. */
  readonly createdAt: number;
  /**
   * When set (epoch seconds), the client is removed after this time unless it has been used: the
   * server clears it once the client completes a token request. Absent means it never expires.
   */
  readonly expiresAt?: number;
}

/**
 * Registered clients. Configured clients and Client ID Metadata Document clients never reach it.
 *
 * @example
 * ```ts
 * import type { ClientStore } from 'portcullis';
 *
 * declare const clients: ClientStore;
 * const now = Math.floor(Date.now() / 1000);
 * const client = await clients.get('x7Gd9...', now);
 * if (client?.expiresAt !== undefined) await clients.clearExpiry(client.clientId);
 * ```
 * @see RFC 7591 §3.2.1
 * @group Storage
 * @category Contract
 */
export interface ClientStore {
  /**
   * Stores a new client.
   * @throws when `clientId` already exists (the server allocates random ids: a collision is a bug)
   */
  create(client: ClientRecord): Promise<void>;
  /** The client, or `null` when unknown or when its `expiresAt <= now`. */
  get(clientId: string, now: number): Promise<ClientRecord | null>;
  /**
   * Removes `expiresAt` from a client: it has been used and is no longer an abandoned
   * registration. Returns false when the client does not exist. The server calls it after a
   * token response, best effort: a failure is logged, never answered.
   */
  clearExpiry(clientId: string): Promise<boolean>;
  /**
   * Deletes a client and its consents, and revokes its grants with every token they issued.
   * Returns false when the client does not exist. Not an atomic step: an adapter may delete the
   * client first and revoke afterwards (a deleted client cannot authenticate in between).
   */
  delete(clientId: string, now: number): Promise<boolean>;
}
