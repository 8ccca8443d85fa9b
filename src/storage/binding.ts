/**
 * Whether a pending authorization is bound to a user, session and consent form: one shape of that
 * binding for the consent page and the decision, and one predicate for the decision's check of the
 * form and for the memory backend's atomic step, so they cannot disagree (the SQL backends state
 * the same in their `WHERE` clause).
 * @module
 */
import { timingSafeEqual } from '../core/crypto.js';
import type { InteractionBinding, PendingAuthorizationRecord } from './types.js';

/** The binding of a consent form: the user it was shown to, the hash of its CSRF token, the session. */
export function bindingOf(
  user: { readonly id: string; readonly sessionId?: string },
  csrfHash: string,
): InteractionBinding {
  return {
    userId: user.id,
    csrfHash,
    ...(user.sessionId === undefined ? {} : { sessionId: user.sessionId }),
  };
}

/**
 * True when `record` is bound to `boundTo.userId` with `boundTo.csrfHash` (compared in constant
 * time), and to `boundTo.sessionId` or to no session at all.
 */
export function isBoundTo(record: PendingAuthorizationRecord, boundTo: InteractionBinding): boolean {
  const sameSession = record.sessionId === undefined || record.sessionId === boundTo.sessionId;
  const sameForm = record.csrfHash !== undefined && timingSafeEqual(record.csrfHash, boundTo.csrfHash);
  return record.userId === boundTo.userId && sameSession && sameForm;
}
