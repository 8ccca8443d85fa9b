/**
 * The signed-in user, as the host reports it through the `authenticate` option.
 * @module
 */
import { OAuthError } from '../core/errors.js';
import type { OAuthRequest } from '../core/http.js';
import type { AuthenticatedUser } from '../options.js';
import type { ServerContext } from '../server-context.js';

/** Reads the user from the host's `authenticate` hook; `null` when nobody is signed in. */
export async function currentUser(
  ctx: ServerContext,
  request: OAuthRequest,
): Promise<AuthenticatedUser | null> {
  const authenticate = ctx.config.authenticate;
  if (authenticate === undefined) {
    throw new OAuthError('server_error', 'the authorization endpoint needs the authenticate option');
  }
  const user = await authenticate(request);
  if (user === null) return null;
  if (typeof user.id !== 'string' || user.id.length === 0 || !Number.isFinite(user.authTime)) {
    throw new OAuthError('server_error', 'authenticate returned a user without id or authTime');
  }
  return user;
}
