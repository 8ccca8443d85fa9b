/**
 * Resource indicators (RFC 8707): which resource servers a grant and its tokens are for.
 * @module
 */
import type { ServerConfig } from '../config.js';
import { OAuthError } from '../core/errors.js';

/**
 * Validates `resource` values of an authorization request against the configured resources.
 * None given means the default resource. Returns distinct values in order.
 */
export function resolveResources(config: ServerConfig, requested: readonly string[]): string[] {
  if (requested.length === 0) return [config.defaultResource];
  const out: string[] = [];
  for (const resource of requested) {
    if (resource.includes('#'))
      throw new OAuthError('invalid_target', 'a resource indicator must not contain a fragment');
    if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(resource)) {
      throw new OAuthError('invalid_target', 'a resource indicator must be an absolute URI');
    }
    if (!config.resources.some((r) => r.resource === resource)) {
      throw new OAuthError(
        'invalid_target',
        `the resource '${resource}' is not served by this authorization server`,
      );
    }
    if (!out.includes(resource)) out.push(resource);
  }
  return out;
}

/** Narrows a grant's resources at the token endpoint (RFC 8707 §2.2): only a subset may be asked for. */
export function narrowResources(granted: readonly string[], requested: readonly string[]): readonly string[] {
  if (requested.length === 0) return granted;
  for (const resource of requested) {
    if (!granted.includes(resource)) {
      throw new OAuthError('invalid_target', `the resource '${resource}' was not part of the authorization`);
    }
  }
  return [...new Set(requested)];
}
