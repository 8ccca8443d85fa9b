/**
 * Validation of {@link AuthorizationServerOptions} with zod: every problem reported at once, each
 * naming the option (`options.tokens.codeTtlSeconds: must be at most 600`).
 * @module
 */
import { z } from 'zod';
import type { HostLookup, MetadataFetcher } from './cimd/fetcher.js';
import type { Clock, Logger } from './core/context.js';
import type { RandomSource } from './core/crypto.js';
import type { EventListener } from './core/events.js';
import type { RateLimiter } from './core/rate-limit.js';
import type {
  AuthorizationServerOptions,
  ConsentOptions,
  LoginRedirectContext,
  RegistrationOptions,
} from './options.js';
import { parseAddressRange } from './protocol/ip-address.js';
import type { ScopePolicy } from './scopes/policy.js';
import { missingStorageMethods } from './storage/shape.js';
import type { Storage } from './storage/types.js';

const fn = <T>(what: string) =>
  z.custom<T>((v) => typeof v === 'function', { message: `must be a function (${what})` });

const storageSchema = z.custom<Storage>((v) => missingStorageMethods(v).length === 0, {
  message:
    'must implement the Storage interface: clients, interactions, codes, grants, consents, keys, deleteExpired, close (docs/storage.md)',
});

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** An absolute URL: https, or http on a loopback host; no fragment. */
function webUrl(what: string, { allowQuery }: { allowQuery: boolean }) {
  return z.string().superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: `${what} must be an absolute URL` });
      return;
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
      ctx.addIssue({ code: 'custom', message: `${what} must use https (http is accepted only on loopback)` });
    }
    if (value.includes('#')) ctx.addIssue({ code: 'custom', message: `${what} must not have a fragment` });
    if (!allowQuery && value.includes('?'))
      ctx.addIssue({ code: 'custom', message: `${what} must not have a query` });
  });
}

/** How URL parsing writes the origin and path of `value`, when `value` writes them otherwise. */
function unlessNormalForm(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined; // reported as not a URL
  }
  const written = value.split(/[?#]/, 1)[0];
  if (written === url.origin + url.pathname || (url.pathname === '/' && written === url.origin))
    return undefined;
  return url.pathname === '/' ? url.origin : url.origin + url.pathname;
}

const path = z
  .string()
  .regex(/^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*$/, 'must be an absolute path such as /oauth/token');
const seconds = z.number().int().nonnegative();
const positiveSeconds = z.number().int().positive();

const optionsSchema = z.strictObject({
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
  storage: storageSchema,
  scopePolicy: z
    .custom<ScopePolicy>(
      (v) =>
        typeof v === 'object' &&
        v !== null &&
        Array.isArray((v as ScopePolicy).supported) &&
        typeof (v as ScopePolicy).filterRequested === 'function',
      { message: 'must implement the ScopePolicy interface' },
    )
    .optional(),
  resources: z
    .array(
      z.strictObject({
        resource: webUrl('a resource identifier', { allowQuery: true }),
        scopes: z.array(z.string()).optional(),
        name: z.string().max(200).optional(),
        documentation: webUrl('resource documentation', { allowQuery: true }).optional(),
      }),
    )
    .min(1)
    .optional(),
  paths: z
    .object({
      authorization: path,
      authorizationDecision: path,
      token: path,
      registration: path,
      userinfo: path,
      revocation: path,
      introspection: path,
      jwks: path,
    })
    .partial()
    .optional(),
  authenticate: fn<AuthorizationServerOptions['authenticate']>('request => user | null').optional(),
  loginUrl: z
    .union([
      z
        .string()
        .refine((v) => v.startsWith('/') || /^https?:\/\//.test(v), 'must be a path or an http(s) URL'),
      fn<(c: LoginRedirectContext) => string>('context => url'),
    ])
    .optional(),
  claims: fn<AuthorizationServerOptions['claims']>('(userId, scope) => claims').optional(),
  registration: z
    .object({
      enabled: z.boolean(),
      policy: fn<RegistrationOptions['policy']>('context => void'),
      allowHttpsRedirectUris: z.boolean(),
      allowConfidentialClients: z.boolean(),
      unusedClientTtlSeconds: seconds,
      maxRedirectUris: z.number().int().min(1).max(100),
    })
    .partial()
    .optional(),
  clients: z
    .array(
      z.strictObject({
        clientId: z.string().min(1).max(200),
        clientSecret: z.string().min(16, 'must be at least 16 characters').optional(),
        redirectUris: z.array(z.string().max(2000)).min(1),
        clientName: z.string().max(200).optional(),
        scope: z.string().optional(),
        tokenEndpointAuthMethod: z.enum(['none', 'client_secret_post', 'client_secret_basic']).optional(),
      }),
    )
    .optional(),
  clientSecretBasic: z.boolean().optional(),
  tokens: z
    .object({
      codeTtlSeconds: z.number().int().min(1).max(600, 'must be at most 600 (RFC 6749 §4.1.2)'),
      accessTokenTtlSeconds: positiveSeconds,
      refreshTokenIdleTtlSeconds: positiveSeconds,
      grantTtlSeconds: positiveSeconds,
      idTokenTtlSeconds: positiveSeconds,
      pendingAuthorizationTtlSeconds: positiveSeconds,
      accessTokenFormat: z.enum(['jwt', 'opaque']),
      refreshGraceSeconds: z
        .number()
        .int()
        .min(0)
        .max(60, 'must be at most 60: a grace is for retries, not reuse'),
      idTokenOnRefresh: z.boolean(),
    })
    .partial()
    .optional(),
  keys: z
    .object({
      privateJwks: z.array(z.record(z.string(), z.unknown())).min(1),
      idTokenAlg: z.enum(['RS256', 'ES256']),
      accessTokenAlg: z.enum(['RS256', 'ES256']),
      refreshIntervalSeconds: positiveSeconds,
    })
    .partial()
    .optional(),
  userinfo: z
    .strictObject({ audiences: z.array(z.string()) })
    .partial()
    .optional(),
  introspection: z
    .object({
      enabled: z.boolean(),
      callers: z.array(
        z.strictObject({
          clientId: z.string().min(1),
          clientSecret: z.string().min(16, 'must be at least 16 characters'),
          resources: z.array(z.string()).min(1),
        }),
      ),
    })
    .partial()
    .optional(),
  consent: z
    .object({
      render: fn<ConsentOptions['render']>('context => html'),
      remember: z.boolean(),
    })
    .partial()
    .optional(),
  clientIdMetadataDocuments: z
    .strictObject({
      enabled: z.boolean(),
      timeoutMs: z.number().int().min(100).max(60_000),
      connectTimeoutMs: z.number().int().min(100).max(60_000),
      maxBytes: z
        .number()
        .int()
        .min(512)
        .max(1024 * 1024),
      maxRedirectUris: z.number().int().min(1).max(100),
      maxConcurrentFetches: z.number().int().min(1).max(1000),
      hostFetchesPerMinute: z.number().int().min(1).max(100_000),
      failureCacheSeconds: z.number().int().min(0).max(3600),
      cache: z
        .strictObject({
          defaultTtlSeconds: seconds,
          minTtlSeconds: seconds,
          maxTtlSeconds: seconds,
          maxEntries: z.number().int().min(0).max(1_000_000),
        })
        .partial()
        .refine(
          (c) => (c.minTtlSeconds ?? 60) <= (c.maxTtlSeconds ?? 3600),
          'minTtlSeconds must not exceed maxTtlSeconds',
        ),
      allowedHosts: z.array(z.string().regex(/^(\*\.)?[A-Za-z0-9.-]+$/, 'must be a host name or *.suffix')),
      allowSpecialUseAddresses: z.array(
        z.string().refine((v) => parseAddressRange(v) !== undefined, 'must be an IP address or CIDR range'),
      ),
      lookup: fn<HostLookup>('hostname => Promise<addresses>'),
      ca: z.union([z.string(), z.array(z.string())]),
      userAgent: z.string().min(1).max(200),
      fetcher: fn<MetadataFetcher>('request => Promise<response>'),
    })
    .partial()
    .optional(),
  rateLimiter: z
    .custom<RateLimiter>(
      (v) => typeof v === 'object' && v !== null && typeof (v as RateLimiter).consume === 'function',
      {
        message: 'must implement RateLimiter (consume(bucket, key))',
      },
    )
    .optional(),
  clientIp: fn<AuthorizationServerOptions['clientIp']>('request => ip').optional(),
  onEvent: fn<EventListener>('event => void').optional(),
  metadata: z
    .object({
      serviceDocumentation: webUrl('serviceDocumentation', { allowQuery: true }),
      uiLocalesSupported: z.array(
        z.string().regex(/^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/, 'must be a BCP 47 tag'),
      ),
      policyUri: webUrl('policyUri', { allowQuery: true }),
      tosUri: webUrl('tosUri', { allowQuery: true }),
      serviceName: z.string().min(1).max(100),
    })
    .partial()
    .optional(),
  maxBodyBytes: z
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .optional(),
  housekeepingIntervalSeconds: seconds.optional(),
  clientCacheSeconds: seconds.max(300).optional(),
  logger: z
    .custom<Logger>(
      (v) =>
        typeof v === 'object' &&
        v !== null &&
        ['debug', 'info', 'warn', 'error'].every(
          (m) => typeof (v as Record<string, unknown>)[m] === 'function',
        ),
      { message: 'must have debug, info, warn and error methods' },
    )
    .optional(),
  clock: fn<Clock>('() => epoch milliseconds').optional(),
  random: fn<RandomSource>('length => Uint8Array').optional(),
});

/**
 * Thrown by {@link createAuthorizationServer} when options are invalid; the message names each bad option.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, InvalidOptionsError, memoryStorage } from 'portcullis';
 *
 * try {
 *   createAuthorizationServer({ issuer: 'https://auth.example.com/', storage: memoryStorage() });
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
  /** One line per problem: `options.tokens.codeTtlSeconds: must be at most 600`. */
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid authorization server options:\n  ${problems.join('\n  ')}`);
    this.problems = problems;
  }
}

/** Validates options, throwing {@link InvalidOptionsError} with every problem named. */
export function validateOptions(options: unknown): AuthorizationServerOptions {
  const result = optionsSchema.safeParse(options);
  if (result.success) return options as AuthorizationServerOptions;
  const problems = result.error.issues.map((issue) => {
    const where = ['options', ...issue.path.map(String)].join('.');
    return `${where}: ${issue.message}`;
  });
  throw new InvalidOptionsError(problems);
}
