/**
 * The authorization codes aggregate: single-use codes (RFC 6749 §4.1.2) and, once redeemed, their
 * tombstones, which let a late replay find the grant it must revoke.
 * @module
 */
import type { AccessTokenRecord, GrantRecord, GrantStore, RefreshTokenRecord } from './grants.js';

/**
 * How long a consumed code stays readable past its `expiresAt`, in seconds (10 minutes, the
 * longest code lifetime RFC 6749 §4.1.2 allows): a replay within that time still finds the code
 * and revokes what it issued. Adapters delete codes only after it.
 *
 * @example
 * ```ts
 * import { CODE_TOMBSTONE_SECONDS, type AuthorizationCodeRecord } from 'portcullis';
 *
 * declare const code: AuthorizationCodeRecord;
 * const deletableAt = code.expiresAt + CODE_TOMBSTONE_SECONDS;
 * ```
 * @see RFC 6749 §4.1.2, §10.5
 * @group Storage
 * @category Contract
 */
export const CODE_TOMBSTONE_SECONDS = 600;

/**
 * An authorization code (RFC 6749 §4.1.2) with everything it is bound to.
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * declare const codeHash: string;
 * const code = await storage.codes.get(codeHash, Math.floor(Date.now() / 1000));
 * if (code?.consumedAt !== undefined) await storage.grants.revoke(code.grantId, Math.floor(Date.now() / 1000));
 * ```
 * @see RFC 6749 §4.1.2, §10.5; RFC 7636 §4.4
 * @group Storage
 * @category Records
 */
export interface AuthorizationCodeRecord {
  /** Base64url SHA-256 of the code. */
  readonly codeHash: string;
  /** The id of the grant the code creates, allocated with the code so that a replay can revoke it. */
  readonly grantId: string;
  readonly clientId: string;
  readonly userId: string;
  readonly redirectUri: string;
  readonly redirectUriSent: boolean;
  readonly codeChallenge: string;
  readonly codeChallengeMethod: 'S256';
  readonly scope: readonly string[];
  readonly resources: readonly string[];
  readonly nonce?: string;
  /** When the user authenticated (OIDC `auth_time`), epoch seconds. */
  readonly authTime: number;
  /** Epoch seconds. */
  readonly createdAt: number;
  /** Epoch seconds. */
  readonly expiresAt: number;
  /** Set (epoch seconds) once the code has been redeemed; the record then stays as a tombstone. */
  readonly consumedAt?: number;
}

/**
 * What a code redemption writes, everything minted before the call: the grant (under the id the
 * code allocated) and its first tokens.
 *
 * @example
 * ```ts
 * import type { CodeRedemption, Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * declare const redemption: CodeRedemption;
 * const result = await storage.codes.redeem(redemption);
 * if (result.outcome === 'replayed') await storage.grants.revoke(result.grantId, redemption.now);
 * ```
 * @see RFC 6749 §4.1.3, §10.5
 * @group Storage
 * @category Inputs and Outcomes
 */
export interface CodeRedemption {
  /** Hash of the code presented. */
  readonly codeHash: string;
  /** The new grant; its `grantId` is the code's {@link AuthorizationCodeRecord.grantId}. */
  readonly grant: GrantRecord;
  readonly accessToken: AccessTokenRecord;
  readonly refreshToken?: RefreshTokenRecord;
  /** Epoch seconds: becomes the code's `consumedAt`. */
  readonly now: number;
}

/**
 * Outcome of {@link CodeStore.redeem}.
 *
 * @example
 * ```ts
 * import type { RedeemResult } from 'portcullis';
 *
 * function grantToRevoke(result: RedeemResult): string | undefined {
 *   return result.outcome === 'replayed' ? result.grantId : undefined;
 * }
 * ```
 * @see RFC 6749 §4.1.2 (a code is used once; a replay revokes what it issued)
 * @group Storage
 * @category Inputs and Outcomes
 */
export type RedeemResult =
  /** The code was active: it is now consumed, and the grant and its tokens are stored. */
  | { readonly outcome: 'redeemed' }
  /**
   * The code had already been consumed (by a concurrent or an earlier caller, also after its
   * expiry while its tombstone lasts). Nothing was written; the caller revokes `grantId`.
   */
  | { readonly outcome: 'replayed'; readonly grantId: string; readonly consumedAt: number }
  /** Unknown, or expired without having been consumed. Nothing was written. */
  | { readonly outcome: 'invalid' };

/**
 * Authorization codes. One atomic step: {@link CodeStore.redeem}, which consumes the code and
 * creates its grant with the grant's first tokens at once, so that nothing after it can fail and
 * leave a consumed code without tokens.
 *
 * @example
 * ```ts
 * import type { AuthorizationCodeRecord, CodeStore } from 'portcullis';
 *
 * declare const codes: CodeStore;
 * declare const code: AuthorizationCodeRecord;
 * await codes.create(code);
 * const found = await codes.get(code.codeHash, code.createdAt + 1); // the code, not consumed
 * ```
 * @see RFC 6749 §4.1.2, §10.5; RFC 7636 §4.6
 * @group Storage
 * @category Contract
 */
export interface CodeStore {
  /** Stores a new code (its `codeHash` and `grantId` are fresh and random; `consumedAt` absent). */
  create(code: AuthorizationCodeRecord): Promise<void>;
  /**
   * The code, for checking its bindings before redeeming it:
   * - not consumed and `expiresAt > now` → the record;
   * - consumed and `now < expiresAt + CODE_TOMBSTONE_SECONDS` → the record with `consumedAt` (a
   *   tombstone: a replay, even a late one, finds the grant to revoke);
   * - otherwise (unknown, expired unconsumed, tombstone past) → `null`.
   */
  get(codeHash: string, now: number): Promise<AuthorizationCodeRecord | null>;
  /**
   * ATOMIC, all or nothing: marks the code consumed at `now` AND stores the grant with its access
   * token and refresh token, when the code is neither consumed nor expired: `redeemed`. Already
   * consumed (tombstone still kept): `replayed` with its grant id, nothing written. Otherwise
   * `invalid`, nothing written.
   *
   * Of any number of concurrent callers presenting the same code (across instances for a shared
   * adapter), exactly one gets `redeemed` and every other one `replayed`. It never revokes
   * anything: that is the grant's decision ({@link GrantStore.revoke}).
   */
  redeem(redemption: CodeRedemption): Promise<RedeemResult>;
}
