import {
  type ClientRecord,
  createScopePolicy,
  defineScopes,
  OAuthError,
  oidcScopes,
  type ScopePolicy,
} from 'portcullis';

/** Your user store. */
declare const users: { role(userId: string): Promise<'owner' | 'student' | undefined> };

// #region registry
export const notesScopes = defineScopes([
  ...oidcScopes, // openid, profile, email: UserInfo releases claims for these
  { name: 'notes:read', description: 'Read your notes', kind: 'api' },
  { name: 'notes:write', description: 'Create, change and delete your notes', kind: 'api' },
]);
// #endregion registry

// #region options
export const scopePolicy = createScopePolicy({
  registry: notesScopes,
  // A request without `scope` gets these (without this option it is refused with invalid_scope).
  defaultScopes: ['openid', 'notes:read'],
  // What this user may grant. The rest is removed before the consent page, silently.
  grantable: async (userId, _client, scope) => {
    const role = await users.role(userId);
    return role === 'owner' ? scope : scope.filter((s) => !s.endsWith(':write'));
  },
});
// #endregion options

// #region first-party
const base = createScopePolicy({ registry: notesScopes });

/** Your own apps, configured in `clients`, are never asked for consent; everyone else as usual. */
export const firstPartyPolicy: ScopePolicy = {
  ...base,
  consentRequired: (context) => context.client.origin !== 'static' && base.consentRequired(context),
};
// #endregion first-party

// #region lenient
/**
 * Drops scopes this server does not know instead of refusing the request (RFC 6749 §3.3 lets a
 * server grant less than asked; the token response's `scope` tells the client what it got).
 */
export const lenientPolicy: ScopePolicy = {
  ...base,
  filterRequested(client: ClientRecord, requested: readonly string[]) {
    const known = requested.filter((s) => base.describe(s) !== undefined);
    if (known.length === 0) throw new OAuthError('invalid_scope', 'none of the requested scopes exist');
    return base.filterRequested(client, known);
  },
};
// #endregion lenient

// #region from-scratch
/** A policy of your own: every member of the interface, written out. */
export function registeredScopesPolicy(): ScopePolicy {
  const registry = notesScopes;
  return {
    // Advertised as scopes_supported, in this order.
    supported: registry.scopes.map((s) => s.name),
    // The words on the consent page; undefined marks a scope as unknown.
    describe: (scope) => registry.get(scope),
    // A request without `scope` gets what the client registered (RFC 7591 `scope`), if anything.
    defaultScopes: (client) => client.metadata.scope?.split(' ') ?? [],
    // Refuse, with invalid_scope, what does not exist or the client did not register.
    filterRequested(client, requested) {
      const registered = client.metadata.scope?.split(' ');
      for (const scope of requested) {
        if (registry.get(scope) === undefined || (registered !== undefined && !registered.includes(scope))) {
          throw new OAuthError('invalid_scope', `scope '${scope}' is not available to this client`);
        }
      }
      return requested;
    },
    // Every user may grant everything here.
    grantable: async (_userId, _client, scope) => scope,
    // Ask unless a remembered consent covers this request; always ask public clients that anyone
    // could have registered under any name (RFC 8252 §8.6).
    consentRequired({ client, scope, resources, remembered }) {
      if (remembered === null) return true;
      if (client.origin !== 'static' && client.metadata.token_endpoint_auth_method === 'none') return true;
      return (
        !scope.every((s) => remembered.scope.includes(s)) ||
        !resources.every((r) => remembered.resources.includes(r))
      );
    },
  };
}
// #endregion from-scratch
