/**
 * The resolve step: validated options ({@link ParsedOptions}, every default applied) become the
 * configuration every handler reads, with what derives from them computed once: URLs built from
 * the issuer, resources with their metadata locations, static secrets hashed.
 * @module
 */
import { announceRiskySettings } from './config-warnings.js';
import type { Runtime } from './core/context.js';
import { sha256 } from './core/crypto.js';
import type { OAuthRequest } from './core/http.js';
import type { EndpointPaths, LoginRedirectContext, ParsedOptions } from './options.js';
import { clientAddressKey } from './protocol/client-address.js';
import type { ClientJwks } from './protocol/client-jwks.js';
import { createDpopNonceSource, type DpopNonceSource } from './protocol/dpop-nonce.js';
import type { SignatureAlgorithm } from './protocol/public-jwk.js';
import type { ClientMetadata, ClientRecord } from './storage/types.js';

/** A protected resource with its metadata URL. */
export interface ResolvedResource {
  readonly resource: string;
  readonly scopes: readonly string[];
  readonly name: string | undefined;
  readonly documentation: string | undefined;
  /** Path of its RFC 9728 document on this origin, or `undefined` when it lives on another origin. */
  readonly metadataPath: string | undefined;
  /** Absolute URL of that document. */
  readonly metadataUrl: string | undefined;
}

/** An introspection caller with its secret hashed. */
export interface ResolvedIntrospectionCaller {
  readonly clientId: string;
  readonly secretHash: string;
  readonly resources: readonly string[];
}

type SigningAlg = ParsedOptions['keys']['idTokenAlg'];

/**
 * The algorithms of the keys the server generates (and rotates) when none are configured: both, so
 * a client may register either for its ID tokens.
 */
export const GENERATED_KEY_ALGS: readonly SigningAlg[] = Object.freeze(['RS256', 'ES256']);

/** The options used as parsed: their defaults applied, nothing derived. */
type AsParsed = Pick<
  ParsedOptions,
  | 'issuer'
  | 'allowedHosts'
  | 'storage'
  | 'scopePolicy'
  | 'authenticate'
  | 'claims'
  | 'registration'
  | 'clientSecretBasic'
  | 'privateKeyJwt'
  | 'clientCredentials'
  | 'tokens'
  | 'consent'
  | 'clientIdMetadataDocuments'
  | 'rateLimiter'
  | 'clientIp'
  | 'ipv6PrefixLength'
  | 'onEvent'
  | 'metadata'
  | 'maxBodyBytes'
  | 'housekeepingIntervalSeconds'
  | 'clientCacheSeconds'
>;

/** The resolved configuration: the parsed options and what derives from them. */
export interface ServerConfig extends Readonly<AsParsed> {
  /** The issuer's origin. */
  readonly origin: string;
  /** Clock, random source and logger. */
  readonly runtime: Runtime;
  /** The routed paths: the configured ones below the issuer's path. */
  readonly paths: Readonly<EndpointPaths>;
  /** The absolute URL of each endpoint. */
  readonly urls: Readonly<Record<keyof EndpointPaths, string>>;
  readonly resources: readonly ResolvedResource[];
  /** The first resource: the audience of a token requested without `resource`. */
  readonly defaultResource: string;
  readonly loginRedirect: ((context: LoginRedirectContext) => string) | undefined;
  /** Configured clients by id, their secrets hashed. */
  readonly staticClients: ReadonlyMap<string, ClientRecord>;
  readonly keys: ParsedOptions['keys'] & {
    /** Algorithms an ID token can be signed with (a key exists for each), the default first. */
    readonly idTokenAlgs: readonly SigningAlg[];
  };
  readonly introspection: {
    readonly enabled: boolean;
    readonly callers: readonly ResolvedIntrospectionCaller[];
  };
  /** DPoP (RFC 9449): whether proofs are read, which algorithms, the `iat` window, the nonce source when nonces are on. */
  readonly dpop: {
    readonly enabled: boolean;
    readonly algorithms: readonly SignatureAlgorithm[];
    readonly iatWindowSeconds: number;
    readonly nonces: DpopNonceSource | undefined;
  };
  /** Token audiences UserInfo accepts: the issuer, then `userinfo.audiences`. */
  readonly userinfoAudiences: readonly string[];
  /** Whether `https` client ids resolve through their metadata documents. */
  readonly cimdEnabled: boolean;
  /** Auth methods the token endpoint accepts, in metadata order. */
  readonly tokenAuthMethods: readonly ClientMetadata['token_endpoint_auth_method'][];
  /** Grant types the token endpoint offers, in metadata order. */
  readonly grantTypes: readonly string[];
}

/** RFC 9728 §3.1: the well-known segment goes between the host and the resource's path. */
function protectedResourceMetadataPath(resource: string): string {
  const url = new URL(resource);
  const resourcePath = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `/.well-known/oauth-protected-resource${resourcePath}${url.search}`;
}

function loginRedirectFrom(loginUrl: ParsedOptions['loginUrl'], origin: string) {
  if (loginUrl === undefined) return undefined;
  if (typeof loginUrl === 'function') return loginUrl;
  const base = loginUrl.startsWith('/') ? origin + loginUrl : loginUrl;
  return (context: LoginRedirectContext) => {
    const separator = base.includes('?') ? '&' : '?';
    let url = `${base}${separator}return_to=${encodeURIComponent(context.returnTo)}`;
    if (context.loginHint !== undefined) url += `&login_hint=${encodeURIComponent(context.loginHint)}`;
    if (context.reauthenticate) url += '&reauthenticate=1';
    return url;
  };
}

async function staticClientsOf(options: ParsedOptions): Promise<Map<string, ClientRecord>> {
  const clients = new Map<string, ClientRecord>();
  for (const c of options.clients ?? []) {
    const method =
      c.tokenEndpointAuthMethod ?? (c.clientSecret === undefined ? 'none' : 'client_secret_post');
    // Validated by the options schema (clientKeyMetadataProblem): public keys of supported types.
    const keys =
      method !== 'private_key_jwt'
        ? {}
        : c.jwks !== undefined
          ? { jwks: c.jwks as unknown as ClientJwks }
          : c.jwksUri !== undefined
            ? { jwks_uri: c.jwksUri }
            : {};
    clients.set(c.clientId, {
      clientId: c.clientId,
      ...(c.clientSecret === undefined ? {} : { secretHash: await sha256(c.clientSecret) }),
      metadata: {
        redirect_uris: c.redirectUris,
        token_endpoint_auth_method: method,
        grant_types: [...(c.grantTypes ?? ['authorization_code', 'refresh_token'])],
        response_types: c.redirectUris.length === 0 ? [] : ['code'],
        application_type: c.redirectUris.every((u) => u.startsWith('http://')) ? 'native' : 'web',
        ...(c.clientName === undefined ? {} : { client_name: c.clientName }),
        ...(c.scope === undefined ? {} : { scope: c.scope }),
        ...(c.dpopBoundAccessTokens === undefined
          ? {}
          : { dpop_bound_access_tokens: c.dpopBoundAccessTokens }),
        ...keys,
      },
      origin: 'static',
      createdAt: 0,
    });
  }
  return clients;
}

/**
 * The key every per-address limit counts a request under: `clientIp`, an IPv6 address cut to
 * `ipv6PrefixLength` (a key the host's resolver already cut is kept). With a rate limiter and no
 * address, per-address limits count nothing: said once, at `warn`, so that an adapter passing no
 * address (a Fetch handler without `remoteAddress`) does not switch them off unnoticed.
 */
function rateLimitKey(options: ParsedOptions): (request: OAuthRequest) => string | undefined {
  const { clientIp, ipv6PrefixLength, rateLimiter, logger } = options;
  let warned = rateLimiter === undefined;
  return (request) => {
    const key = clientAddressKey(clientIp(request), ipv6PrefixLength);
    if (key === undefined && !warned) {
      warned = true;
      logger.warn(
        'rate limits are configured but a request came without a client address, so per-address limits do not count it: pass remoteAddress to createFetchHandler (the platform address), or set clientIp',
        { option: 'clientIp' },
      );
    }
    return key;
  };
}

/**
 * Resolves validated options into the configuration: derives URLs, resources, key algorithms and
 * login redirects, and hashes the configured secrets. Announces, once, the settings that are
 * dangerous in production (`config-warnings.ts`).
 *
 * @param options - from {@link parseOptions}
 * @returns the configuration
 */
export async function resolveConfig(options: ParsedOptions): Promise<ServerConfig> {
  const { issuer, logger } = options;
  const origin = new URL(issuer).origin;
  const issuerPath = new URL(issuer).pathname.replace(/\/$/, '');
  const names = Object.keys(options.paths) as (keyof EndpointPaths)[];
  const paths = Object.fromEntries(names.map((name) => [name, `${issuerPath}${options.paths[name]}`]));
  const urls = Object.fromEntries(names.map((name) => [name, `${origin}${paths[name]}`]));

  const resources: ResolvedResource[] = (options.resources ?? [{ resource: issuer }]).map((r) => {
    const metadataPath =
      new URL(r.resource).origin === origin ? protectedResourceMetadataPath(r.resource) : undefined;
    return {
      resource: r.resource,
      scopes: r.scopes ?? options.scopePolicy.supported,
      name: r.name,
      documentation: r.documentation,
      metadataPath,
      metadataUrl: metadataPath === undefined ? undefined : `${origin}${metadataPath}`,
    };
  });

  // Generated keys cover both algorithms; configured keys only their own.
  const { idTokenAlg } = options.keys;
  const signableAlgs: readonly unknown[] =
    options.keys.privateJwks?.map((jwk) => jwk.alg) ?? GENERATED_KEY_ALGS;
  const idTokenAlgs = [
    idTokenAlg,
    ...GENERATED_KEY_ALGS.filter((alg) => alg !== idTokenAlg && signableAlgs.includes(alg)),
  ];

  const callers: ResolvedIntrospectionCaller[] = [];
  for (const caller of options.introspection.callers) {
    callers.push({
      clientId: caller.clientId,
      secretHash: await sha256(caller.clientSecret),
      resources: caller.resources,
    });
  }

  announceRiskySettings(options);

  return {
    issuer,
    allowedHosts: options.allowedHosts,
    origin,
    storage: options.storage,
    scopePolicy: options.scopePolicy,
    runtime: { clock: options.clock, random: options.random, logger },
    paths: paths as unknown as EndpointPaths,
    urls: urls as Record<keyof EndpointPaths, string>,
    resources,
    defaultResource: resources[0]!.resource,
    authenticate: options.authenticate,
    loginRedirect: loginRedirectFrom(options.loginUrl, origin),
    claims: options.claims,
    registration: options.registration,
    clientSecretBasic: options.clientSecretBasic,
    privateKeyJwt: options.privateKeyJwt,
    clientCredentials: options.clientCredentials,
    staticClients: await staticClientsOf(options),
    tokens: options.tokens,
    keys: { ...options.keys, idTokenAlgs },
    introspection: { enabled: options.introspection.enabled, callers },
    dpop: {
      enabled: options.dpop.enabled,
      algorithms: options.dpop.algorithms,
      iatWindowSeconds: options.dpop.iatWindowSeconds,
      nonces:
        options.dpop.nonces === undefined
          ? undefined
          : createDpopNonceSource({
              secret: options.dpop.nonces.secret,
              windowSeconds: options.dpop.nonces.windowSeconds,
              clock: options.clock,
            }),
    },
    userinfoAudiences: [issuer, ...options.userinfo.audiences],
    consent: options.consent,
    clientIdMetadataDocuments: options.clientIdMetadataDocuments,
    cimdEnabled: options.clientIdMetadataDocuments.enabled,
    rateLimiter: options.rateLimiter,
    clientIp: rateLimitKey(options),
    ipv6PrefixLength: options.ipv6PrefixLength,
    onEvent: options.onEvent,
    metadata: options.metadata,
    maxBodyBytes: options.maxBodyBytes,
    housekeepingIntervalSeconds: options.housekeepingIntervalSeconds,
    clientCacheSeconds: options.clientCacheSeconds,
    tokenAuthMethods: [
      'none',
      'client_secret_post',
      ...(options.clientSecretBasic ? (['client_secret_basic'] as const) : []),
      ...(options.privateKeyJwt.enabled ? (['private_key_jwt'] as const) : []),
    ],
    grantTypes: [
      'authorization_code',
      'refresh_token',
      ...(options.clientCredentials.enabled ? ['client_credentials'] : []),
    ],
  };
}
