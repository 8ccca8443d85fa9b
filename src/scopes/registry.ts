/**
 * Scope registries: the scopes a server knows, each with the words a consent page shows.
 * @module
 */

/**
 * One scope: its name on the wire and what granting it means, in words a user understands.
 *
 * @example
 * ```ts
 * import type { ScopeDefinition } from 'portcullis';
 *
 * const notesRead: ScopeDefinition = { name: 'notes:read', description: 'Read your notes', kind: 'api' };
 * ```
 * @see RFC 6749 §3.3
 * @group Scopes (RFC 6749 §3.3)
 */
export interface ScopeDefinition {
  /** The scope token (RFC 6749 §3.3), e.g. `courses:read`. */
  readonly name: string;
  /** What the scope grants, shown on the consent page ("Read access to courses"). */
  readonly description: string;
  /** OIDC scopes (`openid`, `profile`, `email`) release identity claims rather than API access. */
  readonly kind?: 'identity' | 'api';
}

/**
 * A list of scope definitions with lookup by name, built by {@link defineScopes}.
 *
 * @example
 * ```ts
 * import { defineScopes, oidcScopes } from 'portcullis';
 *
 * const registry = defineScopes([...oidcScopes, { name: 'notes:read', description: 'Read your notes' }]);
 * console.log(registry.get('notes:read')?.description); // 'Read your notes'
 * console.log(registry.scopes.length); // 4
 * ```
 * @see RFC 6749 §3.3
 * @group Scopes (RFC 6749 §3.3)
 */
export interface ScopeRegistry {
  /** Every definition, in display order. */
  readonly scopes: readonly ScopeDefinition[];
  /** The definition of the scope `name`, or `undefined` when the registry does not define it. */
  get(name: string): ScopeDefinition | undefined;
}

/**
 * Builds a registry from definitions, refusing names that are not RFC 6749 §3.3 scope tokens and
 * duplicate names.
 *
 * @param definitions - the scopes
 * @returns a registry with lookup by name
 * @throws TypeError when a name is invalid or repeated
 * @see RFC 6749 §3.3 (scope-token syntax)
 * @example
 * ```ts
 * import { defineScopes } from 'portcullis';
 *
 * const scopes = defineScopes([{ name: 'notes:read', description: 'Read your notes' }]);
 * ```
 * @group Scopes (RFC 6749 §3.3)
 */
export function defineScopes(definitions: readonly ScopeDefinition[]): ScopeRegistry {
  const byName = new Map<string, ScopeDefinition>();
  for (const scope of definitions) {
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope.name)) {
      throw new TypeError(`'${scope.name}' is not a valid scope token (RFC 6749 §3.3)`);
    }
    if (byName.has(scope.name)) throw new TypeError(`scope '${scope.name}' is defined twice`);
    byName.set(scope.name, Object.freeze({ ...scope }));
  }
  const scopes = Object.freeze([...byName.values()]);
  return Object.freeze({ scopes, get: (name: string) => byName.get(name) });
}

/**
 * The OpenID Connect scopes this library releases claims for (OIDC Core §5.4): `openid` (an ID
 * token, and UserInfo), `profile` and `email`. Spread them into your own registry.
 *
 * @example
 * ```ts
 * import { defineScopes, oidcScopes } from 'portcullis';
 *
 * const registry = defineScopes([...oidcScopes, { name: 'notes:read', description: 'Read your notes' }]);
 * ```
 * @see OpenID Connect Core §5.4
 * @group Scopes (RFC 6749 §3.3)
 */
export const oidcScopes: readonly ScopeDefinition[] = Object.freeze([
  { name: 'openid', description: 'Confirm who you are (OpenID Connect sign-in)', kind: 'identity' },
  { name: 'profile', description: 'See your basic profile: name and picture', kind: 'identity' },
  { name: 'email', description: 'See your email address', kind: 'identity' },
]);
