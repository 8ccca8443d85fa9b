/**
 * `portcullis`: an OAuth 2.1 / OpenID Connect authorization server. The core is framework-agnostic:
 * handlers take an {@link OAuthRequest} and return an {@link OAuthResponse}; adapters live at
 * `portcullis/express`, `portcullis/fetch` and `portcullis/node`.
 * @module portcullis
 */

export type { AuthenticatedUser, ConsentPageContext, LoginRedirectContext, UserClaims } from './callbacks.js';
export type { ClientIdUrl } from './cimd/client-id.js';
export type { ClientMetadataDocumentProblem } from './cimd/errors.js';
export { ClientMetadataDocumentError, isClientMetadataDocumentError } from './cimd/errors.js';
export type {
  HostLookup,
  MetadataFetcher,
  MetadataFetchRequest,
  MetadataFetchResponse,
  ResolvedAddress,
} from './cimd/fetcher.js';
export type { NodeMetadataFetcherOptions } from './cimd/node-fetcher.js';
export { createNodeMetadataFetcher } from './cimd/node-fetcher.js';
export type { ClientIdMetadataResolverOptions } from './cimd/resolver.js';
export { createClientIdMetadataResolver } from './cimd/resolver.js';
export type { Clock, LogFields, Logger } from './core/context.js';
export { defaultLogger, silentLogger } from './core/context.js';
export type { RandomSource } from './core/crypto.js';
export type { OAuthErrorCode, OAuthErrorOptions } from './core/errors.js';
export { isOAuthError, logFailure, OAuthError } from './core/errors.js';
export type { AuthorizationServerEvent, EventListener } from './core/events.js';
export type { OAuthRequest, OAuthResponse } from './core/http.js';
export { hostileCharacter } from './core/params.js';
export type { RateLimitBucket, RateLimitDecision, RateLimiter } from './core/rate-limit.js';
export { DEFAULT_MAX_BODY_BYTES, DEFAULT_PATHS, DEFAULTS } from './defaults.js';
export type { AuthorizedApp } from './grant-management.js';
export type { KeyWrapping } from './keys/key-store.js';
export type {
  AuthorizationServerOptions,
  ClientCredentialsOptions,
  ClientIdMetadataDocumentCacheOptions,
  ClientIdMetadataDocumentOptions,
  ConsentOptions,
  DpopNonceSettings,
  DpopOptions,
  EndpointPaths,
  IntrospectionCaller,
  IntrospectionOptions,
  KeyOptions,
  MetadataOptions,
  PrivateKeyJwtOptions,
  ProtectedResourceOptions,
  RegistrationOptions,
  StaticClientOptions,
  TokenOptions,
  UserinfoOptions,
} from './options.js';
export { InvalidOptionsError } from './options.js';
export type {
  ClientAddressOptions,
  ClientAddressResolver,
  TrustProxy,
} from './protocol/client-address.js';
export { clientAddressKey, createClientAddressResolver } from './protocol/client-address.js';
export type { ClientJwks } from './protocol/client-jwks.js';
export { normalizeDisplayName } from './protocol/client-metadata.js';
export type { DpopProofOptions, DpopRequest, VerifiedDpopProof } from './protocol/dpop.js';
export { dpopChallenge, verifyDpopProof } from './protocol/dpop.js';
export type { AccessTokenCredential, ResourceChallenges } from './protocol/dpop-binding.js';
export {
  checkAccessTokenBinding,
  readAccessTokenCredential,
  resourceChallenge,
} from './protocol/dpop-binding.js';
export type { DpopNonceOptions, DpopNonceSource } from './protocol/dpop-nonce.js';
export { createDpopNonceSource } from './protocol/dpop-nonce.js';
export type { HostCheckOptions } from './protocol/host.js';
export { createHostCheck } from './protocol/host.js';
export type { PublicJwk, SignatureAlgorithm } from './protocol/public-jwk.js';
export type { MemoryReplayStoreOptions } from './protocol/replay-store.js';
export { memoryReplayStore } from './protocol/replay-store.js';
export type {
  GuardDpopOptions,
  GuardRequest,
  GuardRequirement,
  GuardResult,
  Principal,
  ResourceGuard,
  ResourceGuardOptions,
} from './resource-server/guard.js';
export { createResourceGuard } from './resource-server/guard.js';
export type {
  AccessTokenVerifier,
  IntrospectionVerifierOptions,
  JwksVerifierOptions,
  StorageVerifierOptions,
  VerifiedAccessToken,
} from './resource-server/verifier.js';
export { introspectionVerifier, jwksVerifier, storageVerifier } from './resource-server/verifier.js';
export type { AuthorizationServerHandlers, Handler } from './router.js';
export type { ConsentContext, ScopePolicy, ScopePolicyOptions } from './scopes/policy.js';
export { createScopePolicy } from './scopes/policy.js';
export type { ScopeDefinition, ScopeRegistry } from './scopes/registry.js';
export { defineScopes, oidcScopes } from './scopes/registry.js';
export type { AuthorizationServer } from './server.js';
export { createAuthorizationServer } from './server.js';
export type { ClientResolver } from './server-context.js';
export type { StartupErrorCode } from './startup.js';
export { StartupError } from './startup.js';
export { memoryStorage } from './storage/memory.js';
export type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  AuthorizationRequest,
  ClientMetadata,
  ClientRecord,
  ClientStore,
  CodeRedemption,
  CodeStore,
  ConsentRecord,
  ConsentStore,
  GrantRecord,
  GrantStore,
  InteractionBinding,
  InteractionCompletion,
  InteractionStore,
  PendingAuthorizationRecord,
  RedeemResult,
  RefreshRotation,
  RefreshTokenRecord,
  ReplayStore,
  RotateResult,
  SigningKeyRecord,
  SigningKeyStore,
  Storage,
} from './storage/types.js';
export { CODE_TOMBSTONE_SECONDS } from './storage/types.js';
export type { StorageUnavailableErrorOptions, StorageUnavailableReason } from './storage/unavailable.js';
export {
  classifyStorageFailure,
  isStorageUnavailable,
  STORAGE_RETRY_AFTER_SECONDS,
  StorageUnavailableError,
} from './storage/unavailable.js';
export { tokenKey } from './tokens/token-key.js';
