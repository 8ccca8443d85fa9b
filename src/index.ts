/**
 * `portcullis`: an OAuth 2.1 / OpenID Connect authorization server. The core is framework-agnostic:
 * handlers take an {@link OAuthRequest} and return an {@link OAuthResponse}; adapters live at
 * `portcullis/express`, `portcullis/fetch` and `portcullis/node`.
 * @module portcullis
 */

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
export { silentLogger } from './core/context.js';
export type { RandomSource } from './core/crypto.js';
export type { OAuthErrorCode, OAuthErrorOptions } from './core/errors.js';
export { isOAuthError, OAuthError } from './core/errors.js';
export type { AuthorizationServerEvent, EventListener } from './core/events.js';
export type { OAuthRequest, OAuthResponse } from './core/http.js';
export type { RateLimitBucket, RateLimitDecision, RateLimiter } from './core/rate-limit.js';
export type {
  AuthenticatedUser,
  AuthorizationServerOptions,
  ClientIdMetadataDocumentCacheOptions,
  ClientIdMetadataDocumentOptions,
  ConsentOptions,
  ConsentPageContext,
  EndpointPaths,
  IntrospectionCaller,
  IntrospectionOptions,
  KeyOptions,
  LoginRedirectContext,
  MetadataOptions,
  ProtectedResourceOptions,
  RegistrationOptions,
  StaticClientOptions,
  TokenOptions,
  UserClaims,
} from './options.js';
export { DEFAULT_MAX_BODY_BYTES, DEFAULT_PATHS } from './options.js';
export { InvalidOptionsError } from './options-schema.js';
export type {
  ClientAddressOptions,
  ClientAddressResolver,
  TrustProxy,
} from './protocol/client-address.js';
export { clientAddressKey, createClientAddressResolver } from './protocol/client-address.js';
export type {
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
export type { ConsentContext, ScopePolicy, ScopePolicyOptions } from './scopes/policy.js';
export { createScopePolicy } from './scopes/policy.js';
export type { ScopeDefinition, ScopeRegistry } from './scopes/registry.js';
export { courseSchoolScopes, defineScopes, oidcScopes } from './scopes/registry.js';
export type { AuthorizationServer, AuthorizationServerHandlers, AuthorizedApp, Handler } from './server.js';
export { createAuthorizationServer } from './server.js';
export type { ClientResolver } from './server-context.js';
export { memoryStorage } from './storage/memory.js';
export type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  AuthorizationRequest,
  ClientMetadata,
  ClientRecord,
  ConsentRecord,
  ConsumeCodeResult,
  GrantIssuance,
  GrantRecord,
  PendingAuthorizationRecord,
  RefreshTokenRecord,
  RotateResult,
  RotationInput,
  SigningKeyRecord,
  Storage,
} from './storage/types.js';
