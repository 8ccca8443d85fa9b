/**
 * The resource-server guard on Fetch routes: `withGuard` (re-exported by `portcullis/fetch`).
 * @module
 */
import { toResponse } from '../adapters/fetch-messages.js';
import type { GuardRequirement, Principal, ResourceGuard } from './guard.js';

/**
 * Wraps a Fetch handler with a resource-server guard: the handler runs with the caller, or the
 * 400/401/403 response (with its `WWW-Authenticate` challenge) is returned instead: `400
 * invalid_request` (two `Authorization` headers, another scheme, an empty credential), `401
 * invalid_token` (malformed, unknown, expired, revoked, or for another resource; a DPoP-bound token
 * as Bearer), `401 invalid_dpop_proof` (a DPoP proof that does not match this request), `401`
 * without an error code (no token and `required`), `403 insufficient_scope`. The request's method,
 * URL and `DPoP` header are passed on, so DPoP-bound tokens work (RFC 9449 §7). A verifier that
 * fails rejects the returned promise.
 *
 * @param guard - from `server.guard(...)` or `createResourceGuard(...)`
 * @param requirement - the route's scope and whether a token is required
 * @param handler - the protected handler
 * @returns a Fetch handler
 * @see RFC 6750 §3, RFC 9728 §5.1, RFC 9449 §7
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { withGuard } from 'portcullis/fetch';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
 * const courses = withGuard(oauth.guard({ resource: 'https://auth.example.com' }), { scope: 'courses:read' }, async (_request, auth) =>
 *   Response.json({ caller: auth.anonymous ? null : auth.subject }),
 * );
 * ```
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export function withGuard(
  guard: ResourceGuard,
  requirement: GuardRequirement,
  handler: (request: Request, principal: Principal) => Response | Promise<Response>,
): (request: Request) => Promise<Response> {
  return async (request) => {
    // Fetch `Headers` join a repeated Authorization or DPoP with ", ", which the guard refuses
    // (RFC 6750 §2, RFC 9449 §4.3).
    const result = await guard.check(
      {
        headers: {
          authorization: request.headers.get('authorization') ?? undefined,
          dpop: request.headers.get('dpop') ?? undefined,
        },
        method: request.method,
        url: request.url,
      },
      requirement,
    );
    return result.ok ? handler(request, result.principal) : toResponse(result.response);
  };
}
