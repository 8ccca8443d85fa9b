/**
 * The resource-server guard: decides, for one API request, between an anonymous caller, a valid
 * token with enough scope, and the RFC 6750 error to answer. A pure function of the request and the
 * verifier; the Express, Fetch and node adapters wrap it as middleware.
 * @module
 */
import type { Clock } from '../core/context.js';
import { isOAuthError, OAuthError, toOAuthError } from '../core/errors.js';
import { errorResponse, type OAuthResponse } from '../core/http.js';
import { bearerChallenge } from '../protocol/bearer.js';
import { type VerifiedDpopProof, verifyDpopProof } from '../protocol/dpop.js';
import {
  type AccessTokenCredential,
  checkAccessTokenBinding,
  type ResourceChallenges,
  readAccessTokenCredential,
  resourceChallenge,
} from '../protocol/dpop-binding.js';
import type { DpopNonceSource } from '../protocol/dpop-nonce.js';
import { SIGNATURE_ALGORITHMS, type SignatureAlgorithm } from '../protocol/public-jwk.js';
import { memoryReplayStore, type ReplayStore } from '../protocol/replay-store.js';
import { isStorageUnavailable } from '../storage/unavailable.js';
import type { AccessTokenVerifier, VerifiedAccessToken } from './verifier.js';

/**
 * Who is calling: anonymous (no token sent, none required), or the verified token's user, client,
 * scopes and audience.
 *
 * @example
 * ```ts
 * import type { Principal } from 'portcullis';
 *
 * function greeting(caller: Principal): string {
 *   return caller.anonymous ? 'Hello, guest' : `Hello, ${caller.subject} (via ${caller.clientId})`;
 * }
 * ```
 * @see RFC 6750 §2.1, RFC 9068 §2.2
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export type Principal =
  | { readonly anonymous: true }
  | ({ readonly anonymous: false; readonly token: string } & VerifiedAccessToken);

/**
 * What a route needs.
 *
 * @example
 * ```ts
 * import type { GuardRequirement } from 'portcullis';
 *
 * const readCourses: GuardRequirement = { scope: 'courses:read' }; // anonymous passes; a token needs the scope
 * // A token must carry both; a refusal's challenge names both: scope="courses:read courses:write"
 * const writeCourses: GuardRequirement = { scope: ['courses:read', 'courses:write'], required: true };
 * ```
 * @see RFC 6750 §3.1 (`insufficient_scope`), RFC 9728 §5.1
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export interface GuardRequirement {
  /**
   * Scopes the token must carry, all of them: a list, or one string (space-separated scopes, as
   * on the wire). A refusal's `insufficient_scope` challenge names every one, so that a client can
   * ask for all it needs in one authorization (RFC 6750 §3.1; MCP step-up authorization).
   */
  readonly scope?: string | readonly string[];
  /**
   * True: a request without a token is refused with 401 and a challenge pointing to the
   * protected-resource metadata (RFC 9728 §5.1). False (default): it passes as anonymous.
   */
  readonly required?: boolean;
}

/**
 * The guard's decision: the caller, or the OAuth error with the complete response to send (status,
 * `WWW-Authenticate` challenge, JSON body).
 *
 * @example
 * ```ts
 * import type { GuardResult } from 'portcullis';
 *
 * function status(result: GuardResult): number {
 *   return result.ok ? 200 : result.response.status; // 400, 401 or 403
 * }
 * ```
 * @see RFC 6750 §3, §3.1
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export type GuardResult =
  | { readonly ok: true; readonly principal: Principal }
  | { readonly ok: false; readonly error: OAuthError; readonly response: OAuthResponse };

/**
 * The parts of a request the guard reads: the `authorization` and `dpop` headers, and, for a
 * DPoP-bound token, the method and URL its proof must name (RFC 9449 §4.3). Query-string tokens
 * are ignored. On Node, pass `nodeHeaders(req)` from `portcullis/node`: `req.headers` hides a
 * repeated `Authorization` or `DPoP` header. The adapters (`withGuard`, `guardNodeRequest`,
 * `requireToken`) fill in everything.
 *
 * @example
 * ```ts
 * import type { GuardRequest } from 'portcullis';
 *
 * declare const request: Request; // a Fetch request
 * const guardRequest: GuardRequest = {
 *   headers: {
 *     authorization: request.headers.get('authorization') ?? undefined,
 *     dpop: request.headers.get('dpop') ?? undefined,
 *   },
 *   method: request.method,
 *   url: request.url,
 * };
 * ```
 * @see RFC 6750 §2.1 (the Authorization header), OAuth 2.1 §5.1, RFC 9449 §7.1
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export interface GuardRequest {
  /** Lower-case header names; repeated headers joined with `", "` (or one array entry each). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /**
   * The request method (`GET`), which a DPoP proof's `htm` must name. Without it (and `url`), a
   * token presented with the `DPoP` scheme is refused with 401 `invalid_token`.
   */
  readonly method?: string;
  /**
   * The request's URL: a path (`/api/notes?page=2`) or an absolute URL. Only its path is used; the
   * scheme, host and port are the guard's `resource` identifier's, because that is the address
   * clients send to (behind a proxy the request may arrive as `http://localhost:3000/...`). A DPoP
   * proof's `htu` must name that URL, without query and fragment.
   */
  readonly url?: string;
}

/**
 * DPoP at a resource (RFC 9449 §7): how proofs are checked. See {@link ResourceGuardOptions.dpop}.
 *
 * @example
 * ```ts
 * import { createResourceGuard, type GuardDpopOptions, jwksVerifier } from 'portcullis';
 *
 * declare const replayStore: import('portcullis').ReplayStore; // shared by every instance of the API
 * const dpop: GuardDpopOptions = { algorithms: ['ES256', 'EdDSA'], replayStore };
 * createResourceGuard({
 *   resource: 'https://api.example.com',
 *   verifier: jwksVerifier({ issuer: 'https://auth.example.com', jwksUri: 'https://auth.example.com/.well-known/jwks.json' }),
 *   dpop,
 * });
 * ```
 * @see RFC 9449 §7.1, §9, §11.1
 * @group DPoP (RFC 9449)
 */
export interface GuardDpopOptions {
  /** Accepted proof algorithms, named in the `algs` of the challenge. Default: every supported one. */
  readonly algorithms?: readonly SignatureAlgorithm[];
  /**
   * Where proof `jti`s are recorded so a proof is used once. Default: a memory store of this guard,
   * exact for one instance; with several instances of the API, pass a shared one.
   */
  readonly replayStore?: ReplayStore;
  /** Require server nonces (`use_dpop_nonce`, `DPoP-Nonce`). Default: none. */
  readonly nonces?: DpopNonceSource | undefined;
  /** How far a proof's `iat` may be from now, in seconds. Default 60. */
  readonly iatWindowSeconds?: number;
  /** Clock, epoch milliseconds. Default `Date.now`. */
  readonly clock?: Clock;
}

/**
 * Options of {@link createResourceGuard}.
 *
 * @example
 * ```ts
 * import { createResourceGuard, jwksVerifier, type ResourceGuardOptions } from 'portcullis';
 *
 * const options: ResourceGuardOptions = {
 *   resource: 'https://api.example.com',
 *   verifier: jwksVerifier({ issuer: 'https://auth.example.com', jwksUri: 'https://auth.example.com/.well-known/jwks.json' }),
 *   resourceMetadataUrl: 'https://api.example.com/.well-known/oauth-protected-resource',
 * };
 * const guard = createResourceGuard(options);
 * ```
 * @see RFC 8707 §2, RFC 9728 §5.1
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export interface ResourceGuardOptions {
  /** This resource server's identifier: tokens must have it in `aud` (RFC 8707). */
  readonly resource: string;
  /** How tokens are verified. */
  readonly verifier: AccessTokenVerifier;
  /** The RFC 9728 metadata URL put in every challenge as `resource_metadata`. */
  readonly resourceMetadataUrl?: string;
  /**
   * DPoP-bound tokens (RFC 9449 §7): accepted with the `DPoP` scheme and a proof by their key,
   * and challenges name `DPoP algs="…"` besides `Bearer`. Default: on, with every supported
   * algorithm and a memory replay store; `false` accepts bearer tokens only. Either way a bound
   * token presented as a bearer token is refused.
   */
  readonly dpop?: GuardDpopOptions | false;
}

/**
 * A guard for one resource: from `server.guard(...)` or {@link createResourceGuard}; the
 * adapters `requireToken`, `withGuard` and `guardNodeRequest` wrap it.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage, type ResourceGuard } from 'portcullis';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
 * const guard: ResourceGuard = oauth.guard({ resource: 'https://auth.example.com' });
 * console.log(guard.resource); // https://auth.example.com
 * ```
 * @see RFC 6750 §3, RFC 9728 §5.1
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export interface ResourceGuard {
  /** The resource identifier this guard protects: a token's `aud` must include it. */
  readonly resource: string;
  /**
   * Decides about one request. Never throws for bad input; throws only when the verifier fails.
   *
   * @param request - the request's `authorization` and `dpop` headers, its method and URL (the
   *   last two are needed for DPoP-bound tokens)
   * @param requirement - the scopes needed and whether a token is required; default: none, optional
   * @returns the caller, or the refusal: `400 invalid_request` (two `Authorization` headers,
   * another scheme, an empty credential), `401 invalid_token` (malformed, unknown, expired,
   * revoked, or for another resource; a DPoP-bound token presented as Bearer, or with a proof by
   * another key), `401 invalid_dpop_proof` / `use_dpop_nonce` (a proof that fails RFC 9449 §4.3,
   * replayed, for another method or URL), `401` without an error code (no token and `required`),
   * `403 insufficient_scope`; each with its `WWW-Authenticate` challenge (`Bearer`, and `DPoP
   * algs="…"` when DPoP is on)
   * @throws whatever the verifier throws (e.g. an unreachable introspection endpoint)
   * @example
   * ```ts
   * import type { ResourceGuard } from 'portcullis';
   *
   * declare const guard: ResourceGuard;
   * const result = await guard.check(
   *   { headers: { authorization: 'Bearer abc' }, method: 'GET', url: '/api/courses' },
   *   { scope: 'courses:read' },
   * );
   * if (!result.ok) console.log(result.error.code, result.response.headers['www-authenticate']);
   * ```
   */
  check(request: GuardRequest, requirement?: GuardRequirement): Promise<GuardResult>;
}

/** The scopes of a requirement, each once: a string is read as a space-separated list (RFC 6749 §3.3). */
function requiredScopes(scope: GuardRequirement['scope']): readonly string[] {
  if (scope === undefined) return [];
  const listed = typeof scope === 'string' ? [scope] : scope;
  return [...new Set(listed.flatMap((s) => s.split(' ')).filter((s) => s !== ''))];
}

/** One header of the request: several values (an array, or repeated and joined) stay visible. */
function header(headers: GuardRequest['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The absolute URL a DPoP proof must name: the request's path on the resource's origin. */
function proofUrl(resource: string, url: string): string | undefined {
  try {
    const parsed = new URL(url, 'http://path.invalid');
    return new URL(`${parsed.pathname}${parsed.search}`, new URL(resource).origin).href;
  } catch {
    return undefined;
  }
}

/**
 * Creates a guard.
 *
 * @param options - the resource identifier, the verifier, the metadata URL, DPoP
 * @returns a {@link ResourceGuard}; its `check` answers `400 invalid_request`, `401
 * invalid_token`, `401 invalid_dpop_proof`, `401` without an error code (no token and `required`)
 * or `403 insufficient_scope`, each with its `WWW-Authenticate` challenge, or `503
 * temporarily_unavailable` with `Retry-After` when the verifier's storage is unavailable
 * @see RFC 6750 §3 (challenges), RFC 9728 §5.1 (`resource_metadata`), RFC 8707 §2 (audience),
 * RFC 9449 §7 (DPoP-bound tokens)
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * const guard = oauth.guard({ resource: 'http://127.0.0.1:3000' });
 * const result = await guard.check(
 *   { headers: { authorization: 'Bearer abc' }, method: 'GET', url: '/api/courses' },
 *   { scope: 'courses:read' },
 * );
 * if (!result.ok) console.log(result.response.status); // 401
 * ```
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export function createResourceGuard(options: ResourceGuardOptions): ResourceGuard {
  const { resource, verifier, resourceMetadataUrl } = options;
  const dpop = options.dpop === false ? undefined : (options.dpop ?? {});
  const replayStore = dpop === undefined ? undefined : (dpop.replayStore ?? memoryReplayStore());
  const algs = dpop?.algorithms ?? SIGNATURE_ALGORITHMS;

  /** The challenges of a refusal: Bearer, and DPoP when it is on; `scope` when scopes are missing. */
  function challenges(scope?: string): ResourceChallenges {
    return { algs, bearer: true, params: { scope, resource_metadata: resourceMetadataUrl } };
  }

  function wwwAuthenticate(scheme: AccessTokenCredential['scheme'], error?: OAuthError, scope?: string) {
    const detail =
      error === undefined ? undefined : { code: error.code, description: error.description, scheme };
    if (dpop !== undefined) return resourceChallenge(challenges(scope), detail);
    return bearerChallenge({
      error: detail?.code,
      error_description: detail?.description,
      scope,
      resource_metadata: resourceMetadataUrl,
    });
  }

  function refuse(
    error: OAuthError,
    scheme: AccessTokenCredential['scheme'] = 'Bearer',
    scope?: string,
  ): GuardResult {
    const withHeader = new OAuthError(error.code, error.description, {
      status: error.status,
      headers: { ...error.headers, 'www-authenticate': wwwAuthenticate(scheme, error, scope) },
    });
    return { ok: false, error: withHeader, response: errorResponse(withHeader) };
  }

  /** The request's proof, checked against its method, URL and the presented token. */
  async function proofOf(request: GuardRequest, token: string): Promise<VerifiedDpopProof> {
    const url = request.url === undefined ? undefined : proofUrl(resource, request.url);
    if (
      dpop === undefined ||
      replayStore === undefined ||
      request.method === undefined ||
      url === undefined
    ) {
      throw new OAuthError('invalid_token', 'this resource cannot check DPoP proofs: use a bearer token', {
        status: 401,
      });
    }
    return verifyDpopProof(
      { dpop: request.headers.dpop, method: request.method.toUpperCase(), url, accessToken: token },
      {
        at: 'resource',
        replayStore,
        algorithms: algs,
        nonces: dpop.nonces,
        ...(dpop.iatWindowSeconds === undefined ? {} : { iatWindowSeconds: dpop.iatWindowSeconds }),
        ...(dpop.clock === undefined ? {} : { clock: dpop.clock }),
      },
    );
  }

  return {
    resource,
    async check(request, requirement = {}) {
      const needed = requiredScopes(requirement.scope);
      const neededScope = needed.length === 0 ? undefined : needed.join(' ');
      let credential: AccessTokenCredential | undefined;
      try {
        credential = readAccessTokenCredential(header(request.headers, 'authorization'), {
          algs,
          bearer: true,
        });
      } catch (error) {
        if (isOAuthError(error)) return refuse(error);
        throw error;
      }
      if (credential === undefined) {
        if (requirement.required !== true) return { ok: true, principal: { anonymous: true } };
        // RFC 6750 §3.1: no error code when the request simply lacked credentials.
        const error = new OAuthError('invalid_token', 'this operation needs an access token', {
          status: 401,
          headers: { 'www-authenticate': wwwAuthenticate('Bearer', undefined, neededScope) },
        });
        return { ok: false, error, response: errorResponse(error) };
      }
      let verified: VerifiedAccessToken | null;
      try {
        verified = await verifier.verify(credential.token);
      } catch (error) {
        // The storage is down: 503 with Retry-After, as the authorization server answers (FLT-01).
        if (!isStorageUnavailable(error)) throw error;
        const unavailable = toOAuthError(error);
        return { ok: false, error: unavailable, response: errorResponse(unavailable) };
      }
      const { scheme } = credential;
      if (verified === null)
        return refuse(
          new OAuthError('invalid_token', 'the access token is invalid, expired or revoked'),
          scheme,
        );
      if (!verified.audience.includes(resource)) {
        return refuse(new OAuthError('invalid_token', 'the access token is not for this resource'), scheme);
      }
      try {
        // A bound token as Bearer, an unbound one as DPoP: refused before any proof is spent.
        if (scheme === 'Bearer' || verified.dpopJkt === undefined) {
          checkAccessTokenBinding(credential, verified.dpopJkt, undefined, challenges());
        } else {
          const proof = await proofOf(request, credential.token);
          checkAccessTokenBinding(credential, verified.dpopJkt, proof, challenges());
        }
      } catch (error) {
        if (isOAuthError(error)) return refuse(error, scheme);
        throw error;
      }
      const missing = needed.filter((s) => !verified.scope.includes(s));
      if (missing.length > 0) {
        return refuse(
          new OAuthError('insufficient_scope', `this operation needs the scope ${needed.join(' ')}`),
          scheme,
          neededScope,
        );
      }
      return { ok: true, principal: { anonymous: false, token: credential.token, ...verified } };
    },
  };
}
