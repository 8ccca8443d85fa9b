/**
 * Typed events for audit logs. Events name clients, users and grants; they never carry a token,
 * code or secret value.
 * @module
 */

interface EventBase {
  /** Epoch seconds. */
  readonly at: number;
}

/**
 * Every event the server emits, discriminated by `type`. Each also carries `at`, when it happened
 * in epoch seconds. Events name clients, users and grants; never a token, code or secret value.
 *
 * @example
 * ```ts
 * import type { AuthorizationServerEvent } from 'portcullis';
 *
 * function describe(event: AuthorizationServerEvent): string {
 *   switch (event.type) {
 *     case 'refresh.reuse_detected':
 *       return `grant ${event.grantId} revoked: a rotated refresh token was used again`;
 *     case 'token.issued':
 *       return `${event.clientId} got a token for ${event.userId} (${event.grantType})`;
 *     default:
 *       return event.type;
 *   }
 * }
 * ```
 * @see RFC 9700 §4.14.2 (refresh token reuse), RFC 6749 §4.1.2 (code replay)
 * @group Audit Events
 */
export type AuthorizationServerEvent = EventBase &
  (
    | { readonly type: 'client.registered'; readonly clientId: string; readonly confidential: boolean }
    | {
        readonly type: 'consent.granted';
        readonly clientId: string;
        readonly userId: string;
        readonly scope: readonly string[];
      }
    | { readonly type: 'consent.denied'; readonly clientId: string; readonly userId: string }
    | {
        readonly type: 'code.issued';
        readonly clientId: string;
        readonly userId: string;
        readonly grantId: string;
      }
    | { readonly type: 'code.replayed'; readonly clientId: string; readonly grantId: string }
    | {
        readonly type: 'token.issued';
        readonly clientId: string;
        readonly userId: string;
        readonly grantId: string;
        readonly jti: string;
        readonly grantType: 'authorization_code' | 'refresh_token' | 'client_credentials';
        readonly scope: readonly string[];
      }
    | { readonly type: 'refresh.rotated'; readonly clientId: string; readonly grantId: string }
    | { readonly type: 'refresh.reuse_detected'; readonly clientId: string; readonly grantId: string }
    | {
        readonly type: 'token.revoked';
        readonly clientId: string;
        readonly kind: 'access_token' | 'refresh_token';
        readonly grantId: string;
      }
    | {
        readonly type: 'grant.revoked';
        readonly grantId: string;
        readonly reason: 'user' | 'host' | 'code_replay' | 'refresh_reuse' | 'revocation';
      }
    | { readonly type: 'client_authentication.failed'; readonly clientId: string }
  );

/**
 * A listener for {@link AuthorizationServerEvent}s. Errors it throws are logged and otherwise ignored;
 * a returned promise is not awaited (a slow audit sink never delays a response).
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, type EventListener, memoryStorage } from 'portcullis';
 *
 * const onEvent: EventListener = (event) => {
 *   if (event.type === 'client_authentication.failed') console.warn('failed client auth', event.clientId);
 * };
 * await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage(), onEvent });
 * ```
 * @see docs/security.md (what the events name, and never carry)
 * @group Audit Events
 */
export type EventListener = (event: AuthorizationServerEvent) => void | Promise<void>;
