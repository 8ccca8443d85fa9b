/**
 * The resource-server guard: decides, for one API request, between an anonymous caller, a valid
 * token with enough scope, and the RFC 6750 error to answer. A pure function of the request and the
 * verifier; the Express, Fetch and node adapters wrap it as middleware.
 * @module
 */
import { isOAuthError, OAuthError, toOAuthError } from '../core/errors.js';
import { errorResponse, type OAuthResponse } from '../core/http.js';
import { bearerChallenge, readBearer } from '../protocol/bearer.js';
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
 * The parts of a request the guard reads. Query-string tokens are ignored, so no URL is needed.
 * On Node, pass `nodeHeaders(req)` from `portcullis/node`: `req.headers` hides a repeated
 * `Authorization` header.
 *
 * @example
 * ```ts
 * import type { GuardRequest } from 'portcullis';
 *
 * const request: GuardRequest = { headers: { authorization: 'Bearer eyJhbGciOiJFUzI1NiJ9...' } };
 * ```
 * @see RFC 6750 §2.1 (the Authorization header), OAuth 2.1 §5.1
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export interface GuardRequest {
  /** Lower-case header names; repeated headers joined with `", "`. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
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
   * @param request - the request's headers (only `authorization` is read)
   * @param requirement - the scopes needed and whether a token is required; default: none, optional
   * @returns the caller, or the refusal: `400 invalid_request` (two `Authorization` headers,
   * another scheme, an empty credential), `401 invalid_token` (malformed, unknown, expired,
   * revoked, or for another resource), `401` without an error code (no token and `required`),
   * `403 insufficient_scope`; each with its `WWW-Authenticate` challenge
   * @throws whatever the verifier throws (e.g. an unreachable introspection endpoint)
   * @example
   * ```ts
   * import type { ResourceGuard } from 'portcullis';
   *
   * declare const guard: ResourceGuard;
   * const result = await guard.check({ headers: { authorization: 'Bearer abc' } }, { scope: 'courses:read' });
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

function headerRecord(headers: GuardRequest['headers']): Record<string, string | undefined> {
  const authorization = headers.authorization;
  return { authorization: Array.isArray(authorization) ? authorization.join(', ') : authorization };
}

/**
 * Creates a guard.
 *
 * @param options - the resource identifier, the verifier and the metadata URL
 * @returns a {@link ResourceGuard}; its `check` answers `400 invalid_request`, `401
 * invalid_token`, `401` without an error code (no token and `required`) or `403
 * insufficient_scope`, each with its `WWW-Authenticate` challenge, or `503
 * temporarily_unavailable` with `Retry-After` when the verifier's storage is unavailable
 * @see RFC 6750 §3 (challenges), RFC 9728 §5.1 (`resource_metadata`), RFC 8707 §2 (audience)
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * const guard = oauth.guard({ resource: 'http://127.0.0.1:3000' });
 * const result = await guard.check({ headers: { authorization: 'Bearer abc' } }, { scope: 'courses:read' });
 * if (!result.ok) console.log(result.response.status); // 401
 * ```
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export function createResourceGuard(options: ResourceGuardOptions): ResourceGuard {
  const { resource, verifier, resourceMetadataUrl } = options;

  function refuse(error: OAuthError, scope?: string): GuardResult {
    const challenge = bearerChallenge({
      error: error.code,
      error_description: error.description,
      scope,
      resource_metadata: resourceMetadataUrl,
    });
    const withHeader = new OAuthError(error.code, error.description, {
      status: error.status,
      headers: { 'www-authenticate': challenge },
    });
    return { ok: false, error: withHeader, response: errorResponse(withHeader) };
  }

  return {
    resource,
    async check(request, requirement = {}) {
      const needed = requiredScopes(requirement.scope);
      let credential: ReturnType<typeof readBearer>;
      try {
        credential = readBearer(headerRecord(request.headers));
      } catch (error) {
        if (isOAuthError(error)) return refuse(error);
        throw error;
      }
      if (!credential.present) {
        if (requirement.required !== true) return { ok: true, principal: { anonymous: true } };
        // RFC 6750 §3.1: no error code when the request simply lacked credentials.
        const challenge = bearerChallenge({
          scope: needed.length === 0 ? undefined : needed.join(' '),
          resource_metadata: resourceMetadataUrl,
        });
        const error = new OAuthError('invalid_token', 'this operation needs an access token', {
          status: 401,
          headers: { 'www-authenticate': challenge },
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
      if (verified === null)
        return refuse(new OAuthError('invalid_token', 'the access token is invalid, expired or revoked'));
      if (!verified.audience.includes(resource)) {
        return refuse(new OAuthError('invalid_token', 'the access token is not for this resource'));
      }
      const missing = needed.filter((s) => !verified.scope.includes(s));
      if (missing.length > 0) {
        return refuse(
          new OAuthError('insufficient_scope', `this operation needs the scope ${needed.join(' ')}`),
          needed.join(' '),
        );
      }
      return { ok: true, principal: { anonymous: false, token: credential.token, ...verified } };
    },
  };
}
