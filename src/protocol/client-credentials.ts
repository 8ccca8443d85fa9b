/**
 * The scope rule of the `client_credentials` grant: the client acts for itself, so no user can
 * narrow or approve anything. What it gets is what it asked for (or its default), within a
 * per-client ceiling the scope policy decides; scopes that only make sense for a user are refused.
 * @see RFC 6749 §4.4, §3.3; MCP client-credentials extension; CC-01
 * @module
 */
import { OAuthError } from '../core/errors.js';

/** Scopes that need a user: an ID token (`openid`) or offline access to a user's data (`offline_access`). */
const USER_ONLY_SCOPES: ReadonlySet<string> = new Set(['openid', 'offline_access']);

/**
 * The scopes granted to a `client_credentials` request.
 *
 * - `requested` empty → `defaults` within the ceiling; nothing left → `invalid_scope` (scope required);
 * - a requested scope outside the ceiling → `invalid_scope` naming it (never silently dropped,
 *   as at the authorization endpoint);
 * - `openid` or `offline_access` → `invalid_scope`: there is no user to identify or to be offline for.
 *
 * @param requested - the parsed `scope` parameter (distinct tokens, in order)
 * @param ceiling - every scope this client may obtain with this grant (from the scope policy)
 * @param defaults - the scopes used when the request names none
 * @returns the granted scopes, in request order
 * @throws OAuthError `invalid_scope` (400) as described
 * @see RFC 6749 §4.4.2, §3.3; CC-01
 * @example
 * ```ts
 * clientCredentialsScope(['reports:read'], ['reports:read', 'reports:write'], []); // ['reports:read']
 * clientCredentialsScope([], ['reports:read'], ['reports:read']); // ['reports:read']
 * clientCredentialsScope(['admin'], ['reports:read'], []); // throws invalid_scope
 * ```
 */
export function clientCredentialsScope(
  requested: readonly string[],
  ceiling: readonly string[],
  defaults: readonly string[],
): readonly string[] {
  const allowed = new Set(ceiling);
  if (requested.length === 0) {
    const granted = defaults.filter((scope) => allowed.has(scope) && !USER_ONLY_SCOPES.has(scope));
    if (granted.length === 0)
      throw new OAuthError('invalid_scope', 'the scope parameter is required for this client');
    return granted;
  }
  for (const scope of requested) {
    if (USER_ONLY_SCOPES.has(scope)) {
      throw new OAuthError(
        'invalid_scope',
        `scope '${scope}' needs a user; client_credentials acts for the client alone`,
      );
    }
    if (!allowed.has(scope))
      throw new OAuthError('invalid_scope', `scope '${scope}' is not allowed for this client`);
  }
  return [...new Set(requested)];
}
