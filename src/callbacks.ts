/**
 * What the host's callbacks receive and return: the signed-in user (`authenticate`), the login
 * redirect (`loginUrl`), the claims of a user (`claims`) and the consent page (`consent.render`).
 * @module
 */
import type { ClientRecord } from './storage/types.js';

/**
 * The user the host says is signed in, returned by the `authenticate` option.
 *
 * @example
 * ```ts
 * import type { AuthenticatedUser } from 'portcullis';
 *
 * const user: AuthenticatedUser = {
 *   id: 'user-42', // the `sub` of every token: stable, never reassigned
 *   authTime: Math.floor(Date.parse('2030-01-01T09:00:00Z') / 1000), // when they entered credentials
 *   sessionId: 'sess-8f3a', // binds the consent form to this session
 *   name: 'Ada Lovelace',
 * };
 * ```
 * @see OpenID Connect Core §2 (`sub`, `auth_time`)
 * @group Login and Consent
 */
export interface AuthenticatedUser {
  /** Stable, never reassigned identifier: the `sub` of every token (OIDC Core §2). */
  readonly id: string;
  /** When the user last authenticated, epoch seconds (OIDC `auth_time`). */
  readonly authTime: number;
  /** The host's session id; pending authorizations and consent forms are bound to it. */
  readonly sessionId?: string;
  /** A name to show on the consent page ("Signed in as ..."). */
  readonly name?: string;
}

/**
 * What the login redirect needs to know: what a `loginUrl` function receives.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   loginUrl: (context) =>
 *     `/sign-in?next=${encodeURIComponent(context.returnTo)}${context.reauthenticate ? '&force=1' : ''}`,
 * });
 * ```
 * @see OpenID Connect Core §3.1.2.1 (`prompt`, `max_age`, `login_hint`, `ui_locales`)
 * @group Login and Consent
 */
export interface LoginRedirectContext {
  /** Absolute URL to send the browser back to after login (the resumed authorization). */
  readonly returnTo: string;
  /** The client asking for authorization. */
  readonly clientId: string;
  /** True when the user must authenticate again (`prompt=login` or `max_age`). */
  readonly reauthenticate: boolean;
  /** The request's `login_hint` (OIDC Core §3.1.2.1), to prefill the login form. */
  readonly loginHint?: string;
  /** The request's `ui_locales`, most preferred first. */
  readonly uiLocales?: readonly string[];
}

/**
 * Claims about a user, released by scope at the UserInfo endpoint: `profile` releases the profile
 * claims (`name`, `given_name`, `picture`, ...), `email` releases `email` and `email_verified`.
 * Anything else returned is not released; `sub` always is, from the token.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   claims: async (userId, scope) => ({
 *     name: 'Ada Lovelace',
 *     email: scope.includes('email') ? 'ada@example.com' : undefined,
 *     email_verified: true,
 *   }),
 * });
 * ```
 * @see OpenID Connect Core §5.1, §5.3.2, §5.4
 * @group Login and Consent
 */
export type UserClaims = Readonly<Record<string, unknown>>;

/**
 * What a custom consent page receives. Every string is raw: escape it. The form must post
 * `fields` unchanged, plus `decision=allow` or `decision=deny`, to `action`.
 *
 * @example
 * ```ts
 * import type { ConsentPageContext } from 'portcullis';
 *
 * declare function escapeHtml(text: string): string;
 *
 * function render(context: ConsentPageContext): string {
 *   const hidden = Object.entries(context.fields)
 *     .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
 *     .join('');
 *   return `<h1>Allow ${escapeHtml(context.clientName)}?</h1>
 * <form method="post" action="${escapeHtml(context.action)}">${hidden}
 * <button name="decision" value="allow">Allow</button><button name="decision" value="deny">Deny</button></form>`;
 * }
 * ```
 * @see RFC 6749 §10.2 (client impersonation), §10.12 (CSRF); RFC 8252 §8.6
 * @group Login and Consent
 */
export interface ConsentPageContext {
  /** The client asking for access. */
  readonly client: ClientRecord;
  /** The client's display name, or its id. */
  readonly clientName: string;
  /** Where the browser goes after the decision. */
  readonly redirectUri: string;
  /** `host:port` of the redirect URI. */
  readonly redirectHost: string;
  /** True when the redirect goes to a loopback address (any local program could listen there). */
  readonly loopback: boolean;
  /** The scopes the user is asked to grant, each with the words of its {@link ScopeDefinition}. */
  readonly scopes: readonly {
    /** The scope token. */
    readonly name: string;
    /** What granting it means. */
    readonly description: string;
  }[];
  /**
   * Scopes the client asked for that this user cannot grant (the scope policy's `grantable` left
   * them out): they will not be in the tokens, and the page should say so. Empty when none.
   */
  readonly notGrantable: readonly {
    /** The scope token. */
    readonly name: string;
    /** What granting it would mean. */
    readonly description: string;
  }[];
  /** The resources (RFC 8707) the tokens will be for. */
  readonly resources: readonly string[];
  /** Where the form posts. */
  readonly action: string;
  /** Hidden fields the form must post back unchanged, plus `decision=allow` or `decision=deny`. */
  readonly fields: Readonly<Record<string, string>>;
  /** The signed-in user who decides. */
  readonly userId: string;
  /** {@link AuthenticatedUser.name}, when the host gave one. */
  readonly userName?: string;
  /** The request's `ui_locales`, most preferred first. */
  readonly uiLocales?: readonly string[];
}
