/**
 * The single integration point with the library's resource-server guard, used by the business API
 * and by `/mcp`: one guard per protected resource, verifying tokens against the authorization
 * server's own storage (so a revocation is refused on the very next request).
 * @module
 */
import type { AuthorizationServer, GuardResult, Principal, ResourceGuard } from 'portcullis';

export type { GuardResult, Principal };

/** Checks bearer tokens for one protected resource. */
export type BearerGuard = ResourceGuard;

/**
 * The guard of a protected resource of this server.
 *
 * @param oauth - the authorization server (its storage verifies the tokens)
 * @param resource - the resource identifier (`$ISSUER` or `$ISSUER/mcp`); its RFC 9728 document is
 *   named in every challenge
 */
export function createBearerGuard(oauth: AuthorizationServer, resource: string): BearerGuard {
  return oauth.guard({ resource });
}
