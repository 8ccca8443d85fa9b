import { type AuthorizationServerOptions, DEFAULT_PATHS, memoryStorage } from 'portcullis';

// #region defaults
// Every option that has a default, set to it: this server behaves exactly like one created with
// only `issuer` and `storage`. (test/docs/configuration-defaults.test.ts keeps this true.)
export const options = {
  issuer: 'https://auth.example.com',
  storage: memoryStorage(),
  paths: { ...DEFAULT_PATHS },
  registration: {
    enabled: true,
    allowHttpsRedirectUris: false,
    allowConfidentialClients: true,
    unusedClientTtlSeconds: 7 * 24 * 3600,
    maxRedirectUris: 10,
  },
  clientSecretBasic: false,
  tokens: {
    codeTtlSeconds: 60,
    accessTokenTtlSeconds: 900,
    refreshTokenIdleTtlSeconds: 30 * 24 * 3600,
    grantTtlSeconds: 90 * 24 * 3600,
    idTokenTtlSeconds: 3600,
    pendingAuthorizationTtlSeconds: 600,
    accessTokenFormat: 'jwt',
    refreshGraceSeconds: 10,
    idTokenOnRefresh: false,
  },
  keys: { idTokenAlg: 'RS256', accessTokenAlg: 'ES256', refreshIntervalSeconds: 60 },
  introspection: { enabled: true, callers: [] },
  consent: { remember: true },
  clientIdMetadataDocuments: {
    enabled: false,
    timeoutMs: 5000,
    connectTimeoutMs: 2000,
    maxBytes: 5 * 1024,
    maxRedirectUris: 10,
    maxConcurrentFetches: 10,
    hostFetchesPerMinute: 30,
    failureCacheSeconds: 30,
    cache: { defaultTtlSeconds: 300, minTtlSeconds: 60, maxTtlSeconds: 3600, maxEntries: 1000 },
    userAgent: 'portcullis (client metadata fetcher)',
  },
  metadata: { serviceName: 'Authorization' },
  maxBodyBytes: 64 * 1024,
  housekeepingIntervalSeconds: 300,
  clientCacheSeconds: 5,
} satisfies AuthorizationServerOptions;
// #endregion defaults
