/**
 * Options of {@link createAuthorizationServer}: one zod schema is the source of truth for their
 * types (`z.input`), the configuration they resolve to (`z.output`), and every bound; it applies
 * every default from {@link DEFAULTS} (`defaults.ts`). Each option's documentation sits on its
 * schema property, and the public types below inherit it (hovers and the API reference show it).
 * Invalid options fail with an {@link InvalidOptionsError} naming each of them. The building
 * blocks (URLs, paths, durations, messages) are in `option-checks.ts`; what the host's callbacks
 * receive is in `callbacks.ts`.
 * @module
 */
import { z } from 'zod';
import type { AuthenticatedUser, ConsentPageContext, LoginRedirectContext, UserClaims } from './callbacks.js';
import type { HostLookup, MetadataFetcher } from './cimd/fetcher.js';
import { parseAllowedAddresses } from './cimd/node-fetcher.js';
import { type Clock, defaultLogger, type Logger } from './core/context.js';
import { type RandomSource, secureRandom } from './core/crypto.js';
import type { EventListener } from './core/events.js';
import type { OAuthRequest, OAuthResponse } from './core/http.js';
import type { RateLimiter } from './core/rate-limit.js';
import { DEFAULTS } from './defaults.js';
import type { KeyWrapping } from './keys/key-store.js';
import {
  because,
  fn,
  implementing,
  list,
  optionMessages,
  path,
  positiveSeconds,
  seconds,
  signingAlg,
  unlessNormalForm,
  webUrl,
} from './option-checks.js';
import { clientKeyMetadataProblem } from './protocol/client-jwks.js';
import { parseAddressRange } from './protocol/ip-address.js';
import { SIGNATURE_ALGORITHMS, type SignatureAlgorithm } from './protocol/public-jwk.js';
import { checkRegisteredRedirectUri } from './protocol/redirect-uri.js';
import { createScopePolicy, type ScopePolicy } from './scopes/policy.js';
import { missingStorageMethods } from './storage/shape.js';
import type { ClientMetadata, Storage } from './storage/types.js';

// What the host's callbacks receive, and the defaults, are part of the options' public surface.
export type { AuthenticatedUser, ConsentPageContext, LoginRedirectContext, UserClaims } from './callbacks.js';
export { DEFAULT_MAX_BODY_BYTES, DEFAULT_PATHS, DEFAULTS } from './defaults.js';

// ---- the schema ------------------------------------------------------------------------------------

const pathsSchema = z.strictObject({
  /** Authorization endpoint (GET and POST). */
  authorization: path.default(DEFAULTS.paths.authorization),
  /** Where the consent form posts the user's decision. */
  authorizationDecision: path.default(DEFAULTS.paths.authorizationDecision),
  /** Token endpoint. */
  token: path.default(DEFAULTS.paths.token),
  /** Dynamic client registration (RFC 7591). */
  registration: path.default(DEFAULTS.paths.registration),
  /** OIDC UserInfo. */
  userinfo: path.default(DEFAULTS.paths.userinfo),
  /** Token revocation (RFC 7009). */
  revocation: path.default(DEFAULTS.paths.revocation),
  /** Token introspection (RFC 7662). */
  introspection: path.default(DEFAULTS.paths.introspection),
  /** The public JWK Set. */
  jwks: path.default(DEFAULTS.paths.jwks),
});

const resourceSchema = z.strictObject({
  /** The resource identifier: an absolute https URL (http only on loopback), no fragment. */
  resource: webUrl('a resource identifier', { allowQuery: true }),
  /**
   * The scopes this resource uses, advertised as `scopes_supported` of its protected-resource
   * metadata (RFC 9728 §2). MCP clients request exactly these when no challenge names a scope, so
   * list only what the resource's operations need; `[]` advertises none. Default: every scope the
   * policy supports, allowed only while there is one resource; with several, each says its own.
   */
  scopes: list(z.string()).optional(),
  /** `resource_name` of the metadata. */
  name: z.string().max(200).optional(),
  /** `resource_documentation` of the metadata. */
  documentation: webUrl('resource documentation', { allowQuery: true }).optional(),
});

const registrationSchema = z.strictObject({
  /** Serve the registration endpoint. */
  enabled: z.boolean().default(DEFAULTS.registration.enabled),
  /**
   * Called with the validated metadata before a client is stored; throw an {@link OAuthError} to
   * refuse (e.g. `invalid_token` with 401 to require an initial access token, RFC 7591 §3).
   */
  policy:
    fn<
      (context: { readonly request: OAuthRequest; readonly metadata: ClientMetadata }) => void | Promise<void>
    >('context => void').optional(),
  /** Accept `https` redirect URIs at registration; by default loopback only (RFC 8252 §7.3). */
  allowHttpsRedirectUris: z.boolean().default(DEFAULTS.registration.allowHttpsRedirectUris),
  /** Accept confidential clients (`client_secret_post`, and Basic where enabled). */
  allowConfidentialClients: z.boolean().default(DEFAULTS.registration.allowConfidentialClients),
  /** A client that never completes a token request is deleted after this many seconds; 0 keeps it. */
  unusedClientTtlSeconds: seconds.default(DEFAULTS.registration.unusedClientTtlSeconds),
  /** Maximum number of `redirect_uris`. */
  maxRedirectUris: z.number().int().min(1).max(100).default(DEFAULTS.registration.maxRedirectUris),
});

const staticClientSchema = z
  .strictObject({
    /** The `client_id`. */
    clientId: z.string().min(1).max(200),
    /** For confidential clients; hashed at start-up, never kept. */
    clientSecret: z.string().min(16).optional(),
    /**
     * Exact redirect URIs: loopback (any port matches) or https. At least one for the
     * authorization code grant; none for a client that only uses `client_credentials`.
     */
    redirectUris: list(z.string().max(2000)).default(() => []),
    /**
     * The grants the client may use. Default `['authorization_code', 'refresh_token']`.
     * `client_credentials` (a headless agent acting for itself, RFC 6749 §4.4) needs the
     * `clientCredentials` option and a secret or `private_key_jwt`; `refresh_token` needs
     * `authorization_code`.
     */
    grantTypes: list(z.enum(['authorization_code', 'refresh_token', 'client_credentials']), 1).optional(),
    /** Name shown on the consent page. */
    clientName: z.string().max(200).optional(),
    /** Space-separated scopes the client may request. Default: any scope the policy supports. */
    scope: z.string().optional(),
    /**
     * Default `client_secret_post` with a secret, `none` without; `client_secret_basic` needs
     * the `clientSecretBasic` option (on by default); `private_key_jwt` needs `jwks` or `jwksUri`
     * and no secret.
     */
    tokenEndpointAuthMethod: z
      .enum(['none', 'client_secret_post', 'client_secret_basic', 'private_key_jwt'])
      .optional(),
    /** For `private_key_jwt`: the client's public keys (a JWK Set), checked at start-up. */
    jwks: z
      .custom<{ readonly keys: readonly object[] }>(
        (value) =>
          typeof value === 'object' && value !== null && Array.isArray((value as { keys?: unknown }).keys),
        'must be a JWK Set ({ keys: [...] })',
      )
      .optional(),
    /** For `private_key_jwt`: where the client publishes its public keys (https), fetched when needed. */
    jwksUri: z.string().max(2000).optional(),
    /**
     * True: every token request of this client must carry a DPoP proof, so its tokens are always
     * bound to its key (`dpop_bound_access_tokens`, RFC 9449 §5.2). Default: proofs are optional.
     */
    dpopBoundAccessTokens: z.boolean().optional(),
  })
  .superRefine((client, ctx) => {
    client.redirectUris.forEach((uri, index) => {
      const problem = checkRegisteredRedirectUri(uri, true);
      if (problem !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['redirectUris', index], message: `${uri}: ${problem}` });
      }
    });
    const method = client.tokenEndpointAuthMethod;
    const usesSecret = method === 'client_secret_post' || method === 'client_secret_basic';
    if (method !== undefined && usesSecret !== (client.clientSecret !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tokenEndpointAuthMethod'],
        message: 'a client secret goes with a secret auth method, and only then',
      });
    }
    const grants = client.grantTypes ?? ['authorization_code', 'refresh_token'];
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (grants.includes('authorization_code') && client.redirectUris.length === 0) {
      issue('redirectUris', 'the authorization_code grant needs at least one redirect URI');
    }
    if (grants.includes('refresh_token') && !grants.includes('authorization_code')) {
      issue(
        'grantTypes',
        'refresh_token comes with authorization_code (client_credentials issues no refresh token)',
      );
    }
    if (
      grants.includes('client_credentials') &&
      client.clientSecret === undefined &&
      method !== 'private_key_jwt'
    ) {
      issue(
        'grantTypes',
        'client_credentials is for confidential clients: give a clientSecret, or use private_key_jwt',
      );
    }
  });

/** One of {@link SIGNATURE_ALGORITHMS}: the asymmetric algorithms of client assertions and DPoP proofs. */
const signatureAlgorithm = z.enum(SIGNATURE_ALGORITHMS as [SignatureAlgorithm, ...SignatureAlgorithm[]]);

const privateKeyJwtSchema = z.strictObject({
  /**
   * Accept `private_key_jwt` (RFC 7523 §2.2): clients registered, or described by a metadata
   * document, with `jwks` or `jwks_uri` authenticate with a JWT signed by their private key.
   */
  enabled: z.boolean().default(DEFAULTS.privateKeyJwt.enabled),
  /**
   * The `alg`s accepted, advertised as `token_endpoint_auth_signing_alg_values_supported`.
   * Asymmetric only: `none` and HMAC are never accepted for this method.
   */
  algorithms: list(signatureAlgorithm, 1).default(() => [...DEFAULTS.privateKeyJwt.algorithms]),
  /** The longest accepted assertion lifetime (`exp` after `iat` and after now), in seconds: 10 to 3600. */
  maxLifetimeSeconds: z.number().int().min(10).max(3600).default(DEFAULTS.privateKeyJwt.maxLifetimeSeconds),
});

const clientCredentialsSchema = z.strictObject({
  /**
   * Offer the `client_credentials` grant (RFC 6749 §4.4) to confidential clients that register
   * it: the client acts for itself, within the scopes the scope policy's `clientCredentialsScopes`
   * allows it (by default the client's registered `scope`), with no refresh token.
   */
  enabled: z.boolean().default(DEFAULTS.clientCredentials.enabled),
});

const tokensSchema = z.strictObject({
  /** Authorization code lifetime in seconds (RFC 6749 §4.1.2 caps it at 10 minutes). */
  codeTtlSeconds: z
    .number()
    .int()
    .min(1)
    .max(600, because('RFC 6749 §4.1.2'))
    .default(DEFAULTS.tokens.codeTtlSeconds),
  /** Access token lifetime in seconds: short, because a JWKS-only resource server cannot see revocations. */
  accessTokenTtlSeconds: positiveSeconds.default(DEFAULTS.tokens.accessTokenTtlSeconds),
  /** Refresh token idle lifetime in seconds: each rotation starts it again. */
  refreshTokenIdleTtlSeconds: positiveSeconds.default(DEFAULTS.tokens.refreshTokenIdleTtlSeconds),
  /** Absolute lifetime of a grant in seconds: no refresh after it. */
  grantTtlSeconds: positiveSeconds.default(DEFAULTS.tokens.grantTtlSeconds),
  /** ID token lifetime in seconds. */
  idTokenTtlSeconds: positiveSeconds.default(DEFAULTS.tokens.idTokenTtlSeconds),
  /** How long a user has to log in and decide, in seconds. */
  pendingAuthorizationTtlSeconds: positiveSeconds.default(DEFAULTS.tokens.pendingAuthorizationTtlSeconds),
  /** `jwt` (RFC 9068) or `opaque`. */
  accessTokenFormat: z.enum(['jwt', 'opaque']).default(DEFAULTS.tokens.accessTokenFormat),
  /**
   * Seconds during which presenting an already rotated refresh token again (same client) returns
   * the same successor instead of revoking the grant: a retry after a lost response, or agents
   * refreshing in parallel. 0 turns it off.
   */
  refreshGraceSeconds: z
    .number()
    .int()
    .min(0)
    .max(60, because('a grace is for retries, not reuse'))
    .default(DEFAULTS.tokens.refreshGraceSeconds),
  /** Issue a new ID token on refresh (OIDC Core §12.2 makes it optional). */
  idTokenOnRefresh: z.boolean().default(DEFAULTS.tokens.idTokenOnRefresh),
  /**
   * Refresh tokens, opaque access tokens and JWT `jti`s begin with the time they were made, and
   * storage keys them by it, so that the token tables stay flat as they grow. Tokens of either
   * kind are read whatever this says. `false` issues tokens as earlier releases did: for the
   * first rollout of several instances from such a release, whose old instances would not find
   * the new tokens (then set it back).
   * @see docs/upgrading.md, "Tokens carry their time"
   */
  timeInTokens: z.boolean().default(DEFAULTS.tokens.timeInTokens),
});

const privateJwkSchema = z
  .record(z.string(), z.unknown())
  .readonly()
  .superRefine((jwk, ctx) => {
    if (jwk.alg !== 'RS256' && jwk.alg !== 'ES256')
      ctx.addIssue({ code: 'custom', path: ['alg'], message: 'every key needs alg RS256 or ES256' });
    if (typeof jwk.d !== 'string')
      ctx.addIssue({ code: 'custom', path: ['d'], message: 'every key must be private (have d)' });
  });

const keysSchema = z
  .strictObject({
    /**
     * Private JWKs to sign with, each with `alg` (and `kid`, or one is computed). When given, keys
     * are not generated nor read from storage.
     */
    privateJwks: list(privateJwkSchema, 1).optional(),
    /** Default algorithm of ID tokens (clients may register another). */
    idTokenAlg: signingAlg.default(DEFAULTS.keys.idTokenAlg),
    /** Algorithm of JWT access tokens. ES256 is about seven times cheaper to sign than RS256. */
    accessTokenAlg: signingAlg.default(DEFAULTS.keys.accessTokenAlg),
    /** How often an instance re-reads the key set from storage, to pick up rotations, in seconds. */
    refreshIntervalSeconds: positiveSeconds.default(DEFAULTS.keys.refreshIntervalSeconds),
    /**
     * Wraps the private keys the server stores (generated and rotated keys) and unwraps them when it
     * reads them: `{ wrap, unwrap }` over a KMS or a secret from the environment, so that storage
     * never holds a private key in the clear. A key that cannot be unwrapped fails the start
     * (`StartupError` `signing_keys_unavailable`). Default: stored as JWK text.
     * @see docs/security.md, "Key custody"
     */
    wrapping: implementing<KeyWrapping>('KeyWrapping', ['wrap', 'unwrap']).optional(),
  })
  .superRefine((keys, ctx) => {
    if (keys.privateJwks === undefined) return;
    if (keys.wrapping !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['wrapping'],
        message: 'wraps stored keys, and keys from privateJwks are never stored: remove one of them',
      });
    }
    for (const option of ['idTokenAlg', 'accessTokenAlg'] as const) {
      if (!keys.privateJwks.some((jwk) => jwk.alg === keys[option])) {
        ctx.addIssue({
          code: 'custom',
          path: ['privateJwks'],
          message: `no ${keys[option]} key (${option})`,
        });
      }
    }
  });

const introspectionCallerSchema = z.strictObject({
  /** The id it authenticates with (`client_secret_basic` or `client_secret_post`). */
  clientId: z.string().min(1),
  /** The secret it authenticates with (hashed at start-up, never kept). */
  clientSecret: z.string().min(16),
  /** The resources whose tokens it may see. */
  resources: list(z.string(), 1),
});

const introspectionSchema = z.strictObject({
  /** Serve the introspection endpoint. */
  enabled: z.boolean().default(DEFAULTS.introspection.enabled),
  /** Resource servers that may introspect tokens whose audience includes one of their resources. */
  callers: list(introspectionCallerSchema).default(DEFAULTS.introspection.callers),
});

const dpopNoncesSchema = z.strictObject({
  /**
   * The HMAC key nonces are made with: at least 32 characters, the same on every instance (a nonce
   * issued by one is accepted by all). Keep it with your other secrets.
   */
  secret: z.string().min(32, 'must be at least 32 characters'),
  /** Length of a nonce window, in seconds: a nonce is accepted for one to two windows. */
  windowSeconds: z.number().int().min(10).max(3600).default(DEFAULTS.dpop.nonces.windowSeconds),
});

const dpopSchema = z.strictObject({
  /**
   * Accept DPoP proofs (RFC 9449) at the token endpoint, UserInfo and `server.guard(...)`, and
   * advertise `dpop_signing_alg_values_supported`. A client that sends no proof gets bearer tokens
   * as before; false ignores the `DPoP` header (tokens are never bound).
   */
  enabled: z.boolean().default(DEFAULTS.dpop.enabled),
  /** The proof algorithms accepted and advertised (asymmetric only). */
  algorithms: list(signatureAlgorithm, 1).default(() => [...DEFAULTS.dpop.algorithms]),
  /** How far a proof's `iat` may be from now, either way, in seconds. */
  iatWindowSeconds: z.number().int().min(5).max(300).default(DEFAULTS.dpop.iatWindowSeconds),
  /**
   * Server nonces (RFC 9449 §8, §9): when set, every proof must carry a current nonce, which the
   * server hands out in `DPoP-Nonce` headers (a proof without one is answered `use_dpop_nonce`).
   * Off by default: nonces cost each client one extra round trip, and the `iat` window with the
   * replay store already bounds what a stolen proof is worth.
   */
  nonces: dpopNoncesSchema.optional(),
});

const userinfoSchema = z.strictObject({
  /**
   * Resources (from `resources`) whose access tokens UserInfo accepts besides tokens for the issuer
   * itself. Default: none, so a token issued only for another resource server, which could replay
   * it, gets `401 invalid_token`. Add a resource only if its server is yours.
   */
  audiences: list(z.string()).default(DEFAULTS.userinfo.audiences),
});

const consentSchema = z.strictObject({
  /** Replace the built-in page. Return HTML (sent with the library's security headers) or a whole response. */
  render:
    fn<(context: ConsentPageContext) => string | OAuthResponse | Promise<string | OAuthResponse>>(
      'context => html',
    ).optional(),
  /** Remember consent per user and client, so the scope policy may skip the page. */
  remember: z.boolean().default(DEFAULTS.consent.remember),
});

const cimdDefaults = DEFAULTS.clientIdMetadataDocuments;

const cimdCacheSchema = z
  .strictObject({
    /** Lifetime of a valid document served without `Cache-Control: max-age`, in seconds. */
    defaultTtlSeconds: seconds.default(cimdDefaults.cache.defaultTtlSeconds),
    /** A positive `max-age` below this is raised to it, in seconds. */
    minTtlSeconds: seconds.default(cimdDefaults.cache.minTtlSeconds),
    /** A `max-age` above this is lowered to it, so a changed document is seen within it, in seconds. */
    maxTtlSeconds: seconds.default(cimdDefaults.cache.maxTtlSeconds),
    /** The most documents kept (least recently used evicted first); 0 disables caching. */
    maxEntries: z.number().int().min(0).max(1_000_000).default(cimdDefaults.cache.maxEntries),
  })
  .refine(
    (cache) => cache.minTtlSeconds <= cache.maxTtlSeconds,
    'minTtlSeconds must not exceed maxTtlSeconds',
  );

const cimdSchema = z.strictObject({
  /** Accept `https` client ids that point at a metadata document. */
  enabled: z.boolean().default(cimdDefaults.enabled),
  /** Total time for resolving, connecting and reading a document, in milliseconds. */
  timeoutMs: z.number().int().min(100).max(60_000).default(cimdDefaults.timeoutMs),
  /** Time to connect and finish the TLS handshake, in milliseconds (default fetcher). */
  connectTimeoutMs: z.number().int().min(100).max(60_000).default(cimdDefaults.connectTimeoutMs),
  /** Largest document accepted, in bytes (draft §6.6 recommends 5 KB). */
  maxBytes: z
    .number()
    .int()
    .min(512)
    .max(1024 * 1024)
    .default(cimdDefaults.maxBytes),
  /** Most `redirect_uris` a document may list. */
  maxRedirectUris: z.number().int().min(1).max(100).default(cimdDefaults.maxRedirectUris),
  /**
   * Most documents fetched at once; beyond it, a request that needs a fetch gets `503
   * temporarily_unavailable` with `Retry-After`, so strangers cannot make the server hold hundreds
   * of outbound sockets.
   */
  maxConcurrentFetches: z.number().int().min(1).max(1000).default(cimdDefaults.maxConcurrentFetches),
  /**
   * Most of those fetches running at once for one client address, and most it starts per minute
   * (`addressFetchesPerMinute`); beyond either, `429 too_many_requests` with `Retry-After`. The
   * address is the request's rate-limit key (`clientIp`, IPv6 cut to `ipv6PrefixLength`). One
   * address naming random subdomains (each a new host, outside `hostFetchesPerMinute`) cannot hold
   * more than this many of the `maxConcurrentFetches` slots, so another address still gets its
   * document fetched. Also bounds `jwks_uri` fetches. A request without an address is not counted.
   *
   * @example
   * ```ts
   * import { createAuthorizationServer, memoryStorage } from 'portcullis';
   *
   * await createAuthorizationServer({
   *   issuer: 'https://auth.example.com',
   *   storage: memoryStorage(),
   *   clientIdMetadataDocuments: { enabled: true, maxConcurrentFetchesPerAddress: 1, addressFetchesPerMinute: 10 },
   * });
   * ```
   */
  maxConcurrentFetchesPerAddress: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(cimdDefaults.maxConcurrentFetchesPerAddress),
  /** Most document fetches one client address starts per minute (see `maxConcurrentFetchesPerAddress`). */
  addressFetchesPerMinute: z.number().int().min(1).max(100_000).default(cimdDefaults.addressFetchesPerMinute),
  /**
   * Most fetches per host name (any port) and minute; beyond it, `503 temporarily_unavailable`.
   * Documents that were valid before are not counted, so junk naming other URLs of a host cannot
   * keep its real clients out.
   */
  hostFetchesPerMinute: z.number().int().min(1).max(100_000).default(cimdDefaults.hostFetchesPerMinute),
  /**
   * How long a failed fetch is remembered (its error answered without fetching), per URL and, when
   * no response came back, per host, in seconds; 0 remembers nothing. A remembered failure is not a
   * cached document: a fixed document is fetched once it expires.
   */
  failureCacheSeconds: seconds.max(3600).default(cimdDefaults.failureCacheSeconds),
  /** Cache bounds. */
  cache: cimdCacheSchema.prefault({}),
  /**
   * When set, only documents on these hosts are accepted: exact host names, or `*.example.com` for
   * any name below `example.com`. Default: any host with a public address.
   */
  allowedHosts: list(
    z.string().regex(/^(\*\.)?[A-Za-z0-9.-]+$/, 'must be a host name or *.suffix'),
  ).optional(),
  /**
   * Special-use address ranges (CIDR or single addresses) that may be fetched anyway, e.g. an
   * intranet host or a test server on loopback. Default: none; every RFC 6890 range is refused.
   */
  allowSpecialUseAddresses: list(
    z.string().refine((v) => parseAddressRange(v) !== undefined, 'must be an IP address or CIDR range'),
  ).optional(),
  /** Resolves host names for the default fetcher. Default: the system resolver (`dns.lookup`). */
  lookup: fn<HostLookup>('hostname => Promise<addresses>').optional(),
  /** PEM certificates the default fetcher trusts instead of Node's roots (tests, private PKI). Default: Node's roots. */
  ca: z.union([z.string(), list(z.string())]).optional(),
  /** `User-Agent` of the default fetcher. */
  userAgent: z.string().min(1).max(200).default(cimdDefaults.userAgent),
  /**
   * Replaces the default `node:https` fetcher (Workers, an egress proxy, tests). It must honour the
   * {@link MetadataFetcher} contract: no redirects, vetted addresses, size and time limits.
   * Default: `createNodeMetadataFetcher` with the options above.
   */
  fetcher: fn<MetadataFetcher>('request => Promise<response>').optional(),
});

const metadataSchema = z.strictObject({
  /** `service_documentation`. */
  serviceDocumentation: webUrl('serviceDocumentation', { allowQuery: true }).optional(),
  /** `ui_locales_supported`. */
  uiLocalesSupported: list(
    z.string().regex(/^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/, 'must be a BCP 47 tag'),
  ).optional(),
  /** `op_policy_uri`. */
  policyUri: webUrl('policyUri', { allowQuery: true }).optional(),
  /** `op_tos_uri`. */
  tosUri: webUrl('tosUri', { allowQuery: true }).optional(),
  /** Name shown on the library's HTML pages. */
  serviceName: z.string().min(1).max(100).default(DEFAULTS.metadata.serviceName),
});

/** The schema of {@link AuthorizationServerOptions} (exported for the test that checks the guide). */
export const optionsSchema = z
  .strictObject({
    /**
     * The issuer identifier (RFC 8414 §2): an https URL without query, fragment or trailing slash,
     * written in normal form (lower-case scheme and host, no default port, no user info);
     * `http://127.0.0.1:<port>` / `http://localhost:<port>` are accepted for local development.
     * Every advertised URL is built from it, never from the Host header.
     */
    issuer: webUrl('the issuer', { allowQuery: false })
      .refine((v) => !v.endsWith('/'), 'the issuer must not end with /')
      .superRefine((value, ctx) => {
        // Endpoint URLs are built from the parsed origin and path, and clients compare `iss` as a
        // string (RFC 8414 §3.3): the issuer must be written exactly as it parses.
        const normal = unlessNormalForm(value);
        if (normal !== undefined) {
          ctx.addIssue({
            code: 'custom',
            message: `the issuer must be written in normal form (lower-case scheme and host, no default port, user info or dot segments): ${normal}`,
          });
        }
      }),
    /**
     * Host names the server answers for besides the issuer's (lower case, no port; an IPv6 address
     * in brackets), e.g. the address a health check uses. A request whose `Host` names another is
     * refused `421` before any endpoint runs (DNS rebinding, ABU-06); a loopback issuer accepts
     * every loopback name. `'*'` turns the check off (only behind a proxy that checks the host).
     * Default: none.
     * @see RFC 9110 §7.2, §15.5.20
     */
    allowedHosts: list(
      z
        .string()
        .regex(
          /^(\*|\[[0-9a-f:.]+\]|[a-z0-9_-]+(\.[a-z0-9_-]+)*)$/,
          'must be a lower-case host name without port, or *',
        ),
    ).optional(),
    /** Where clients, codes, grants, tokens and keys live. */
    storage: z.custom<Storage>((value) => missingStorageMethods(value).length === 0, {
      error: (issue) =>
        `must implement the Storage interface (missing ${missingStorageMethods(issue.input).join(', ')}; docs/storage.md)`,
    }),
    /** Scopes and consent rules. Default: `createScopePolicy()` (the OIDC scopes only). */
    scopePolicy: z
      .custom<ScopePolicy>(
        (v) =>
          typeof v === 'object' &&
          v !== null &&
          Array.isArray((v as ScopePolicy).supported) &&
          typeof (v as ScopePolicy).describe === 'function' &&
          typeof (v as ScopePolicy).filterRequested === 'function',
        { error: 'must implement the ScopePolicy interface (createScopePolicy builds one)' },
      )
      .default(() => createScopePolicy()),
    /** The resources tokens may be for. Default: the issuer itself. The first is the default audience. */
    resources: list(resourceSchema, 1).optional(),
    /** Endpoint paths, relative to the issuer; any left out keep their default ({@link DEFAULT_PATHS}). */
    paths: pathsSchema.prefault({}),
    /** Who is signed in, read from the request (a session cookie). Required for the authorization endpoint. */
    authenticate:
      fn<(request: OAuthRequest) => AuthenticatedUser | null | Promise<AuthenticatedUser | null>>(
        'request => user | null',
      ).optional(),
    /** Where to send a browser that must log in: a URL (gets `return_to`) or a function returning one. */
    loginUrl: z
      .union([
        z
          .string()
          .refine((v) => v.startsWith('/') || /^https?:\/\//.test(v), 'must be a path or an http(s) URL'),
        fn<(context: LoginRedirectContext) => string>('context => url'),
      ])
      .optional(),
    /**
     * Claims of a user for the granted scopes, released at UserInfo (ID tokens carry only `sub` and
     * protocol claims). Default: only `sub`.
     */
    claims:
      fn<(userId: string, scope: readonly string[]) => UserClaims | Promise<UserClaims>>(
        '(userId, scope) => claims',
      ).optional(),
    /** Dynamic client registration (RFC 7591). */
    registration: registrationSchema.prefault({}),
    /** Clients configured by the host. */
    clients: list(staticClientSchema).optional(),
    /**
     * Offer `client_secret_basic` (HTTP Basic, RFC 6749 §2.3.1) besides `client_secret_post`, at
     * the token, revocation and introspection endpoints. Default `true`: RFC 6749 §2.3.1 says the
     * server MUST support it, and most OAuth client libraries (authlib, requests-oauthlib,
     * golang.org/x/oauth2) send secrets this way unless told otherwise. `false` refuses Basic
     * credentials with `401 invalid_client` and leaves the method out of the metadata.
     * @see RFC 6749 §2.3.1
     */
    clientSecretBasic: z.boolean().default(DEFAULTS.clientSecretBasic),
    /** `private_key_jwt` client authentication (RFC 7523): on by default. */
    privateKeyJwt: privateKeyJwtSchema.prefault({}),
    /** The `client_credentials` grant (RFC 6749 §4.4): off by default. */
    clientCredentials: clientCredentialsSchema.prefault({}),
    /** Lifetimes and formats. */
    tokens: tokensSchema.prefault({}),
    /** Signing keys. */
    keys: keysSchema.prefault({}),
    /** Token introspection (RFC 7662). */
    introspection: introspectionSchema.prefault({}),
    /** DPoP, sender-constrained tokens (RFC 9449). */
    dpop: dpopSchema.prefault({}),
    /** The UserInfo endpoint: which token audiences it accepts (OIDC Core §5.3). */
    userinfo: userinfoSchema.prefault({}),
    /** Consent page and memory. */
    consent: consentSchema.prefault({}),
    /** Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document-01). */
    clientIdMetadataDocuments: cimdSchema.prefault({}),
    /** Rate limiting; none by default. */
    rateLimiter: implementing<RateLimiter>('RateLimiter', ['consume']).optional(),
    /**
     * The client's rate-limit key: every per-address limit counts under it (an IPv6 address cut
     * to `ipv6PrefixLength`). Default: the adapter's peer address (`request.remoteAddress`; give
     * `createFetchHandler` its `remoteAddress` option on Fetch runtimes). When rate limits are
     * configured and a request has no address, per-address limits count nothing for it: the
     * server warns once. Behind reverse proxies pass
     * `createClientAddressResolver({ trustProxy }).clientIp`, which believes `X-Forwarded-For` only
     * as far as the proxies you trust and keys IPv6 clients by /64; never read that header
     * yourself without such a check, as any client can write it.
     */
    clientIp: fn<(request: OAuthRequest) => string | undefined>('request => ip').default(
      () => (request: OAuthRequest) => request.remoteAddress,
    ),
    /**
     * Bits of an IPv6 client address that make its rate-limit key (1 to 128): every address of one
     * /64 (one subscriber line, RFC 6177) shares one budget, so a site cannot multiply its buckets by
     * changing the low bits. Applied to what `clientIp` returns; IPv4 addresses are keys as they are.
     * @see RFC 4291 §2.5.4, RFC 6177
     */
    ipv6PrefixLength: z.number().int().min(1).max(128).default(DEFAULTS.ipv6PrefixLength),
    /** Audit events. */
    onEvent: fn<EventListener>('event => void').optional(),
    /** Text of the discovery documents and pages. */
    metadata: metadataSchema.prefault({}),
    /** Largest accepted request body, in bytes. */
    maxBodyBytes: z
      .number()
      .int()
      .min(1024)
      .max(16 * 1024 * 1024)
      .default(DEFAULTS.maxBodyBytes),
    /** How often expired records are deleted, in seconds; 0 turns it off. */
    housekeepingIntervalSeconds: seconds.default(DEFAULTS.housekeepingIntervalSeconds),
    /**
     * How long, in seconds, a registered client's record read from storage is reused by this
     * instance before it is read again; 0 reads it on every request. Saves one storage read per
     * token, introspection, revocation and authorization request. The server's own change to a
     * client (its first code exchange clears an unused registration's expiry) is seen at once; a
     * change made by another instance, or directly in the storage, is seen within this many seconds.
     * A cached client is never served past its `expiresAt`. Configured (`clients`) and
     * metadata-document clients are not affected.
     * @see docs/configuration.md (caches and their windows)
     */
    clientCacheSeconds: seconds.max(300).default(DEFAULTS.clientCacheSeconds),
    /**
     * Where the server's warnings and errors go. Default: {@link defaultLogger}, one JSON line per
     * warning or error on standard error (a 500 with its request id, the risky settings announced
     * at start); pass `silentLogger` to drop them.
     */
    logger: implementing<Logger>('Logger', ['debug', 'info', 'warn', 'error']).default(() => defaultLogger),
    /** Clock returning epoch milliseconds. Default `Date.now`. */
    clock: fn<Clock>('() => epoch milliseconds').default(() => Date.now),
    /** Random source. Default Web Crypto. */
    random: fn<RandomSource>('length => Uint8Array').default(() => secureRandom),
  })
  .superRefine((options, ctx) => {
    // Checks across options, run once each option is valid on its own.
    const severalResources = (options.resources?.length ?? 0) > 1;
    options.resources?.forEach((resource, index) => {
      // Defaulting every resource to every scope would make clients of each ask for all of them.
      if (severalResources && resource.scopes === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['resources', index, 'scopes'],
          message: `with several resources, say which scopes ${resource.resource} uses (its metadata's scopes_supported, which MCP clients request as a whole)`,
        });
      }
      for (const scope of resource.scopes ?? []) {
        if (options.scopePolicy.describe(scope) === undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['resources', index, 'scopes'],
            message: `scope '${scope}' of ${resource.resource} is not supported by the scope policy`,
          });
        }
      }
    });
    // UserInfo accepts only audiences this server issues tokens for (the issuer, or a resource).
    options.userinfo.audiences.forEach((audience, index) => {
      const resources = options.resources ?? [{ resource: options.issuer }];
      if (audience !== options.issuer && !resources.some((r) => r.resource === audience)) {
        ctx.addIssue({
          code: 'custom',
          path: ['userinfo', 'audiences', index],
          message: `${audience} is not one of options.resources`,
        });
      }
    });
    options.clients?.forEach((client, index) => {
      if (client.grantTypes?.includes('client_credentials') && !options.clientCredentials.enabled) {
        ctx.addIssue({
          code: 'custom',
          path: ['clients', index, 'grantTypes'],
          message: 'client_credentials needs options.clientCredentials.enabled',
        });
      }
      if (client.tokenEndpointAuthMethod === 'client_secret_basic' && !options.clientSecretBasic) {
        ctx.addIssue({
          code: 'custom',
          path: ['clients', index, 'tokenEndpointAuthMethod'],
          message: 'client_secret_basic needs options.clientSecretBasic',
        });
      }
      if (client.tokenEndpointAuthMethod === 'private_key_jwt' && !options.privateKeyJwt.enabled) {
        ctx.addIssue({
          code: 'custom',
          path: ['clients', index, 'tokenEndpointAuthMethod'],
          message: 'private_key_jwt needs options.privateKeyJwt.enabled',
        });
      }
      if (
        client.jwks !== undefined ||
        client.jwksUri !== undefined ||
        client.tokenEndpointAuthMethod === 'private_key_jwt'
      ) {
        let allowedAddresses: ReturnType<typeof parseAllowedAddresses> = [];
        try {
          allowedAddresses = parseAllowedAddresses(
            options.clientIdMetadataDocuments.allowSpecialUseAddresses,
          );
        } catch {
          // Reported on clientIdMetadataDocuments.allowSpecialUseAddresses itself.
        }
        const checked = clientKeyMetadataProblem(
          {
            token_endpoint_auth_method: client.tokenEndpointAuthMethod,
            ...(client.jwks === undefined ? {} : { jwks: client.jwks }),
            ...(client.jwksUri === undefined ? {} : { jwks_uri: client.jwksUri }),
          },
          { algorithms: options.privateKeyJwt.algorithms, allowedAddresses },
        );
        if (!checked.ok) {
          ctx.addIssue({
            code: 'custom',
            path: ['clients', index, client.jwksUri === undefined ? 'jwks' : 'jwksUri'],
            message: checked.problem,
          });
        }
      }
    });
  });

// ---- public types: the schema's input ----------------------------------------------------------------
// Interfaces that extend the schema's types keep each property's documentation in hovers and in the
// API reference (a type alias of `z.input` would show only its name there).

/**
 * Paths of the endpoints, relative to the issuer (an issuer with a path prefixes them). The
 * defaults ({@link DEFAULT_PATHS}) are `/oauth/authorize`, `/oauth/authorize/decision`,
 * `/oauth/token`, `/oauth/register`, `/oauth/userinfo`, `/oauth/revoke`, `/oauth/introspect` and
 * `/.well-known/jwks.json`. The metadata always advertises the paths in use.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, type EndpointPaths, memoryStorage } from 'portcullis';
 *
 * const paths: Partial<EndpointPaths> = { token: '/api/oauth/token', registration: '/api/oauth/register' };
 * await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage(), paths });
 * ```
 * @see RFC 8414 §2 (the endpoint members of the metadata)
 * @group Configuration
 */
export interface EndpointPaths extends z.output<typeof pathsSchema> {}

/**
 * A resource server the tokens may be for (RFC 8707 resource indicator, RFC 9728 metadata). A
 * resource on the issuer's origin gets its metadata document at the path-inserted well-known URL.
 * Its `scopes` are what its metadata advertises, and MCP clients ask for them all: with several
 * resources, each lists its own (an {@link InvalidOptionsError} names a resource without them).
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, createScopePolicy, defineScopes, memoryStorage, oidcScopes } from 'portcullis';
 *
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   scopePolicy: createScopePolicy({
 *     registry: defineScopes([
 *       ...oidcScopes,
 *       { name: 'notes:read', description: 'Read your notes' },
 *       { name: 'admin', description: 'Administer the workspace' },
 *     ]),
 *   }),
 *   resources: [
 *     { resource: 'https://auth.example.com', name: 'Example API', scopes: ['notes:read', 'admin'] },
 *     // served at https://auth.example.com/.well-known/oauth-protected-resource/mcp
 *     { resource: 'https://auth.example.com/mcp', name: 'Example MCP server', scopes: ['notes:read'] },
 *   ],
 * });
 * ```
 * @see RFC 8707 §2, RFC 9728 §2 and §3.1
 * @group Discovery (RFC 8414, RFC 9728)
 */
export interface ProtectedResourceOptions extends z.input<typeof resourceSchema> {}

/**
 * Options of dynamic client registration (RFC 7591). Defaults: {@link DEFAULTS}`.registration`.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage, OAuthError } from 'portcullis';
 *
 * await createAuthorizationServer({
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
export interface RegistrationOptions extends z.input<typeof registrationSchema> {}

/**
 * A client configured by the host rather than registered (e.g. a web app with an https callback).
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * await createAuthorizationServer({
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
 * @example
 * Clients that prove a key instead of holding a secret (`private_key_jwt`, RFC 7523), and one
 * whose tokens must always be DPoP-bound (RFC 9449):
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * declare const reportsServiceKeys: { keys: object[] }; // its public JWK Set
 *
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   clients: [
 *     {
 *       clientId: 'reports-service',
 *       redirectUris: ['https://reports.example.com/oauth/callback'],
 *       tokenEndpointAuthMethod: 'private_key_jwt',
 *       jwks: reportsServiceKeys, // checked at start-up: public keys of a supported algorithm
 *     },
 *     {
 *       clientId: 'desktop-agent',
 *       redirectUris: ['http://127.0.0.1/callback'],
 *       tokenEndpointAuthMethod: 'private_key_jwt',
 *       // where it publishes its keys; fetched when an assertion needs them, again on an unknown kid
 *       jwksUri: 'https://agent.example.com/.well-known/jwks.json',
 *       // every token request carries a DPoP proof: a token copied from its disk is useless
 *       dpopBoundAccessTokens: true,
 *     },
 *   ],
 * });
 * ```
 * @see RFC 6749 §2 (client registration), §2.3.1 (client secrets)
 * @group Client Registration (RFC 7591)
 */
export interface StaticClientOptions extends z.input<typeof staticClientSchema> {}

/**
 * `private_key_jwt` client authentication (RFC 7523 §2.2, OpenID Connect Core §9): a client
 * registered (or described by a metadata document) with `jwks` or `jwks_uri` proves itself with a
 * short-lived JWT signed by its private key, at the token, revocation and introspection endpoints.
 * Each assertion's `jti` is accepted once, through `storage.replay`, so across every instance.
 * Defaults: {@link DEFAULTS}`.privateKeyJwt` (on; ES256, RS256, EdDSA; 300 seconds).
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   privateKeyJwt: { algorithms: ['ES256', 'EdDSA'], maxLifetimeSeconds: 120 },
 * });
 * ```
 * @see RFC 7523 §2.2 and §3, RFC 7521 §4.2, OpenID Connect Core §9
 * @group Client Authentication (RFC 7523)
 */
export interface PrivateKeyJwtOptions extends z.input<typeof privateKeyJwtSchema> {}

/**
 * The `client_credentials` grant (RFC 6749 §4.4), off by default: a confidential client (secret
 * or `private_key_jwt`) registered for the grant obtains an access token for itself, within the
 * scopes the scope policy allows it, bound to the requested `resource`, without a refresh token.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   clientCredentials: { enabled: true },
 * });
 * ```
 * @see RFC 6749 §4.4; the MCP client-credentials extension
 * @group Tokens and Keys (RFC 6749 §5, RFC 9068)
 */
export interface ClientCredentialsOptions extends z.input<typeof clientCredentialsSchema> {}

/**
 * Token lifetimes and formats. Defaults: {@link DEFAULTS}`.tokens`.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * await createAuthorizationServer({
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
export interface TokenOptions extends z.input<typeof tokensSchema> {}

/**
 * Signing keys. Defaults: {@link DEFAULTS}`.keys`; without `privateJwks`, keys are generated and
 * kept in storage.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * // Keys from a secret manager: never generated, never stored.
 * declare const rsaJwk: Record<string, unknown>; // { kty: 'RSA', d: '...', alg: 'RS256', ... }
 * declare const ecJwk: Record<string, unknown>; // { kty: 'EC', crv: 'P-256', d: '...', alg: 'ES256', ... }
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   keys: { privateJwks: [rsaJwk, ecJwk], idTokenAlg: 'RS256', accessTokenAlg: 'ES256' },
 * });
 * ```
 * @see RFC 7517 (JWK), RFC 7518 §3 (RS256, ES256), OpenID Connect Discovery §3
 * @group Tokens and Keys (RFC 6749 §5, RFC 9068)
 */
export interface KeyOptions extends z.input<typeof keysSchema> {}

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
export interface IntrospectionCaller extends z.input<typeof introspectionCallerSchema> {}

/**
 * Token introspection (RFC 7662). Defaults: {@link DEFAULTS}`.introspection`.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * await createAuthorizationServer({
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
export interface IntrospectionOptions extends z.input<typeof introspectionSchema> {}

/**
 * DPoP (RFC 9449): tokens bound to a key the client holds, so that a stolen access or refresh token
 * is useless without that key. Defaults: {@link DEFAULTS}`.dpop` (on, every supported algorithm,
 * no nonces). A client opts in per request by sending a `DPoP` proof, or always with the
 * `dpop_bound_access_tokens` client metadata.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   dpop: {
 *     algorithms: ['ES256', 'EdDSA'],
 *     // Proofs must carry a server nonce; every instance shares the secret.
 *     nonces: { secret: process.env.DPOP_NONCE_SECRET ?? 'a shared secret of at least 32 characters' },
 *   },
 * });
 * ```
 * @see RFC 9449 §5 (token requests), §7 (resources), §8 and §9 (nonces)
 * @group DPoP (RFC 9449)
 */
export interface DpopOptions extends z.input<typeof dpopSchema> {}

/**
 * Server nonces of DPoP proofs (RFC 9449 §8, §9). See {@link DpopOptions}.
 *
 * @example
 * ```ts
 * import type { DpopNonceSettings } from 'portcullis';
 *
 * const nonces: DpopNonceSettings = { secret: 'a shared secret of at least 32 characters', windowSeconds: 120 };
 * ```
 * @see RFC 9449 §8
 * @group DPoP (RFC 9449)
 */
export interface DpopNonceSettings extends z.input<typeof dpopNoncesSchema> {}

/**
 * The UserInfo endpoint (OIDC Core §5.3). Defaults: {@link DEFAULTS}`.userinfo`.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * // The MCP server is the only resource, and clients that sign users in call UserInfo with its tokens.
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   resources: [{ resource: 'https://auth.example.com/mcp' }],
 *   userinfo: { audiences: ['https://auth.example.com/mcp'] },
 * });
 * ```
 * @see OIDC Core §5.3; RFC 8707 §2; RFC 9700 §4.10 (audience restriction)
 * @group Configuration
 */
export interface UserinfoOptions extends z.input<typeof userinfoSchema> {}

/**
 * The consent step. Defaults: {@link DEFAULTS}`.consent`, and the built-in page.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   consent: { remember: false }, // ask every time, for every client
 * });
 * ```
 * @see RFC 6749 §10.2; RFC 8252 §8.6
 * @group Login and Consent
 */
export interface ConsentOptions extends z.input<typeof consentSchema> {}

/**
 * Bounds of the metadata document cache (draft-ietf-oauth-client-id-metadata-document-01 §4.4).
 * Defaults: {@link DEFAULTS}`.clientIdMetadataDocuments.cache`.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   clientIdMetadataDocuments: { enabled: true, cache: { maxTtlSeconds: 600, maxEntries: 200 } },
 * });
 * ```
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4.4; RFC 9111 §5.2.2
 * @group Client Registration (RFC 7591)
 */
export interface ClientIdMetadataDocumentCacheOptions extends z.input<typeof cimdCacheSchema> {}

/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document-01): `https` client
 * ids whose metadata the server fetches. Documents are validated, fetched with SSRF defences and
 * cached within bounds; see docs/security.md. Defaults: {@link DEFAULTS}`.clientIdMetadataDocuments`.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   clientIdMetadataDocuments: { enabled: true, allowedHosts: ['*.example.com'], timeoutMs: 3000 },
 * });
 * ```
 * @see draft-ietf-oauth-client-id-metadata-document-01 §3, §4, §6.5, §6.6
 * @group Client Registration (RFC 7591)
 */
export interface ClientIdMetadataDocumentOptions extends z.input<typeof cimdSchema> {}

/**
 * Text of the discovery documents that does not follow from other options.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   metadata: { serviceName: 'Example', serviceDocumentation: 'https://example.com/docs/oauth' },
 * });
 * ```
 * @see RFC 8414 §2 (`service_documentation`, `ui_locales_supported`, `op_policy_uri`, `op_tos_uri`)
 * @group Discovery (RFC 8414, RFC 9728)
 */
export interface MetadataOptions extends z.input<typeof metadataSchema> {}

/**
 * Options of {@link createAuthorizationServer}. Only `issuer` and `storage` are required; every
 * default is in {@link DEFAULTS}, and docs/configuration.md gives each option's reason.
 *
 * @example
 * ```ts
 * import { type AuthorizationServerOptions, createScopePolicy, defineScopes, memoryStorage, oidcScopes } from 'portcullis';
 *
 * const options: AuthorizationServerOptions = {
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   scopePolicy: createScopePolicy({
 *     registry: defineScopes([...oidcScopes, { name: 'notes:read', description: 'Read your notes' }]),
 *   }),
 *   authenticate: async () => null, // read your session here
 *   loginUrl: '/login',
 * };
 * ```
 * @example
 * How clients authenticate, and the grant for clients that act for themselves:
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   // The default: secrets in HTTP Basic (RFC 6749 §2.3.1 requires it; authlib, requests-oauthlib
 *   // and golang.org/x/oauth2 send them so) as well as in the body (client_secret_post).
 *   clientSecretBasic: true,
 *   privateKeyJwt: { algorithms: ['ES256', 'EdDSA'] },
 *   clientCredentials: { enabled: true }, // off by default
 * });
 * ```
 * @see RFC 6749, RFC 8414 §2 (`issuer`)
 * @group Configuration
 */
export interface AuthorizationServerOptions extends z.input<typeof optionsSchema> {}

/** The options validated, with every default applied: what the resolve step starts from. */
export type ParsedOptions = z.output<typeof optionsSchema>;

// ---- validation ------------------------------------------------------------------------------------

/**
 * Rejected by {@link createAuthorizationServer} when options are invalid; the message names each
 * bad option, one per line.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, InvalidOptionsError, memoryStorage } from 'portcullis';
 *
 * try {
 *   await createAuthorizationServer({ issuer: 'https://auth.example.com/', storage: memoryStorage() });
 * } catch (error) {
 *   if (error instanceof InvalidOptionsError) console.error(error.problems);
 *   // [ 'options.issuer: the issuer must not end with /' ]
 * }
 * ```
 * @see RFC 8414 §2 (the issuer identifier)
 * @group Configuration
 */
export class InvalidOptionsError extends TypeError {
  override readonly name = 'InvalidOptionsError';
  /** One line per problem: `options.tokens.codeTtlSeconds: must be at most 600 (RFC 6749 §4.1.2)`. */
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid authorization server options:\n  ${problems.join('\n  ')}`);
    this.problems = problems;
  }
}

/**
 * Validates options once and applies every default.
 *
 * @param options - what the host passed (unchecked: JavaScript callers pass anything)
 * @returns the options with their defaults
 * @throws InvalidOptionsError naming every invalid option
 */
export function parseOptions(options: unknown): ParsedOptions {
  const result = optionsSchema.safeParse(options, { error: optionMessages });
  if (result.success) return result.data;
  throw new InvalidOptionsError(
    result.error.issues.map(
      (issue) => `${['options', ...issue.path.map(String)].join('.')}: ${issue.message}`,
    ),
  );
}
