/**
 * AZ-12 for S256: a challenge is BASE64URL(SHA-256(verifier)) (RFC 7636 §4.2), exactly 43
 * characters of the base64url alphabet whose last one carries 4 bits. Anything else is within
 * §4.2's 43-128 range perhaps, but no verifier can ever match it, so it is refused at the
 * authorization endpoint instead of failing later at the token endpoint.
 */
import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../src/core/errors.js';
import { checkCodeChallenge } from '../../src/protocol/pkce.js';

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

function refused(challenge: string): OAuthError {
  try {
    checkCodeChallenge(challenge, 'S256');
  } catch (error) {
    expect(error).toBeInstanceOf(OAuthError);
    return error as OAuthError;
  }
  throw new Error(`accepted ${challenge}`);
}

describe('AZ-12 an S256 code_challenge must be exactly 43 base64url characters', () => {
  it('accepts the challenge of any verifier', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 96 }), (bytes) => {
        const challenge = s256(Buffer.from(bytes).toString('base64url'));
        expect(checkCodeChallenge(challenge, 'S256')).toBe(challenge);
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    ['44 characters', `${s256('x')}A`],
    ['128 characters (RFC 7636 §4.2 range, but no digest is that long)', 'a'.repeat(128)],
    ['42 characters', s256('x').slice(0, 42)],
    ['padding', `${s256('x')}=`],
    ["'.' and '~' (verifier characters, not base64url)", `${'a'.repeat(41)}.~`],
    ['a last character carrying more than 4 bits', `${'a'.repeat(42)}B`],
    ['standard base64 (+ and /)', `${'a'.repeat(40)}+/A`],
  ])('refuses %s with invalid_request', (_name, challenge) => {
    const error = refused(challenge);
    expect(error.code).toBe('invalid_request');
    expect(error.description).toContain('exactly 43 characters');
  });

  it('accepts a random 32-byte digest and nothing one character longer', () => {
    const challenge = createHash('sha256').update(randomBytes(16)).digest('base64url');
    expect(checkCodeChallenge(challenge, 'S256')).toBe(challenge);
    refused(`${challenge}A`);
  });
});
