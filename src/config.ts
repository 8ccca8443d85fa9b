/**
 * The resolve step: validated options ({@link ParsedOptions}, every default applied) become the
 * configuration every handler reads, with what derives from them computed once: URLs built from
 * the issuer, resources with their metadata locations, static secrets hashed.
 * @module
 */
import type { Runtime } from './core/context.js';
import { sha256 } from './core/crypto.js';
import type { EndpointPaths, LoginRedirectContext, ParsedOptions } from './options.js';
import type { ClientJwks } from './protocol/client-jwks.js';
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

/** The options used as parsed: their defaults applied, nothing derived. */
type AsParsed = Pick<
  ParsedOptions,
  | 'issuer'
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
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        application_type: c.redirectUris.every((u) => u.startsWith('http://')) ? 'native' : 'web',
        ...(c.clientName === undefined ? {} : { client_name: c.clientName }),
        ...(c.scope === undefined ? {} : { scope: c.scope }),
        ...keys,
      },
      origin: 'static',
      createdAt: 0,
    });
  }
  return clients;
}

/**
 * Resolves validated options into the configuration: derives URLs, resources, key algorithms and
 * login redirects, and hashes the configured secrets. Logs, once, what is acceptable only in
 * development (an `http` issuer).
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
  const signableAlgs = options.keys.privateJwks?.map((jwk) => jwk.alg) ?? ['RS256', 'ES256'];
  const idTokenAlgs = [
    idTokenAlg,
    ...(['RS256', 'ES256'] as const).filter((alg) => alg !== idTokenAlg && signableAlgs.includes(alg)),
  ];

  const callers: ResolvedIntrospectionCaller[] = [];
  for (const caller of options.introspection.callers) {
    callers.push({
      clientId: caller.clientId,
      secretHash: await sha256(caller.clientSecret),
      resources: caller.resources,
    });
  }

  if (issuer.startsWith('http://')) {
    logger.warn('the issuer uses http: acceptable on loopback for development, never in production', {
      issuer,
    });
  }

  return {
    issuer,
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
    userinfoAudiences: [issuer, ...options.userinfo.audiences],
    consent: options.consent,
    clientIdMetadataDocuments: options.clientIdMetadataDocuments,
    cimdEnabled: options.clientIdMetadataDocuments.enabled,
    rateLimiter: options.rateLimiter,
    clientIp: options.clientIp,
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
