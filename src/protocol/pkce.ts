/**
 * PKCE (RFC 7636) with S256 only: `plain` and a missing method are refused (RFC 9700 §2.1.1).
 * @module
 */
import { s256, timingSafeEqual } from '../core/crypto.js';
import { OAuthError } from '../core/errors.js';

// RFC 7636 §4.1: a verifier is 43-128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~".
const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;
// An S256 challenge is BASE64URL(SHA-256(verifier)) (RFC 7636 §4.2): 32 bytes are exactly 43
// characters, and the last one carries only 4 bits (its 2 low bits are 0). Anything else, though
// within §4.2's 43-128 range, can never match a verifier.
const S256_CHALLENGE = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

/** Validates the challenge and method of an authorization request. */
export function checkCodeChallenge(challenge: string | undefined, method: string | undefined): string {
  if (challenge === undefined) {
    throw new OAuthError(
      'invalid_request',
      'code_challenge is required: PKCE with S256 is mandatory for every client',
    );
  }
  if (method === undefined) {
    throw new OAuthError(
      'invalid_request',
      "code_challenge_method is required and must be 'S256' (an omitted method means 'plain', which is not allowed)",
    );
  }
  if (method !== 'S256') {
    throw new OAuthError('invalid_request', `code_challenge_method '${method}' is not supported; use 'S256'`);
  }
  if (!S256_CHALLENGE.test(challenge)) {
    throw new OAuthError(
      'invalid_request',
      'an S256 code_challenge must be the base64url of a SHA-256 digest: exactly 43 characters of A-Z a-z 0-9 - _, without padding',
    );
  }
  return challenge;
}

/** Checks a verifier against the stored S256 challenge. Missing or malformed → `invalid_request`; wrong → `invalid_grant`. */
export async function verifyCodeVerifier(verifier: string | undefined, challenge: string): Promise<void> {
  if (verifier === undefined) {
    throw new OAuthError('invalid_request', 'code_verifier is required (RFC 7636 §4.5)');
  }
  if (!PKCE_VALUE.test(verifier)) {
    throw new OAuthError(
      'invalid_request',
      'code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~',
    );
  }
  if (!timingSafeEqual(await s256(verifier), challenge)) {
    throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
  }
}
