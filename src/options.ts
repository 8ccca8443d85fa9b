/**
 * Options of {@link createAuthorizationServer} and their defaults. Their validation is in
 * `options-schema.ts`: invalid options fail at start-up with an error that names the option.
 * @module
 */
import type { HostLookup, MetadataFetcher } from './cimd/fetcher.js';
import type { Clock, Logger } from './core/context.js';
import type { RandomSource } from './core/crypto.js';
import type { EventListener } from './core/events.js';
import type { OAuthRequest, OAuthResponse } from './core/http.js';
import type { RateLimiter } from './core/rate-limit.js';
import type { ScopePolicy } from './scopes/policy.js';
import type { ClientMetadata, ClientRecord, Storage } from './storage/types.js';

/**
 * Paths of the endpoints, relative to the issuer's origin. Defaults are the course-school spec's.
 * The metadata always advertises the paths in use.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, type EndpointPaths, memoryStorage } from 'portcullis';
 *
 * const paths: Partial<EndpointPaths> = { token: '/oauth/token', registration: '/oauth/register' };
 * createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage(), paths });
 * ```
 * @see RFC 8414 §2 (the endpoint members of the metadata)
 * @group Configuration
 */
export interface EndpointPaths {
  /** Authorization endpoint (GET and POST). Default `/oauth/authorize`. */
  authorization: string;
  /** Where the consent form posts the user's decision. Default `/oauth/authorize/decision`. */
  authorizationDecision: string;
  /** Token endpoint. Default `/api/oauth/token`. */
  token: string;
  /** Dynamic client registration (RFC 7591). Default `/api/oauth/register`. */
  registration: string;
  /** OIDC UserInfo. Default `/api/oauth/userinfo`. */
  userinfo: string;
  /** Token revocation (RFC 7009). Default `/api/oauth/revoke`. */
  revocation: string;
  /** Token introspection (RFC 7662). Default `/api/oauth/introspect`. */
  introspection: string;
  /** The public JWK Set. Default `/.well-known/jwks.json`. */
  jwks: string;
}

/**
 * The paths the spec gives, used unless overridden.
 *
 * @example
 * ```ts
 * import { DEFAULT_PATHS } from 'portcullis';
 *
 * console.log(DEFAULT_PATHS.token); // '/api/oauth/token'
 * ```
 * @see RFC 8414 §2
 * @group Configuration
 */
export const DEFAULT_PATHS: Readonly<EndpointPaths> = Object.freeze({
  authorization: '/oauth/authorize',
  authorizationDecision: '/oauth/authorize/decision',
  token: '/api/oauth/token',
  registration: '/api/oauth/register',
  userinfo: '/api/oauth/userinfo',
  revocation: '/api/oauth/revoke',
  introspection: '/api/oauth/introspect',
  jwks: '/.well-known/jwks.json',
});

/**
 * Default of {@link AuthorizationServerOptions.maxBodyBytes}: 64 KiB. A larger body is answered
 * `413` (`invalid_request`) without being read further.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, DEFAULT_MAX_BODY_BYTES, memoryStorage } from 'portcullis';
 *
 * createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   maxBodyBytes: DEFAULT_MAX_BODY_BYTES / 4, // OAuth requests are small
 * });
 * ```
 * @see RFC 9110 §15.5.14 (413 Content Too Large)
 * @group Configuration
 */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

/**
 * A resource server the tokens may be for (RFC 8707 resource indicator, RFC 9728 metadata). A
 * resource on the issuer's origin gets its metadata document at the path-inserted well-known URL.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   resources: [
 *     { resource: 'https://auth.example.com', name: 'Example API' },
 *     // served at https://auth.example.com/.well-known/oauth-protected-resource/mcp
 *     { resource: 'https://auth.example.com/mcp', name: 'Example MCP server', scopes: ['openid'] },
 *   ],
 * });
 * ```
 * @see RFC 8707 §2, RFC 9728 §2 and §3.1
 * @group Discovery (RFC 8414, RFC 9728)
 */
export interface ProtectedResourceOptions {
  /** The resource identifier: an absolute https URL (http only on loopback), no fragment. */
  resource: string;
  /** Scopes advertised for it in its protected-resource metadata. Default: every supported scope. */
  scopes?: readonly string[];
  /** `resource_name` of the metadata. */
  name?: string;
  /** `resource_documentation` of the metadata. */
  documentation?: string;
}

/**
 * The user the host says is signed in, returned by the `authenticate` option.
 *
 * @example
 * ```ts
 * import type { AuthenticatedUser } from 'portcullis';
 *
 * const user: AuthenticatedUser = {
 *   id: 'user-42', // the `sub` of every token: stable, never reassigned
 *   authTime: Math.floor(Date.parse('2030-01-01T09:00:00Z') / 1000), // when they entered credentials
 *   sessionId: 'sess-8f3a', // binds the consent form to this session
 *   name: 'Ada Lovelace',
 * };
 * ```
 * @see OpenID Connect Core §2 (`sub`, `auth_time`)
 * @group Login and Consent
 */
export interface AuthenticatedUser {
  /** Stable, never reassigned identifier: the `sub` of every token (OIDC Core §2). */
  readonly id: string;
  /** When the user last authenticated, epoch seconds (OIDC `auth_time`). */
  readonly authTime: number;
  /** The host's session id; pending authorizations and consent forms are bound to it. */
  readonly sessionId?: string;
  /** A name to show on the consent page ("Signed in as ..."). */
  readonly name?: string;
}

/**
 * What the login redirect needs to know: what a `loginUrl` function receives.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   loginUrl: (context) =>
 *     `/sign-in?next=${encodeURIComponent(context.returnTo)}${context.reauthenticate ? '&force=1' : ''}`,
 * });
 * ```
 * @see OpenID Connect Core §3.1.2.1 (`prompt`, `max_age`, `login_hint`, `ui_locales`)
 * @group Login and Consent
 */
export interface LoginRedirectContext {
  /** Absolute URL to send the browser back to after login (the resumed authorization). */
  readonly returnTo: string;
  /** The client asking for authorization. */
  readonly clientId: string;
  /** True when the user must authenticate again (`prompt=login` or `max_age`). */
  readonly reauthenticate: boolean;
  /** The request's `login_hint` (OIDC Core §3.1.2.1), to prefill the login form. */
  readonly loginHint?: string;
  /** The request's `ui_locales`, most preferred first. */
  readonly uiLocales?: readonly string[];
}

/**
 * Claims about a user, released by scope at the UserInfo endpoint: `profile` releases the profile
 * claims (`name`, `given_name`, `picture`, ...), `email` releases `email` and `email_verified`.
 * Anything else returned is not released; `sub` always is, from the token.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   claims: async (userId, scope) => ({
 *     name: 'Ada Lovelace',
 *     email: scope.includes('email') ? 'ada@example.com' : undefined,
 *     email_verified: true,
 *   }),
 * });
 * ```
 * @see OpenID Connect Core §5.1, §5.3.2, §5.4
 * @group Login and Consent
 */
export type UserClaims = Readonly<Record<string, unknown>>;

/**
 * What a custom consent page receives. Every string is raw: escape it. The form must post
 * `fields` unchanged, plus `decision=allow` or `decision=deny`, to `action`.
 *
 * @example
 * ```ts
 * import type { ConsentPageContext } from 'portcullis';
 *
 * declare function escapeHtml(text: string): string;
 *
 * function render(context: ConsentPageContext): string {
 *   const hidden = Object.entries(context.fields)
 *     .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
 *     .join('');
 *   return `<h1>Allow ${escapeHtml(context.clientName)}?</h1>
 * <form method="post" action="${escapeHtml(context.action)}">${hidden}
 * <button name="decision" value="allow">Allow</button><button name="decision" value="deny">Deny</button></form>`;
 * }
 * ```
 * @see RFC 6749 §10.2 (client impersonation), §10.12 (CSRF); RFC 8252 §8.6
 * @group Login and Consent
 */
export interface ConsentPageContext {
  /** The client asking for access. */
  readonly client: ClientRecord;
  /** The client's display name, or its id. */
  readonly clientName: string;
  /** Where the browser goes after the decision. */
  readonly redirectUri: string;
  /** `host:port` of the redirect URI. */
  readonly redirectHost: string;
  /** True when the redirect goes to a loopback address (any local program could listen there). */
  readonly loopback: boolean;
  /** The scopes the user is asked to grant, each with the words of its {@link ScopeDefinition}. */
  readonly scopes: readonly {
    /** The scope token. */
    readonly name: string;
    /** What granting it means. */
    readonly description: string;
  }[];
  /**
   * Scopes the client asked for that this user cannot grant (the scope policy's `grantable` left
   * them out): they will not be in the tokens, and the page should say so. Empty when none.
   */
  readonly notGrantable: readonly {
    /** The scope token. */
    readonly name: string;
    /** What granting it would mean. */
    readonly description: string;
  }[];
  /** The resources (RFC 8707) the tokens will be for. */
  readonly resources: readonly string[];
  /** Where the form posts. */
  readonly action: string;
  /** Hidden fields the form must post back unchanged, plus `decision=allow` or `decision=deny`. */
  readonly fields: Readonly<Record<string, string>>;
  /** The signed-in user who decides. */
  readonly userId: string;
  /** {@link AuthenticatedUser.name}, when the host gave one. */
  readonly userName?: string;
  /** The request's `ui_locales`, most preferred first. */
  readonly uiLocales?: readonly string[];
}

/**
 * Options of dynamic client registration (RFC 7591).
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage, OAuthError } from 'portcullis';
 *
 * createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   registration: {
 *     allowConfidentialClients: false, // public loopback clients only
 *     unusedClientTtlSeconds: 24 * 3600,
 *     policy: ({ metadata }) => {
 *       if (metadata.client_name === undefined) {
 *         throw new OAuthError('invalid_client_metadata', 'client_name is required here');
 *       }
 *     },
 *   },
 * });
 * ```
 * @see RFC 7591 §2, §3; RFC 8252 §7.3, §8.4
 * @group Client Registration (RFC 7591)
 */
export interface RegistrationOptions {
  /** Serve the registration endpoint. Default true. */
  enabled?: boolean;
  /**
   * Called with the validated metadata before a client is stored; throw an {@link OAuthError} to
   * refuse (e.g. `invalid_token` with 401 to require an initial access token, RFC 7591 §3).
   */
  policy?: (context: {
    readonly request: OAuthRequest;
    readonly metadata: ClientMetadata;
  }) => void | Promise<void>;
  /** Accept `https` redirect URIs at registration. Default false: loopback only (spec §5.3). */
  allowHttpsRedirectUris?: boolean;
  /** Accept confidential clients (`client_secret_post`, and Basic where enabled). Default true. */
  allowConfidentialClients?: boolean;
  /** A client that never completes a token request is deleted after this many seconds. Default 7 days; 0 keeps it. */
  unusedClientTtlSeconds?: number;
  /** Maximum number of `redirect_uris`. Default 10. */
  maxRedirectUris?: number;
}

/**
 * Token lifetimes and formats.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   tokens: {
 *     accessTokenTtlSeconds: 300, // resource servers verifying JWTs alone see revocations within 5 min
 *     refreshGraceSeconds: 5, // agents that refresh from several processes at once
 *   },
 * });
 * ```
 * @see RFC 6749 §4.1.2 (code lifetime), §6 (refresh); RFC 9068 (JWT access tokens); RFC 9700 §4.14.2
 * @group Tokens and Keys (RFC 6749 §5, RFC 9068)
 */
export interface TokenOptions {
  /** Authorization code lifetime. Default 60 s (RFC 6749 §4.1.2 caps it at 10 minutes). */
  codeTtlSeconds?: number;
  /** Access token lifetime. Default 900 s: short, because a JWKS-only resource server cannot see revocations. */
  accessTokenTtlSeconds?: number;
  /** Refresh token idle lifetime: each rotation starts it again. Default 30 days. */
  refreshTokenIdleTtlSeconds?: number;
  /** Absolute lifetime of a grant: no refresh after it. Default 90 days. */
  grantTtlSeconds?: number;
  /** ID token lifetime. Default 3600 s. */
  idTokenTtlSeconds?: number;
  /** How long a user has to log in and decide. Default 600 s. */
  pendingAuthorizationTtlSeconds?: number;
  /** `jwt` (RFC 9068) or `opaque`. Default `jwt`. */
  accessTokenFormat?: 'jwt' | 'opaque';
  /**
   * Seconds during which presenting an already rotated refresh token again returns the same
   * successor instead of revoking the grant, for agents that retry in parallel. Default 0 (off).
   */
  refreshGraceSeconds?: number;
  /** Issue a new ID token on refresh (OIDC Core §12.2 makes it optional). Default false. */
  idTokenOnRefresh?: boolean;
}

/**
 * Signing keys.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * // Keys from a secret manager: never generated, never stored.
 * declare const privateJwk: Record<string, unknown>; // e.g. { kty: 'EC', crv: 'P-256', d: '...', alg: 'ES256', ... }
 * createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   keys: { privateJwks: [privateJwk], idTokenAlg: 'ES256', accessTokenAlg: 'ES256' },
 * });
 * ```
 * @see RFC 7517 (JWK), RFC 7518 §3 (RS256, ES256), OpenID Connect Discovery §3
 * @group Tokens and Keys (RFC 6749 §5, RFC 9068)
 */
export interface KeyOptions {
  /**
   * Private JWKs to sign with, each with `alg` (and `kid`, or one is computed). When given, keys
   * are not generated nor read from storage.
   */
  privateJwks?: readonly Readonly<Record<string, unknown>>[];
  /** Default algorithm of ID tokens (clients may register another). Default `RS256`. */
  idTokenAlg?: 'RS256' | 'ES256';
  /** Algorithm of JWT access tokens. Default `ES256`, about seven times cheaper to sign than RS256. */
  accessTokenAlg?: 'RS256' | 'ES256';
  /** How often an instance re-reads the key set from storage, to pick up rotations. Default 60 s. */
  refreshIntervalSeconds?: number;
}

/**
 * A resource server allowed to introspect tokens issued for its resources (RFC 7662 §2.1).
 *
 * @example
 * ```ts
 * import type { IntrospectionCaller } from 'portcullis';
 *
 * const notesApi: IntrospectionCaller = {
 *   clientId: 'notes-api',
 *   clientSecret: process.env.NOTES_API_SECRET ?? '', // at least 16 characters
 *   resources: ['https://api.example.com'],
 * };
 * ```
 * @see RFC 7662 §2.1, §4
 * @group Token Introspection (RFC 7662)
 */
export interface IntrospectionCaller {
  /** The id it authenticates with (`client_secret_basic` or `client_secret_post`). */
  clientId: string;
  /** The secret it authenticates with (hashed at start-up, never kept). */
  clientSecret: string;
  /** The resources whose tokens it may see. */
  resources: readonly string[];
}

/**
 * Token introspection (RFC 7662).
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   resources: [{ resource: 'https://api.example.com' }],
 *   introspection: {
 *     callers: [{ clientId: 'notes-api', clientSecret: 'a-long-random-secret', resources: ['https://api.example.com'] }],
 *   },
 * });
 * ```
 * @see RFC 7662 §2
 * @group Token Introspection (RFC 7662)
 */
export interface IntrospectionOptions {
  /** Serve the introspection endpoint. Default true. */
  enabled?: boolean;
  /** Resource servers that may introspect tokens whose audience includes one of their resources. */
  callers?: readonly IntrospectionCaller[];
}

/**
 * The consent step.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   consent: { remember: false }, // ask every time, for every client
 * });
 * ```
 * @see RFC 6749 §10.2; RFC 8252 §8.6
 * @group Login and Consent
 */
export interface ConsentOptions {
  /** Replace the built-in page. Return HTML (sent with the library's security headers) or a whole response. */
  render?: (context: ConsentPageContext) => string | OAuthResponse | Promise<string | OAuthResponse>;
  /** Remember consent per user and client, so the scope policy may skip the page. Default true. */
  remember?: boolean;
}

/**
 * A client configured by the host rather than registered (e.g. a web app with an https callback).
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   clients: [
 *     {
 *       clientId: 'web',
 *       clientSecret: process.env.WEB_CLIENT_SECRET ?? 'a-long-random-secret',
 *       redirectUris: ['https://app.example.com/oauth/callback'],
 *       clientName: 'Example web app',
 *     },
 *   ],
 * });
 * ```
 * @see RFC 6749 §2 (client registration), §2.3.1 (client secrets)
 * @group Client Registration (RFC 7591)
 */
export interface StaticClientOptions {
  /** The `client_id` (1 to 200 characters). */
  clientId: string;
  /** For confidential clients; at least 16 characters, hashed at start-up. */
  clientSecret?: string;
  /** Exact redirect URIs: loopback (any port matches) or https. */
  redirectUris: readonly string[];
  /** Name shown on the consent page. */
  clientName?: string;
  /** Space-separated scopes the client may request. Default: any scope the policy supports. */
  scope?: string;
  /**
   * Default `client_secret_post` with a secret, `none` without; `client_secret_basic` needs
   * {@link AuthorizationServerOptions.clientSecretBasic}.
   */
  tokenEndpointAuthMethod?: 'none' | 'client_secret_post' | 'client_secret_basic';
}

/**
 * Bounds of the metadata document cache (draft-ietf-oauth-client-id-metadata-document-01 §4.4).
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   clientIdMetadataDocuments: { enabled: true, cache: { maxTtlSeconds: 600, maxEntries: 200 } },
 * });
 * ```
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4.4; RFC 9111 §5.2.2
 * @group Client Registration (RFC 7591)
 */
export interface ClientIdMetadataDocumentCacheOptions {
  /** Lifetime of a valid document served without `Cache-Control: max-age`. Default 300 s. */
  defaultTtlSeconds?: number;
  /** A positive `max-age` below this is raised to it. Default 60 s. */
  minTtlSeconds?: number;
  /** A `max-age` above this is lowered to it, so a changed document is seen within it. Default 3600 s. */
  maxTtlSeconds?: number;
  /** The most documents kept (least recently used evicted first); 0 disables caching. Default 1000. */
  maxEntries?: number;
}

/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document-01): `https` client
 * ids whose metadata the server fetches. Documents are validated, fetched with SSRF defences and
 * cached within bounds; see docs/security.md.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   clientIdMetadataDocuments: { enabled: true, allowedHosts: ['*.example.com'], timeoutMs: 3000 },
 * });
 * ```
 * @see draft-ietf-oauth-client-id-metadata-document-01 §3, §4, §6.5, §6.6
 * @group Client Registration (RFC 7591)
 */
export interface ClientIdMetadataDocumentOptions {
  /** Accept `https` client ids that point at a metadata document. Default false. */
  enabled?: boolean;
  /** Total time for resolving, connecting and reading a document, in milliseconds. Default 5000. */
  timeoutMs?: number;
  /** Time to connect and finish the TLS handshake, in milliseconds (default fetcher). Default 2000. */
  connectTimeoutMs?: number;
  /** Largest document accepted, in bytes (draft §6.6 recommends 5 KB). Default 5120. */
  maxBytes?: number;
  /** Most `redirect_uris` a document may list. Default 10. */
  maxRedirectUris?: number;
  /** Cache bounds. */
  cache?: ClientIdMetadataDocumentCacheOptions;
  /**
   * When set, only documents on these hosts are accepted: exact host names, or `*.example.com` for
   * any name below `example.com`. Default: any host with a public address.
   */
  allowedHosts?: readonly string[];
  /**
   * Special-use address ranges (CIDR or single addresses) that may be fetched anyway, e.g. an
   * intranet host or a test server on loopback. Default: none; every RFC 6890 range is refused.
   */
  allowSpecialUseAddresses?: readonly string[];
  /** Resolves host names for the default fetcher. Default: the system resolver (`dns.lookup`). */
  lookup?: HostLookup;
  /** PEM certificates the default fetcher trusts instead of Node's roots (tests, private PKI). Default: Node's roots. */
  ca?: string | readonly string[];
  /** `User-Agent` of the default fetcher. Default `portcullis (client metadata fetcher)`. */
  userAgent?: string;
  /**
   * Replaces the default `node:https` fetcher (Workers, an egress proxy, tests). It must honour the
   * {@link MetadataFetcher} contract: no redirects, vetted addresses, size and time limits.
   * Default: `createNodeMetadataFetcher` with the options above.
   */
  fetcher?: MetadataFetcher;
}

/**
 * Text of the discovery documents that does not follow from other options.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   metadata: { serviceName: 'Example', serviceDocumentation: 'https://example.com/docs/oauth' },
 * });
 * ```
 * @see RFC 8414 §2 (`service_documentation`, `ui_locales_supported`, `op_policy_uri`, `op_tos_uri`)
 * @group Discovery (RFC 8414, RFC 9728)
 */
export interface MetadataOptions {
  /** `service_documentation`. */
  serviceDocumentation?: string;
  /** `ui_locales_supported`. */
  uiLocalesSupported?: readonly string[];
  /** `op_policy_uri`. */
  policyUri?: string;
  /** `op_tos_uri`. */
  tosUri?: string;
  /** Name shown on the library's HTML pages. Default `Authorization`. */
  serviceName?: string;
}

/**
 * Options of {@link createAuthorizationServer}. Only `issuer` and `storage` are required.
 * docs/configuration.md gives every option's default and the reason for it.
 *
 * @example
 * ```ts
 * import { type AuthorizationServerOptions, courseSchoolScopes, createScopePolicy, memoryStorage } from 'portcullis';
 *
 * const options: AuthorizationServerOptions = {
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   scopePolicy: createScopePolicy({ registry: courseSchoolScopes }),
 *   authenticate: async () => null, // read your session here
 *   loginUrl: '/login',
 * };
 * ```
 * @see RFC 6749, RFC 8414 §2 (`issuer`)
 * @group Configuration
 */
export interface AuthorizationServerOptions {
  /**
   * The issuer identifier (RFC 8414 §2): an https URL without query, fragment or trailing slash,
   * written in normal form (lower-case scheme and host, no default port, no user info);
   * `http://127.0.0.1:<port>` / `http://localhost:<port>` are accepted for local development.
   * Every advertised URL is built from it, never from the Host header.
   */
  issuer: string;
  /** Where clients, codes, grants, tokens and keys live. */
  storage: Storage;
  /** Scopes and consent rules. Default: `createScopePolicy()` (the OIDC scopes only). */
  scopePolicy?: ScopePolicy;
  /** The resources tokens may be for. Default: the issuer itself. The first is the default audience. */
  resources?: readonly ProtectedResourceOptions[];
  /** Endpoint paths. */
  paths?: Partial<EndpointPaths>;
  /** Who is signed in, read from the request (a session cookie). Required for the authorization endpoint. */
  authenticate?: (request: OAuthRequest) => AuthenticatedUser | null | Promise<AuthenticatedUser | null>;
  /** Where to send a browser that must log in: a URL (gets `return_to`) or a function returning one. */
  loginUrl?: string | ((context: LoginRedirectContext) => string);
  /**
   * Claims of a user for the granted scopes, released at UserInfo (ID tokens carry only `sub` and
   * protocol claims). Default: only `sub`.
   */
  claims?: (userId: string, scope: readonly string[]) => UserClaims | Promise<UserClaims>;
  /** Dynamic client registration. */
  registration?: RegistrationOptions;
  /** Clients configured by the host. */
  clients?: readonly StaticClientOptions[];
  /** Offer `client_secret_basic` besides `client_secret_post`. Default false (spec §5.1). */
  clientSecretBasic?: boolean;
  /** Lifetimes and formats. */
  tokens?: TokenOptions;
  /** Signing keys. */
  keys?: KeyOptions;
  /** Token introspection. */
  introspection?: IntrospectionOptions;
  /** Consent page and memory. */
  consent?: ConsentOptions;
  /** Client ID Metadata Documents. */
  clientIdMetadataDocuments?: ClientIdMetadataDocumentOptions;
  /** Rate limiting; none by default. */
  rateLimiter?: RateLimiter;
  /** The client IP used for rate limiting. Default: the adapter's peer address. */
  clientIp?: (request: OAuthRequest) => string | undefined;
  /** Audit events. */
  onEvent?: EventListener;
  /** Text of the discovery documents and pages. */
  metadata?: MetadataOptions;
  /** Largest accepted request body, in bytes. Default 64 KiB. */
  maxBodyBytes?: number;
  /** How often expired records are deleted, in seconds; 0 turns it off. Default 300. */
  housekeepingIntervalSeconds?: number;
  /**
   * How long, in seconds, a registered client's record read from storage is reused by this
   * instance before it is read again; 0 reads it on every request. Default 5. Saves one storage read
   * per token, introspection, revocation and authorization request. The server's own change to a
   * client (its first code exchange clears an unused registration's expiry) is seen at once; a
   * change made by another instance, or directly in the storage, is seen within this many seconds.
   * A cached client is never served past its `expiresAt`. Configured (`clients`) and metadata-document clients are not affected.
   * @see docs/configuration.md (caches and their windows)
   */
  clientCacheSeconds?: number;
  /** Logger. Default: silent. */
  logger?: Logger;
  /** Clock returning epoch milliseconds. Default `Date.now`. */
  clock?: Clock;
  /** Random source. Default Web Crypto. */
  random?: RandomSource;
}
