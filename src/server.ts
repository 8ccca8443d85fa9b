/**
 * `createAuthorizationServer`: the lifecycle of a server. It validates the options, resolves them,
 * starts (storage reached, signing keys loaded) and returns a ready server; `close()` stops its
 * timer. Routing, grant management, guards and key rotation live in their own modules. No
 * framework is imported here; adapters translate.
 * @module
 */
import { createFetchBounds } from './cimd/fetch-bounds.js';
import type { MetadataFetcher } from './cimd/fetcher.js';
import { createNodeMetadataFetcher } from './cimd/node-fetcher.js';
import { createClientIdMetadataResolver } from './cimd/resolver.js';
import { resolveConfig, type ServerConfig } from './config.js';
import type { OAuthRequest, OAuthResponse } from './core/http.js';
import { type AuthorizedApp, listGrants, revokeGrant } from './grant-management.js';
import { rotateSigningKeys } from './keys/rotation.js';
import { type AuthorizationServerOptions, parseOptions } from './options.js';
import { createClientKeyResolver } from './protocol/client-keys.js';
import type { ResourceGuard } from './resource-server/guard.js';
import type { AccessTokenVerifier } from './resource-server/verifier.js';
import { type AuthorizationServerHandlers, createRouter } from './router.js';
import { createServerContext, type ServerContext } from './server-context.js';
import { serverGuard } from './server-guard.js';
import { loadSigningKeys, signingKeyPlan, startupStep, touchStorage } from './startup.js';

/**
 * An authorization server, started and ready: the router, the individual handlers, grant
 * management, guards for its resources, and its lifecycle. Created by
 * {@link createAuthorizationServer}; served by the adapters of `portcullis/express`,
 * `portcullis/fetch` and `portcullis/node`.
 *
 * @example
 * ```ts
 * import { type AuthorizationServer, createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * const oauth: AuthorizationServer = await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 * });
 * console.log(oauth.matches('/oauth/token')); // true
 * await oauth.close();
 * ```
 * @see RFC 6749, RFC 8414, RFC 9728, OpenID Connect Core 1.0
 * @group Authorization Server
 */
export interface AuthorizationServer {
  /** The issuer identifier. */
  readonly issuer: string;
  /** The largest request body accepted, in bytes; adapters stop reading beyond it. */
  readonly maxBodyBytes: number;
  /**
   * Routes a request to its handler. Returns `null` when the path is not one of this server's, so
   * an adapter can pass the request on. Never throws: errors become OAuth error responses
   * (RFC 6749 §5.2 JSON, or the authorization endpoint's page and redirects), and anything
   * unexpected becomes `500 server_error` without its message (logged at `error`).
   *
   * @param request - the plain request
   * @returns the response, or `null` for a path the server does not serve
   * @example
   * ```ts
   * import { createAuthorizationServer, memoryStorage } from 'portcullis';
   *
   * const oauth = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
   * const response = await oauth.handle({ method: 'GET', url: '/.well-known/jwks.json', headers: {} });
   * console.log(response?.status, JSON.parse(response?.body ?? '{}').keys.length); // 200 2
   * ```
   */
  handle(request: OAuthRequest): Promise<OAuthResponse | null>;
  /** True when `path` (without query) is served by this server. */
  matches(path: string): boolean;
  /** The handlers, for hosts that route themselves. */
  readonly handlers: AuthorizationServerHandlers;
  /**
   * The apps a user has authorized: active grants, newest first, with the client's name. For an
   * account page.
   *
   * @param userId - the user (`AuthenticatedUser.id`)
   * @returns the active grants; empty when there are none
   * @example
   * ```ts
   * import type { AuthorizationServer } from 'portcullis';
   *
   * declare const oauth: AuthorizationServer;
   * const apps = await oauth.listGrants('user-42');
   * console.log(apps.map((a) => `${a.clientName ?? a.clientId}: ${a.scope.join(' ')}`));
   * ```
   */
  listGrants(userId: string): Promise<AuthorizedApp[]>;
  /**
   * Revokes a grant and every token it issued, and forgets the user's consent for that client, so
   * the next authorization asks again. Pass `userId` to refuse revoking another user's grant.
   * Returns false when no such active grant exists. Emits `grant.revoked` with reason `user`.
   *
   * @param grantId - from {@link AuthorizationServer.listGrants}
   * @param options - `userId`: revoke only if the grant is this user's
   * @returns whether an active grant was revoked
   * @see RFC 7009 §2.1 (revoking a grant revokes its tokens)
   * @example
   * ```ts
   * import type { AuthorizationServer } from 'portcullis';
   *
   * declare const oauth: AuthorizationServer;
   * declare const signedInUser: string;
   * const [first] = await oauth.listGrants(signedInUser);
   * if (first !== undefined) await oauth.revokeGrant(first.grantId, { userId: signedInUser });
   * ```
   */
  revokeGrant(grantId: string, options?: { userId?: string }): Promise<boolean>;
  /**
   * Rotates the signing keys (see docs/storage.md, key rotation). The new keys are published in the
   * JWKS at once and sign only after the JWKS cache lifetime (`max-age=300`) plus
   * `keys.refreshIntervalSeconds`, so that resource servers caching the JWKS, and the other
   * instances, know them before the first token they sign (ABU-10); the current keys sign until
   * then, and stay published until every token they signed has expired. `immediate: true` (a
   * compromised key) makes the new keys sign at once. Run it from one place.
   *
   * @param options - `immediate`: sign with the new keys at once (default false)
   * @throws TypeError when the keys come from `keys.privateJwks` (rotate them there)
   * @see RFC 7517 §5 (JWK Set), RFC 9111 §5.2.2.1 (max-age)
   * @example
   * ```ts
   * import type { AuthorizationServer } from 'portcullis';
   *
   * declare const oauth: AuthorizationServer;
   * await oauth.rotateSigningKeys(); // e.g. from a monthly scheduled job
   * await oauth.rotateSigningKeys({ immediate: true }); // a key leaked
   * ```
   */
  rotateSigningKeys(options?: { readonly immediate?: boolean }): Promise<void>;
  /**
   * A resource-server guard for one of the configured `resources`, verifying tokens against this
   * server's storage (revocation is immediate) and pointing challenges at the resource's RFC 9728
   * metadata.
   *
   * @param options - `resource`: one of the configured `resources` (the issuer by default)
   * @returns the guard
   * @throws TypeError when `resource` is not one of the configured resources
   * @see RFC 6750 §3, RFC 8707 §2, RFC 9728 §5.1
   * @example
   * ```ts
   * import { createAuthorizationServer, memoryStorage } from 'portcullis';
   *
   * const oauth = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
   * const guard = oauth.guard({ resource: 'https://auth.example.com' });
   * const result = await guard.check({ headers: {}, method: 'GET', url: '/api/courses' }, { required: true });
   * console.log(result.ok ? 'served' : result.response.headers['www-authenticate']);
   * // Bearer resource_metadata="https://auth.example.com/.well-known/oauth-protected-resource",
   * // DPoP algs="ES256 EdDSA RS256 PS256 ES384 Ed25519", resource_metadata="…"
   * ```
   */
  guard(options: { readonly resource: string }): ResourceGuard;
  /**
   * Verifies an access token issued by this server against its storage: `null` for an unknown,
   * expired or revoked token. What `guard` uses; pass it to `createResourceGuard` for a guard with
   * a resource metadata URL of your own.
   */
  readonly verifier: AccessTokenVerifier;
  /** Stops timers. Does not close the storage, which the host owns. */
  close(): Promise<void>;
}

/**
 * The fetcher of metadata documents and `jwks_uri`s: the host's, or the SSRF-safe `node:https` one
 * with the settings of `clientIdMetadataDocuments` (built only when something may fetch).
 */
function outboundFetcher(config: ServerConfig): MetadataFetcher {
  const cimd = config.clientIdMetadataDocuments;
  if (cimd.fetcher !== undefined) return cimd.fetcher;
  if (!config.cimdEnabled && !config.privateKeyJwt.enabled) {
    return async () => {
      throw new Error('outbound fetches are not enabled');
    };
  }
  return createNodeMetadataFetcher({
    ...(cimd.lookup === undefined ? {} : { lookup: cimd.lookup }),
    ...(cimd.allowSpecialUseAddresses === undefined
      ? {}
      : { allowSpecialUseAddresses: cimd.allowSpecialUseAddresses }),
    ...(cimd.ca === undefined ? {} : { ca: cimd.ca }),
    connectTimeoutMs: cimd.connectTimeoutMs,
    userAgent: cimd.userAgent,
  });
}

/**
 * `fetcher` within the bounds of metadata-document fetches (ABU-04): at most
 * `maxConcurrentFetches` at once, `maxConcurrentFetchesPerAddress` and `addressFetchesPerMinute`
 * per client address (the request's `clientAddress`), and `hostFetchesPerMinute` per host (a host
 * that served a key set is exempt for a day). For `jwks_uri`s, whose resolver remembers failures
 * itself; a fetch past the bounds is refused without a connection.
 */
function boundedFetcher(fetcher: MetadataFetcher, config: ServerConfig): MetadataFetcher {
  const cimd = config.clientIdMetadataDocuments;
  const { clock } = config.runtime;
  const bounds = createFetchBounds({
    maxConcurrent: cimd.maxConcurrentFetches,
    perAddressConcurrent: cimd.maxConcurrentFetchesPerAddress,
    perAddressPerMinute: cimd.addressFetchesPerMinute,
    perHostPerMinute: cimd.hostFetchesPerMinute,
    failureMs: 0,
    busySeconds: cimd.timeoutMs / 1000,
  });
  return async (request) => {
    const admitted = bounds.admit(request.target, clock(), request.clientAddress);
    try {
      const response = await fetcher(request);
      if (response.status === 200) admitted.succeeded(clock());
      else admitted.failed(undefined, clock());
      return response;
    } catch (error) {
      admitted.failed(undefined, clock());
      throw error;
    }
  };
}

/** Deletes expired records every `housekeepingIntervalSeconds`; returns the timer, if any. */
function startHousekeeping(ctx: ServerContext): ReturnType<typeof setInterval> | undefined {
  const { housekeepingIntervalSeconds, storage, runtime } = ctx.config;
  if (housekeepingIntervalSeconds === 0) return undefined;
  const timer = setInterval(() => {
    storage.deleteExpired(ctx.now()).catch((error: unknown) => {
      runtime.logger.warn('deleting expired records failed', { error: String(error) });
    });
  }, housekeepingIntervalSeconds * 1000);
  (timer as { unref?: () => void }).unref?.();
  return timer;
}

/**
 * Creates and starts an authorization server: validates the options, reaches the storage once
 * (the SQL storages connect and migrate here), loads or generates the signing keys, and resolves
 * with a server that is ready. Nothing is started lazily afterwards: requests, grant management
 * and guards never wait for start-up, and a broken setup never surfaces as a 500 on a request.
 *
 * @param options - see {@link AuthorizationServerOptions}; only `issuer` and `storage` are required
 * @returns the started server: a router (`handle`), the individual handlers, and lifecycle methods
 * @throws InvalidOptionsError (rejected) naming every invalid option, before anything is touched
 * @throws StartupError (rejected) with `code` `storage_unavailable`, `storage_migration_failed`,
 * `signing_keys_unavailable` or `invalid_configuration`, and the underlying error as `cause`.
 * Requests never throw: the endpoints answer OAuth errors (see {@link AuthorizationServerHandlers}).
 * @see RFC 6749, RFC 7591, RFC 8414, RFC 9728, OpenID Connect Core 1.0
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * const server = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * const response = await server.handle({
 *   method: 'GET',
 *   url: '/.well-known/oauth-authorization-server',
 *   headers: {},
 * });
 * console.log(response?.status); // 200
 * ```
 * @group Authorization Server
 */
export async function createAuthorizationServer(
  options: AuthorizationServerOptions,
): Promise<AuthorizationServer> {
  // Host objects (a scope policy) run while options are checked: what they throw is not a bad option.
  const parsed = await startupStep('invalid_configuration', 'checking the options failed', () =>
    parseOptions(options),
  );
  const config = await startupStep('invalid_configuration', 'the options could not be resolved', () =>
    resolveConfig(parsed),
  );
  await touchStorage(config);
  const keyPlan = signingKeyPlan(config);
  const keys = await loadSigningKeys(config, keyPlan);
  // Metadata documents and private_key_jwt clients' jwks_uri: one SSRF-safe, bounded fetcher.
  const fetcher = await startupStep('invalid_configuration', 'the metadata fetcher could not be built', () =>
    outboundFetcher(config),
  );
  // `https` client ids resolve through their metadata documents only when the host enabled it.
  const metadataDocuments = config.cimdEnabled
    ? await startupStep('invalid_configuration', 'the metadata document resolver could not be built', () =>
        createClientIdMetadataResolver({
          ...config.clientIdMetadataDocuments,
          fetcher,
          keyAlgorithms: config.privateKeyJwt.enabled ? config.privateKeyJwt.algorithms : null,
          clock: config.runtime.clock,
          logger: config.runtime.logger,
        }),
      )
    : undefined;
  const clientKeys = config.privateKeyJwt.enabled
    ? createClientKeyResolver({
        fetcher: boundedFetcher(fetcher, config),
        clock: config.runtime.clock,
        logger: config.runtime.logger,
        rules: { algorithms: config.privateKeyJwt.algorithms },
        ...(config.clientIdMetadataDocuments.allowSpecialUseAddresses === undefined
          ? {}
          : { allowSpecialUseAddresses: config.clientIdMetadataDocuments.allowSpecialUseAddresses }),
      })
    : undefined;
  const ctx = createServerContext(config, keys, metadataDocuments, clientKeys);
  const router = createRouter(ctx);
  const housekeeping = startHousekeeping(ctx);

  return {
    issuer: config.issuer,
    maxBodyBytes: config.maxBodyBytes,
    handle: router.handle,
    matches: router.matches,
    handlers: router.handlers,
    listGrants: (userId) => listGrants(ctx, userId),
    revokeGrant: (grantId, revokeOptions = {}) => revokeGrant(ctx, grantId, revokeOptions),
    guard: ({ resource }) => serverGuard(ctx, resource),
    verifier: ctx.verifier,
    rotateSigningKeys: (rotation) =>
      rotateSigningKeys(config.storage, keys, keyPlan, config.runtime.clock, rotation),
    async close() {
      if (housekeeping !== undefined) clearInterval(housekeeping);
    },
  };
}
