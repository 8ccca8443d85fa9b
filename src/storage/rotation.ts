/**
 * What every backend's `rotateRefreshToken` answers when the token was not rotated by this call:
 * the facts of the rotation that came first, or `invalid`. One mapping, so the backends cannot
 * disagree on it (the conformance kit checks the result either way).
 * @module
 */
import type { RefreshTokenRecord, RotateResult } from './types.js';

/**
 * The answer for a presented token that this call could not rotate: `already_rotated` with its
 * facts when it was rotated, `invalid` when it is absent (unknown, expired, revoked, its grant
 * ended) or was never rotated.
 */
export function notRotated(token: RefreshTokenRecord | null | undefined): RotateResult {
  if (token == null || token.rotatedAt === undefined || token.successorHash === undefined) {
    return { outcome: 'invalid' };
  }
  return {
    outcome: 'already_rotated',
    grantId: token.grantId,
    rotatedAt: token.rotatedAt,
    successorHash: token.successorHash,
    ...(token.sealedSuccessor === undefined ? {} : { sealedSuccessor: token.sealedSuccessor }),
  };
}
