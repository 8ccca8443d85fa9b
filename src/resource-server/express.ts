/**
 * The resource-server guard on Express routes: `requireToken` and `GuardedRequest` (re-exported by
 * `portcullis/express`).
 * @module
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { GuardRequirement, Principal, ResourceGuard } from './guard.js';
import { guardNodeRequest } from './node.js';

/**
 * An Express request that passed {@link requireToken}: `auth` is the caller.
 *
 * @example
 * ```ts
 * import type { RequestHandler } from 'express';
 * import type { GuardedRequest } from 'portcullis/express';
 *
 * const whoAmI: RequestHandler = (req, res) => {
 *   const { auth } = req as GuardedRequest;
 *   res.json(auth.anonymous ? { anonymous: true } : { sub: auth.subject, scope: auth.scope });
 * };
 * ```
 * @see RFC 6750 §2.1
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export type GuardedRequest = Request & { auth: Principal };

/**
 * Express middleware enforcing a resource-server guard on a route. On success the caller is in
 * `req.auth` (anonymous when no token was sent and none is required); otherwise the 400/401/403
 * response with its `WWW-Authenticate` challenge is sent.
 *
 * Refusals it sends: `400 invalid_request` (two `Authorization` headers, another scheme, an empty
 * credential), `401 invalid_token` (malformed, unknown, expired, revoked, or for another resource),
 * `401` without an error code (no token and `required`), `403 insufficient_scope`. A verifier that
 * fails (an unreachable introspection endpoint) is passed to `next(error)`.
 *
 * @param guard - from `server.guard(...)` or `createResourceGuard(...)`
 * @param requirement - the route's scope and whether a token is required; default: anonymous
 * callers pass, no scope needed
 * @returns middleware
 * @see RFC 6750 §3, RFC 9728 §5.1
 * @example
 * ```ts
 * import express from 'express';
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { type GuardedRequest, requireToken } from 'portcullis/express';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * const app = express();
 * app.get('/api/v1/courses', requireToken(oauth.guard({ resource: 'http://127.0.0.1:3000' }), { scope: 'courses:read' }), (req, res) => {
 *   const { auth } = req as GuardedRequest;
 *   res.json({ caller: auth.anonymous ? null : auth.subject });
 * });
 * ```
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export function requireToken(guard: ResourceGuard, requirement?: GuardRequirement): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    guardNodeRequest(guard, req, res, requirement).then((principal) => {
      if (principal === null) return;
      (req as GuardedRequest).auth = principal;
      next();
    }, next);
  };
}
