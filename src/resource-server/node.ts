/**
 * The resource-server guard on node:http routes: `guardNodeRequest` (re-exported by
 * `portcullis/node`).
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeHeaders, writeResponse } from '../adapters/node-messages.js';
import type { GuardRequirement, Principal, ResourceGuard } from './guard.js';

/**
 * Runs a resource-server guard on a Node request. Returns the principal, or `null` after writing the
 * 400/401/403 response (with its `WWW-Authenticate` challenge): `400 invalid_request` (two
 * `Authorization` headers, another scheme, an empty credential), `401 invalid_token` (malformed,
 * unknown, expired, revoked, or for another resource; a DPoP-bound token as Bearer), `401
 * invalid_dpop_proof` (a DPoP proof that does not match this request), `401` without an error code
 * (no token and `required`), `403 insufficient_scope`. The request's method, path (Express's
 * `originalUrl` when mounted) and `DPoP` header are passed on, so DPoP-bound tokens work (RFC 9449
 * §7). A verifier that fails rejects the returned promise.
 *
 * @param guard - from `server.guard(...)` or `createResourceGuard(...)`
 * @param req - the request
 * @param res - the response, written to when the request is refused
 * @param requirement - the route's scope and whether a token is required
 * @returns the caller, or `null` when the response has been sent
 * @see RFC 6750 §3
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { guardNodeRequest } from 'portcullis/node';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * const guard = oauth.guard({ resource: 'http://127.0.0.1:3000' });
 * createServer(async (req, res) => {
 *   const principal = await guardNodeRequest(guard, req, res, { scope: 'courses:read', required: true });
 *   if (principal === null) return;
 *   res.end(JSON.stringify({ hello: principal.anonymous ? 'anonymous' : principal.subject }));
 * });
 * ```
 * @group Resource Servers (RFC 6750, RFC 9728)
 */
export async function guardNodeRequest(
  guard: ResourceGuard,
  req: IncomingMessage,
  res: ServerResponse,
  requirement?: GuardRequirement,
): Promise<Principal | null> {
  // Express strips its mount path from `url`; `originalUrl` is the path the client sent to.
  const url = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url;
  const result = await guard.check(
    { headers: nodeHeaders(req), method: req.method ?? 'GET', ...(url === undefined ? {} : { url }) },
    requirement,
  );
  if (result.ok) return result.principal;
  writeResponse(res, result.response);
  return null;
}
