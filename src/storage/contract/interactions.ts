/**
 * The interactions aggregate: pending authorizations, the authorization requests waiting for the
 * user to log in and decide, behind an opaque single-use id.
 * @module
 */
import type { AuthorizationCodeRecord } from './codes.js';
import type { ConsentRecord } from './consents.js';

/**
 * The authorization request a pending authorization carries, validated (RFC 6749 §4.1.1, OIDC Core §3.1.2.1).
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * declare const idHash: string;
 * const pending = await storage.interactions.get(idHash, Math.floor(Date.now() / 1000));
 * console.log(pending?.request.scope, pending?.request.resources);
 * ```
 * @see RFC 6749 §4.1.1, RFC 7636 §4.3, RFC 8707 §2
 * @group Storage
 * @category Records
 */
export interface AuthorizationRequest {
  readonly clientId: string;
  /** The redirect URI the code goes to (the one requested, with its loopback port). */
  readonly redirectUri: string;
  /** Whether the client sent `redirect_uri`; then the token request must repeat it (RFC 6749 §4.1.3). */
  readonly redirectUriSent: boolean;
  readonly state?: string;
  readonly scope: readonly string[];
  /** RFC 8707 resource indicators the grant is bound to (at least one: the default resource). */
  readonly resources: readonly string[];
  readonly codeChallenge: string;
  readonly codeChallengeMethod: 'S256';
  readonly nonce?: string;
  readonly prompt: readonly ('none' | 'login' | 'consent' | 'select_account')[];
  /** OIDC `max_age` in seconds. */
  readonly maxAge?: number;
  readonly loginHint?: string;
  readonly uiLocales?: readonly string[];
}

/**
 * An authorization request waiting for login or consent, behind an opaque single-use id. Only the
 * user's decision comes back from the browser; everything else is read from here.
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * declare const idHash: string;
 * // ATOMIC: of two concurrent consent submissions, one gets the record, the other null.
 * const consumed = await storage.interactions.consume(idHash, Math.floor(Date.now() / 1000));
 * ```
 * @see RFC 6749 §10.12 (CSRF: the form is bound to the session and this request)
 * @group Storage
 * @category Records
 */
export interface PendingAuthorizationRecord {
  /** Base64url SHA-256 of the opaque id. */
  readonly idHash: string;
  readonly request: AuthorizationRequest;
  /** Epoch seconds. */
  readonly createdAt: number;
  /** Epoch seconds. */
  readonly expiresAt: number;
  /** The user the request is bound to once someone has authenticated. */
  readonly userId?: string;
  /** The host session it is bound to, when the host reports one. */
  readonly sessionId?: string;
  /** Base64url SHA-256 of the CSRF token the consent form carries. */
  readonly csrfHash?: string;
}

/**
 * Who a pending authorization is bound to once a user has authenticated.
 *
 * @example
 * ```ts
 * import type { InteractionBinding, Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * declare const idHash: string;
 * declare const csrfHash: string;
 * const binding: InteractionBinding = { userId: 'user-42', sessionId: 'sess-1', csrfHash };
 * const bound = await storage.interactions.bind(idHash, binding, Math.floor(Date.now() / 1000));
 * ```
 * @see RFC 6749 §10.12
 * @group Storage
 * @category Inputs and Outcomes
 */
export interface InteractionBinding {
  readonly userId: string;
  /** Omitted: the session already bound (if any) is kept. */
  readonly sessionId?: string;
  /** Base64url SHA-256 of the CSRF token of the consent form. */
  readonly csrfHash: string;
}

/**
 * What completing a pending authorization with the user's approval writes, all built before the
 * call: the authorization code it yields and, when consents are remembered, what the user allowed.
 *
 * @example
 * ```ts
 * import type { InteractionCompletion, Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * declare const completion: InteractionCompletion;
 * if (!(await storage.interactions.complete(completion))) console.log('already completed, or expired');
 * ```
 * @see RFC 6749 §4.1.2 (the code), §10.12 (single use of the consent form)
 * @group Storage
 * @category Inputs and Outcomes
 */
export interface InteractionCompletion {
  /** Hash of the pending authorization's id. */
  readonly idHash: string;
  /** The code to store (fresh `codeHash` and `grantId`, not consumed). */
  readonly code: AuthorizationCodeRecord;
  /**
   * What the user allowed, to remember: ADDED to the consent already stored for
   * `(userId, clientId)` (the union of scopes and of resources, those stored before first, then
   * the new ones, without duplicates; `createdAt` kept, `updatedAt` replaced), or stored as the
   * consent when there is none. Absent: consents are left alone.
   */
  readonly consent?: ConsentRecord;
  /**
   * The user, session and CSRF hash of the consent form being approved. When given, the
   * pending authorization completes only while it is bound to exactly these: its `userId` is
   * `boundTo.userId`, its `csrfHash` is `boundTo.csrfHash`, and its `sessionId` is absent or
   * `boundTo.sessionId` (an absent `boundTo.sessionId` matches only a record without one). The
   * server may check the form against a record it remembers instead of reading storage first, so
   * a binding replaced meanwhile (the same user's consent page shown again on another instance)
   * must be decided here, in the atomic step. Absent when no form is involved (a request resumed
   * after login that needs no consent): then the binding is not checked.
   */
  readonly boundTo?: InteractionBinding;
  /** Epoch seconds. */
  readonly now: number;
}

/**
 * Pending authorizations. Two atomic steps: {@link InteractionStore.consume} and
 * {@link InteractionStore.complete}.
 *
 * @example
 * ```ts
 * import type { InteractionStore, PendingAuthorizationRecord } from 'portcullis';
 *
 * declare const interactions: InteractionStore;
 * declare const record: PendingAuthorizationRecord;
 * await interactions.create(record);
 * const mine = await interactions.consume(record.idHash, record.createdAt + 5); // the record, once
 * ```
 * @see RFC 6749 §4.1.1, §10.12
 * @group Storage
 * @category Contract
 */
export interface InteractionStore {
  /** Stores a pending authorization (its `idHash` is fresh and random). */
  create(pending: PendingAuthorizationRecord): Promise<void>;
  /** The pending authorization, or `null` when unknown, consumed, or its `expiresAt <= now`. */
  get(idHash: string, now: number): Promise<PendingAuthorizationRecord | null>;
  /**
   * Binds a pending authorization to a user, a session and a CSRF token. Returns false when it is
   * unknown, expired, or already bound to a *different* user (it never rebinds to another user);
   * binding again to the same user replaces the CSRF hash.
   */
  bind(idHash: string, binding: InteractionBinding, now: number): Promise<boolean>;
  /**
   * ATOMIC. Removes and returns the pending authorization. Of any number of concurrent callers
   * (across instances for a shared adapter), exactly one receives the record; the others, and
   * every later caller, receive `null`. An expired record is removed all the same and reads `null`.
   */
  consume(idHash: string, now: number): Promise<PendingAuthorizationRecord | null>;
  /**
   * ATOMIC, all or nothing: removes the pending authorization `completion.idHash` AND stores
   * `completion.code` AND remembers `completion.consent` (see {@link InteractionCompletion}), when
   * the pending authorization exists, `expiresAt > now`, and it is bound as `completion.boundTo`
   * says (when given): returns true. Otherwise writes nothing and returns false (unknown, already
   * consumed or completed, expired, bound otherwise).
   *
   * Of any number of concurrent callers completing the same pending authorization (across
   * instances for a shared adapter), exactly one gets true, and only its code is stored. The
   * approval of a consent is this one round trip when the server that showed the consent page
   * receives the form (it remembers the record it stored); otherwise the server reads the
   * pending authorization ({@link InteractionStore.get}) to check the form first.
   */
  complete(completion: InteractionCompletion): Promise<boolean>;
}
