/**
 * The scope policy: which scopes exist, which a client may request, which a user may grant, and
 * when the user must be asked.
 * @module
 */
import { OAuthError } from '../core/errors.js';
import type { ClientRecord, ConsentRecord } from '../storage/types.js';
import { defineScopes, oidcScopes, type ScopeDefinition, type ScopeRegistry } from './registry.js';

/**
 * What the policy knows about the consent decision it is asked to make.
 *
 * @example
 * ```ts
 * import { createScopePolicy, type ConsentContext } from 'portcullis';
 *
 * const base = createScopePolicy();
 * // Ask again when the remembered consent is older than 30 days.
 * function consentRequired(context: ConsentContext): boolean {
 *   const stale = context.remembered !== null && context.remembered.updatedAt < Date.now() / 1000 - 30 * 86_400;
 *   return stale || base.consentRequired(context);
 * }
 * ```
 * @see RFC 6749 §10.2, RFC 8252 §8.6
 * @group Scopes (RFC 6749 §3.3)
 */
export interface ConsentContext {
  /** The client asking. */
  readonly client: ClientRecord;
  /** The signed-in user. */
  readonly userId: string;
  /** The scopes of this request, already allowed by {@link ScopePolicy.filterRequested}. */
  readonly scope: readonly string[];
  /** The resources (RFC 8707) of this request. */
  readonly resources: readonly string[];
  /** The consent the user gave this client before, if the server remembers one. */
  readonly remembered: ConsentRecord | null;
}

/**
 * Decides about scopes. The server calls it at the authorization endpoint (and at registration for
 * the `scope` metadata); replace it to encode your platform's rules. docs/scope-policy.md says when
 * each member is called.
 *
 * @example
 * ```ts
 * import { createScopePolicy, type ScopePolicy } from 'portcullis';
 *
 * const base = createScopePolicy();
 * // Your own apps (configured in `clients`) never show the consent page.
 * const scopePolicy: ScopePolicy = {
 *   ...base,
 *   consentRequired: (context) => context.client.origin !== 'static' && base.consentRequired(context),
 * };
 * ```
 * @see RFC 6749 §3.3
 * @group Scopes (RFC 6749 §3.3)
 */
export interface ScopePolicy {
  /** Every scope the server supports, in display order (advertised as `scopes_supported`). */
  readonly supported: readonly string[];
  /** The definition shown on the consent page, or `undefined` for an unknown scope. */
  describe(scope: string): ScopeDefinition | undefined;
  /** Scopes used when a request omits `scope`. An empty result makes omission an `invalid_scope` error. */
  defaultScopes(client: ClientRecord): readonly string[];
  /**
   * The scopes of `requested` this client may ask for. Throw {@link OAuthError} `invalid_scope` to
   * refuse the request; the default refuses unknown scopes and scopes outside the client's
   * registered `scope`.
   */
  filterRequested(client: ClientRecord, requested: readonly string[]): readonly string[];
  /** The scopes of `scope` this user may grant (the rest are removed silently before consent). */
  grantable(userId: string, client: ClientRecord, scope: readonly string[]): Promise<readonly string[]>;
  /** Whether the user must be asked; false lets a remembered consent stand. */
  consentRequired(context: ConsentContext): boolean;
  /**
   * The most a client may obtain with the `client_credentials` grant, acting for itself (RFC 6749
   * §4.4): the ceiling of what it may ask for. Absent: the client's registered `scope` (none when
   * it registered none). `openid` and `offline_access` are refused whatever it says.
   */
  clientCredentialsScopes?(client: ClientRecord): readonly string[] | Promise<readonly string[]>;
}

/**
 * Options of {@link createScopePolicy}.
 *
 * @example
 * ```ts
 * import { createScopePolicy, defineScopes, oidcScopes, type ScopePolicyOptions } from 'portcullis';
 *
 * const options: ScopePolicyOptions = {
 *   registry: defineScopes([
 *     ...oidcScopes,
 *     { name: 'courses:read', description: 'Read access to courses' },
 *     { name: 'courses:write', description: 'Write access to courses' },
 *   ]),
 *   defaultScopes: ['openid', 'courses:read'],
 *   grantable: (_userId, _client, scope) => scope.filter((s) => !s.endsWith(':write')),
 * };
 * const scopePolicy = createScopePolicy(options);
 * ```
 * @see RFC 6749 §3.3, RFC 8252 §8.6
 * @group Scopes (RFC 6749 §3.3)
 */
export interface ScopePolicyOptions {
  /** The scopes that exist. Default: the OIDC scopes `openid`, `profile`, `email`. */
  registry?: ScopeRegistry;
  /** Used when a request has no `scope`. Default: none, so a missing `scope` is `invalid_scope`. */
  defaultScopes?: readonly string[];
  /** Narrows what a user may grant, e.g. by role. Default: everything requested. */
  grantable?: (
    userId: string,
    client: ClientRecord,
    scope: readonly string[],
  ) => Promise<readonly string[]> | readonly string[];
  /**
   * Whether remembered consent may skip the consent page for public, dynamically registered
   * clients and public Client ID Metadata Document clients. Default false: any program can register
   * such a client under any name, or listen on its loopback redirect URI, so the user is asked
   * every time (RFC 8252 §8.6).
   */
  trustRememberedConsentOfPublicDynamicClients?: boolean;
  /**
   * The ceiling of the `client_credentials` grant for a client (see
   * {@link ScopePolicy.clientCredentialsScopes}). Default: the client's registered `scope`.
   *
   * @example
   * ```ts
   * import { createAuthorizationServer, createScopePolicy, defineScopes, memoryStorage } from 'portcullis';
   *
   * await createAuthorizationServer({
   *   issuer: 'https://auth.example.com',
   *   storage: memoryStorage(),
   *   clientCredentials: { enabled: true },
   *   scopePolicy: createScopePolicy({
   *     registry: defineScopes([
   *       { name: 'reports:read', description: 'Read reports' },
   *       { name: 'reports:write', description: 'Change reports' },
   *     ]),
   *     // An agent acting for itself may read what it registered for, never write: writes need a user.
   *     clientCredentialsScopes: (client) =>
   *       (client.metadata.scope?.split(' ') ?? []).filter((scope) => scope !== 'reports:write'),
   *   }),
   * });
   * ```
   * @see RFC 6749 §4.4, §3.3
   */
  clientCredentialsScopes?: (client: ClientRecord) => readonly string[] | Promise<readonly string[]>;
}

/**
 * The default scope policy over a registry.
 *
 * @param options - registry, default scopes, per-user narrowing
 * @returns a {@link ScopePolicy}
 * @throws TypeError at creation when a default scope is not in the registry
 * @throws OAuthError `invalid_scope` (400, redirected to the client) from `filterRequested` for
 * unknown scopes and scopes outside the client's registered `scope`
 * @see RFC 6749 §3.3
 * @example
 * ```ts
 * import { createScopePolicy, defineScopes, oidcScopes } from 'portcullis';
 *
 * const scopePolicy = createScopePolicy({
 *   registry: defineScopes([...oidcScopes, { name: 'notes:write', description: 'Change your notes' }]),
 *   // students may not grant write access
 *   grantable: (userId, client, scope) => scope.filter((s) => !s.endsWith(':write') || userId === 'owner'),
 * });
 * ```
 * @group Scopes (RFC 6749 §3.3)
 */
export function createScopePolicy(options: ScopePolicyOptions = {}): ScopePolicy {
  const registry = options.registry ?? defineScopes(oidcScopes);
  const supported = Object.freeze(registry.scopes.map((s) => s.name));
  const defaults = Object.freeze([...(options.defaultScopes ?? [])]);
  for (const scope of defaults) {
    if (registry.get(scope) === undefined)
      throw new TypeError(`default scope '${scope}' is not in the registry`);
  }
  const grantable = options.grantable;
  const trustPublic = options.trustRememberedConsentOfPublicDynamicClients ?? false;

  const clientCredentialsScopes = options.clientCredentialsScopes;
  return {
    supported,
    ...(clientCredentialsScopes === undefined ? {} : { clientCredentialsScopes }),
    describe: (scope) => registry.get(scope),
    defaultScopes: () => defaults,
    filterRequested(client, requested) {
      const allowed =
        client.metadata.scope === undefined ? undefined : new Set(client.metadata.scope.split(' '));
      for (const scope of requested) {
        if (registry.get(scope) === undefined) {
          throw new OAuthError('invalid_scope', `scope '${scope}' is not supported`);
        }
        if (allowed !== undefined && !allowed.has(scope)) {
          throw new OAuthError('invalid_scope', `scope '${scope}' is not registered for this client`);
        }
      }
      return requested;
    },
    async grantable(userId, client, scope) {
      if (grantable === undefined) return scope;
      const allowed = new Set(await grantable(userId, client, scope));
      return scope.filter((s) => allowed.has(s));
    },
    consentRequired({ client, scope, resources, remembered }) {
      if (remembered === null) return true;
      // Metadata document clients are public and self-asserted too: any local program can listen
      // on their loopback redirect URIs (RFC 8252 §8.6, MCP localhost impersonation).
      const isPublicDynamic =
        client.origin !== 'static' && client.metadata.token_endpoint_auth_method === 'none';
      if (isPublicDynamic && !trustPublic) return true;
      const grantedScopes = new Set(remembered.scope);
      const grantedResources = new Set(remembered.resources);
      return !scope.every((s) => grantedScopes.has(s)) || !resources.every((r) => grantedResources.has(r));
    },
  };
}
