/**
 * Every default of the options that is a plain value, written once: the schema (`options.ts`)
 * applies them, and so do the parts usable on their own (the metadata-document resolver and
 * fetcher). docs/configuration.md is checked against this object.
 * @module
 */
import type { EndpointPaths } from './options.js';

const DAY = 86_400;

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

/**
 * Every default of {@link AuthorizationServerOptions} that is a plain value, in the shape of the
 * options (frozen). The schema applies them; docs/configuration.md gives the reason for each (a
 * test keeps the guide in step with this object). Defaults that are behaviour rather than values
 * are stated on their option: `scopePolicy` (`createScopePolicy()`, the OIDC scopes), `resources`
 * (the issuer), `logger` (`defaultLogger`: warnings and errors as JSON lines on standard error), `clock` (`Date.now`), `random` (Web Crypto), `clientIp` (the
 * adapter's peer address).
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, DEFAULTS, memoryStorage } from 'portcullis';
 *
 * console.log(DEFAULTS.paths.token); // '/oauth/token'
 * const oauth = await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   // Half the default access-token lifetime.
 *   tokens: { accessTokenTtlSeconds: DEFAULTS.tokens.accessTokenTtlSeconds / 2 },
 * });
 * ```
 * @see docs/configuration.md (every option, its default and the reason for it)
 * @group Configuration
 */
export const DEFAULTS = deepFreeze({
  paths: {
    authorization: '/oauth/authorize',
    authorizationDecision: '/oauth/authorize/decision',
    token: '/oauth/token',
    registration: '/oauth/register',
    userinfo: '/oauth/userinfo',
    revocation: '/oauth/revoke',
    introspection: '/oauth/introspect',
    jwks: '/.well-known/jwks.json',
  },
  registration: {
    enabled: true,
    allowHttpsRedirectUris: false,
    allowConfidentialClients: true,
    unusedClientTtlSeconds: 7 * DAY,
    maxRedirectUris: 10,
  },
  clientSecretBasic: true,
  privateKeyJwt: { enabled: true, algorithms: ['ES256', 'RS256', 'EdDSA'], maxLifetimeSeconds: 300 },
  clientCredentials: { enabled: false },
  tokens: {
    codeTtlSeconds: 60,
    accessTokenTtlSeconds: 900,
    refreshTokenIdleTtlSeconds: 30 * DAY,
    grantTtlSeconds: 90 * DAY,
    idTokenTtlSeconds: 3600,
    pendingAuthorizationTtlSeconds: 600,
    accessTokenFormat: 'jwt',
    refreshGraceSeconds: 10,
    idTokenOnRefresh: false,
    timeInTokens: true,
  },
  keys: { idTokenAlg: 'RS256', accessTokenAlg: 'ES256', refreshIntervalSeconds: 60 },
  introspection: { enabled: true, callers: [] },
  dpop: {
    enabled: true,
    algorithms: ['ES256', 'EdDSA', 'RS256', 'PS256', 'ES384', 'Ed25519'],
    iatWindowSeconds: 60,
    nonces: { windowSeconds: 300 },
  },
  userinfo: { audiences: [] },
  consent: { remember: true },
  clientIdMetadataDocuments: {
    enabled: false,
    timeoutMs: 5000,
    connectTimeoutMs: 2000,
    maxBytes: 5 * 1024,
    maxRedirectUris: 10,
    maxConcurrentFetches: 10,
    maxConcurrentFetchesPerAddress: 2,
    addressFetchesPerMinute: 20,
    hostFetchesPerMinute: 30,
    failureCacheSeconds: 30,
    cache: { defaultTtlSeconds: 300, minTtlSeconds: 60, maxTtlSeconds: 3600, maxEntries: 1000 },
    userAgent: 'portcullis (client metadata fetcher)',
  },
  metadata: { serviceName: 'Authorization' },
  ipv6PrefixLength: 64,
  maxBodyBytes: 64 * 1024,
  housekeepingIntervalSeconds: 300,
  clientCacheSeconds: 5,
} as const);

/**
 * The default endpoint paths: {@link DEFAULTS}`.paths`. Override any of them with the `paths`
 * option; the metadata always advertises the paths in use.
 *
 * @example
 * ```ts
 * import { DEFAULT_PATHS } from 'portcullis';
 *
 * console.log(DEFAULT_PATHS.token); // '/oauth/token'
 * ```
 * @see RFC 8414 §2
 * @group Configuration
 */
export const DEFAULT_PATHS: Readonly<EndpointPaths> = DEFAULTS.paths;

/**
 * Default of `maxBodyBytes` ({@link DEFAULTS}`.maxBodyBytes`): 64 KiB. A larger body is answered
 * `413` (`invalid_request`) without being read further.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, DEFAULT_MAX_BODY_BYTES, memoryStorage } from 'portcullis';
 *
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   maxBodyBytes: DEFAULT_MAX_BODY_BYTES / 4, // OAuth requests are small
 * });
 * ```
 * @see RFC 9110 §15.5.14 (413 Content Too Large)
 * @group Configuration
 */
export const DEFAULT_MAX_BODY_BYTES: number = DEFAULTS.maxBodyBytes;
