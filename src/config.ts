/**
 * Options resolved into the configuration every handler reads: defaults applied, URLs built from
 * the issuer, static secrets hashed. Computed once per server.
 * @module
 */
import { type Runtime, silentLogger } from './core/context.js';
import { secureRandom, sha256 } from './core/crypto.js';
import type { EventListener } from './core/events.js';
import type { OAuthRequest } from './core/http.js';
import type { RateLimiter } from './core/rate-limit.js';
import {
  type AuthorizationServerOptions,
  type ConsentOptions,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_PATHS,
  type EndpointPaths,
  type LoginRedirectContext,
  type MetadataOptions,
} from './options.js';
import { validateOptions } from './options-schema.js';
import { checkRegisteredRedirectUri } from './protocol/redirect-uri.js';
import { createScopePolicy, type ScopePolicy } from './scopes/policy.js';
import type { ClientRecord, Storage } from './storage/types.js';

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

/** The resolved configuration. */
export interface ServerConfig {
  readonly issuer: string;
  readonly origin: string;
  readonly storage: Storage;
  readonly scopePolicy: ScopePolicy;
  readonly runtime: Runtime;
  readonly paths: Readonly<EndpointPaths>;
  readonly urls: Readonly<Record<keyof EndpointPaths, string>>;
  readonly resources: readonly ResolvedResource[];
  readonly defaultResource: string;
  readonly authenticate: AuthorizationServerOptions['authenticate'];
  readonly loginRedirect: ((context: LoginRedirectContext) => string) | undefined;
  readonly claims: AuthorizationServerOptions['claims'];
  readonly registration: {
    readonly enabled: boolean;
    readonly policy: NonNullable<AuthorizationServerOptions['registration']>['policy'];
    readonly allowHttpsRedirectUris: boolean;
    readonly allowConfidentialClients: boolean;
    readonly unusedClientTtlSeconds: number;
    readonly maxRedirectUris: number;
  };
  readonly clientSecretBasic: boolean;
  readonly staticClients: ReadonlyMap<string, ClientRecord>;
  readonly tokens: {
    readonly codeTtlSeconds: number;
    readonly accessTokenTtlSeconds: number;
    readonly refreshTokenIdleTtlSeconds: number;
    readonly grantTtlSeconds: number;
    readonly idTokenTtlSeconds: number;
    readonly pendingAuthorizationTtlSeconds: number;
    readonly accessTokenFormat: 'jwt' | 'opaque';
    readonly refreshGraceSeconds: number;
    readonly idTokenOnRefresh: boolean;
  };
  readonly keys: {
    readonly privateJwks: readonly Readonly<Record<string, unknown>>[] | undefined;
    readonly idTokenAlg: 'RS256' | 'ES256';
    /** Algorithms an ID token can be signed with (a key exists for each), the default first. */
    readonly idTokenAlgs: readonly ('RS256' | 'ES256')[];
    readonly accessTokenAlg: 'RS256' | 'ES256';
    readonly refreshIntervalSeconds: number;
  };
  readonly introspection: {
    readonly enabled: boolean;
    readonly callers: readonly ResolvedIntrospectionCaller[];
  };
  /** Token audiences UserInfo accepts: the issuer, then `userinfo.audiences`. */
  readonly userinfoAudiences: readonly string[];
  readonly consent: { readonly render: ConsentOptions['render']; readonly remember: boolean };
  readonly cimdEnabled: boolean;
  readonly rateLimiter: RateLimiter | undefined;
  readonly clientIp: (request: OAuthRequest) => string | undefined;
  readonly onEvent: EventListener | undefined;
  readonly metadata: MetadataOptions & { readonly serviceName: string };
  readonly maxBodyBytes: number;
  readonly housekeepingIntervalSeconds: number;
  /** How long a stored client record is reused before it is read again, in seconds. */
  readonly clientCacheSeconds: number;
  /** Auth methods the token endpoint accepts, in metadata order. */
  readonly tokenAuthMethods: readonly ('none' | 'client_secret_post' | 'client_secret_basic')[];
}

const DAY = 86_400;

function originOf(url: string): string {
  return new URL(url).origin;
}

/** RFC 9728 §3.1: the well-known segment goes between the host and the resource's path. */
function protectedResourceMetadataPath(resource: string): string {
  const url = new URL(resource);
  const resourcePath = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `/.well-known/oauth-protected-resource${resourcePath}${url.search}`;
}

function loginRedirectFrom(loginUrl: AuthorizationServerOptions['loginUrl'], origin: string) {
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

/** Validates options and resolves them (hashing static secrets), with every default applied. */
export async function resolveConfig(input: AuthorizationServerOptions): Promise<ServerConfig> {
  const options = validateOptions(input);
  const issuer = options.issuer;
  const origin = originOf(issuer);
  const issuerPath = new URL(issuer).pathname.replace(/\/$/, '');
  const paths: EndpointPaths = { ...DEFAULT_PATHS, ...options.paths };
  const urls = Object.fromEntries(
    Object.entries(paths).map(([name, path]) => [name, `${origin}${issuerPath}${path}`]),
  ) as Record<keyof EndpointPaths, string>;
  const routedPaths = Object.fromEntries(
    Object.entries(paths).map(([name, path]) => [name, `${issuerPath}${path}`]),
  ) as unknown as EndpointPaths;

  const scopePolicy = options.scopePolicy ?? createScopePolicy();
  const resources: ResolvedResource[] = (options.resources ?? [{ resource: issuer }]).map((r) => {
    const sameOrigin = originOf(r.resource) === origin;
    const metadataPath = sameOrigin ? protectedResourceMetadataPath(r.resource) : undefined;
    for (const scope of r.scopes ?? []) {
      if (scopePolicy.describe(scope) === undefined) {
        throw new TypeError(
          `options.resources: scope '${scope}' of ${r.resource} is not supported by the scope policy`,
        );
      }
    }
    return {
      resource: r.resource,
      scopes: r.scopes ?? scopePolicy.supported,
      name: r.name,
      documentation: r.documentation,
      metadataPath,
      metadataUrl: metadataPath === undefined ? undefined : `${origin}${metadataPath}`,
    };
  });

  const tokens = {
    codeTtlSeconds: 60,
    accessTokenTtlSeconds: 900,
    refreshTokenIdleTtlSeconds: 30 * DAY,
    grantTtlSeconds: 90 * DAY,
    idTokenTtlSeconds: 3600,
    pendingAuthorizationTtlSeconds: 600,
    accessTokenFormat: 'jwt' as const,
    refreshGraceSeconds: 10,
    idTokenOnRefresh: false,
    ...options.tokens,
  };
  const clientSecretBasic = options.clientSecretBasic ?? false;
  // Generated keys cover both algorithms; configured keys only their own.
  const idTokenAlg = options.keys?.idTokenAlg ?? 'RS256';
  const signableAlgs = options.keys?.privateJwks?.map((jwk) => jwk.alg) ?? ['RS256', 'ES256'];
  const idTokenAlgs = [
    idTokenAlg,
    ...(['RS256', 'ES256'] as const).filter((alg) => alg !== idTokenAlg && signableAlgs.includes(alg)),
  ];

  const staticClients = new Map<string, ClientRecord>();
  for (const c of options.clients ?? []) {
    for (const uri of c.redirectUris) {
      const problem = checkRegisteredRedirectUri(uri, true);
      if (problem !== undefined)
        throw new TypeError(`options.clients: ${c.clientId}: redirect URI ${uri} ${problem}`);
    }
    const method =
      c.tokenEndpointAuthMethod ?? (c.clientSecret === undefined ? 'none' : 'client_secret_post');
    if ((method === 'none') !== (c.clientSecret === undefined)) {
      throw new TypeError(
        `options.clients: ${c.clientId}: a client secret goes with a secret auth method, and only then`,
      );
    }
    if (method === 'client_secret_basic' && !clientSecretBasic) {
      throw new TypeError(
        `options.clients: ${c.clientId}: client_secret_basic needs options.clientSecretBasic`,
      );
    }
    staticClients.set(c.clientId, {
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
      },
      origin: 'static',
      createdAt: 0,
    });
  }

  const callers: ResolvedIntrospectionCaller[] = [];
  for (const caller of options.introspection?.callers ?? []) {
    callers.push({
      clientId: caller.clientId,
      secretHash: await sha256(caller.clientSecret),
      resources: caller.resources,
    });
  }

  for (const audience of options.userinfo?.audiences ?? []) {
    if (audience !== issuer && !resources.some((r) => r.resource === audience)) {
      throw new TypeError(`options.userinfo.audiences: ${audience} is not one of options.resources`);
    }
  }

  const logger = options.logger ?? silentLogger;
  if (issuer.startsWith('http://')) {
    logger.warn('the issuer uses http: acceptable on loopback for development, never in production', {
      issuer,
    });
  }

  return {
    issuer,
    origin,
    storage: options.storage,
    scopePolicy,
    runtime: { clock: options.clock ?? Date.now, random: options.random ?? secureRandom, logger },
    paths: routedPaths,
    urls,
    resources,
    defaultResource: resources[0]!.resource,
    authenticate: options.authenticate,
    loginRedirect: loginRedirectFrom(options.loginUrl, origin),
    claims: options.claims,
    registration: {
      enabled: options.registration?.enabled ?? true,
      policy: options.registration?.policy,
      allowHttpsRedirectUris: options.registration?.allowHttpsRedirectUris ?? false,
      allowConfidentialClients: options.registration?.allowConfidentialClients ?? true,
      unusedClientTtlSeconds: options.registration?.unusedClientTtlSeconds ?? 7 * DAY,
      maxRedirectUris: options.registration?.maxRedirectUris ?? 10,
    },
    clientSecretBasic,
    staticClients,
    tokens,
    keys: {
      privateJwks: options.keys?.privateJwks,
      idTokenAlg,
      idTokenAlgs,
      accessTokenAlg: options.keys?.accessTokenAlg ?? 'ES256',
      refreshIntervalSeconds: options.keys?.refreshIntervalSeconds ?? 60,
    },
    introspection: { enabled: options.introspection?.enabled ?? true, callers },
    userinfoAudiences: [issuer, ...(options.userinfo?.audiences ?? [])],
    consent: { render: options.consent?.render, remember: options.consent?.remember ?? true },
    cimdEnabled: options.clientIdMetadataDocuments?.enabled ?? false,
    rateLimiter: options.rateLimiter,
    clientIp: options.clientIp ?? ((request) => request.remoteAddress),
    onEvent: options.onEvent,
    metadata: { serviceName: 'Authorization', ...options.metadata },
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    housekeepingIntervalSeconds: options.housekeepingIntervalSeconds ?? 300,
    clientCacheSeconds: options.clientCacheSeconds ?? 5,
    tokenAuthMethods: clientSecretBasic
      ? ['none', 'client_secret_post', 'client_secret_basic']
      : ['none', 'client_secret_post'],
  };
}
