/**
 * DPoP-bound tokens (RFC 9449 §5, §7.1, §7.2; DPOP-02, DPOP-03): the `Authorization: DPoP`
 * credential, the challenges, and the attacks: a bound token presented as Bearer, a stolen bound
 * token with the thief's own valid proof, a refresh token presented with another key.
 */
import { describe, expect, it } from 'vitest';
import { isOAuthError } from '../../src/core/errors.js';
import { accessTokenHash, type VerifiedDpopProof, verifyDpopProof } from '../../src/protocol/dpop.js';
import {
  checkAccessTokenBinding,
  checkRefreshTokenBinding,
  type ResourceChallenges,
  readAccessTokenCredential,
  requireDpopForClient,
  resourceChallenge,
} from '../../src/protocol/dpop-binding.js';
import { jwkThumbprint } from '../../src/protocol/public-jwk.js';
import { memoryReplayStore } from '../../src/protocol/replay-store.js';
import { KEYS, sign, testKey } from './key-fixtures.js';

const RM = 'https://api.example.com/.well-known/oauth-protected-resource';
const BOTH: ResourceChallenges = {
  algs: ['ES256', 'EdDSA'],
  params: { resource_metadata: RM },
  bearer: true,
};
const DPOP_ONLY: ResourceChallenges = { algs: ['ES256'], bearer: false };
const TOKEN = 'Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU';

function thrown(fn: () => unknown) {
  try {
    fn();
  } catch (error) {
    if (isOAuthError(error)) return error;
    throw error;
  }
  throw new Error('expected an OAuthError');
}

function proofOf(jkt: string): VerifiedDpopProof {
  return { jkt, jwk: KEYS.ES256.publicJwk, alg: 'ES256', jti: 'j', issuedAt: 0 };
}

describe('resourceChallenge (RFC 9449 §7.1, §7.2)', () => {
  it('offers DPoP with algs, and Bearer first when bearer tokens are accepted', () => {
    expect(resourceChallenge(BOTH)).toBe(
      `Bearer resource_metadata="${RM}", DPoP algs="ES256 EdDSA", resource_metadata="${RM}"`,
    );
    expect(resourceChallenge(DPOP_ONLY)).toBe('DPoP algs="ES256"');
  });

  it("puts the error in the challenge of the client's scheme only", () => {
    expect(resourceChallenge(BOTH, { code: 'invalid_token', description: 'expired', scheme: 'Bearer' })).toBe(
      `Bearer error="invalid_token", error_description="expired", resource_metadata="${RM}", ` +
        `DPoP algs="ES256 EdDSA", resource_metadata="${RM}"`,
    );
    expect(resourceChallenge(BOTH, { code: 'invalid_token', scheme: 'DPoP' })).toBe(
      `Bearer resource_metadata="${RM}", DPoP algs="ES256 EdDSA", error="invalid_token", resource_metadata="${RM}"`,
    );
  });
});

describe('readAccessTokenCredential (RFC 9449 §7.1; RFC 6750 §2.1)', () => {
  it('reads the DPoP scheme in any case, and Bearer when accepted', () => {
    expect(readAccessTokenCredential(`DPoP ${TOKEN}`, BOTH)).toEqual({ scheme: 'DPoP', token: TOKEN });
    expect(readAccessTokenCredential(`dpop ${TOKEN}`, BOTH)).toEqual({ scheme: 'DPoP', token: TOKEN });
    expect(readAccessTokenCredential(`bearer ${TOKEN}`, BOTH)).toEqual({ scheme: 'Bearer', token: TOKEN });
    expect(readAccessTokenCredential(undefined, BOTH)).toBeUndefined();
  });

  it.each([
    ['Bearer at a DPoP-only resource', `Bearer ${TOKEN}`, DPOP_ONLY, 'invalid_request', 400],
    ['another scheme', `Basic ${TOKEN}`, BOTH, 'invalid_request', 400],
    ['two Authorization headers', `DPoP ${TOKEN}, DPoP ${TOKEN}`, BOTH, 'invalid_request', 400],
    ['an empty credential', 'DPoP ', BOTH, 'invalid_request', 400],
    ['a tab before the token', `DPoP\t${TOKEN}`, BOTH, 'invalid_request', 400],
    ['characters outside token68', 'DPoP a b', BOTH, 'invalid_token', 401],
    ['an oversized token', `DPoP ${'a'.repeat(8193)}`, BOTH, 'invalid_token', 401],
  ])('refuses %s with a challenge', (_label, header, challenges, code, status) => {
    const error = thrown(() => readAccessTokenCredential(header, challenges));
    expect(error.code).toBe(code);
    expect(error.status).toBe(status);
    expect(error.headers['www-authenticate']).toMatch(/(^|, )DPoP algs="/);
  });
});

describe('checkAccessTokenBinding (DPOP-03)', () => {
  const jkt = 'bound-key-thumbprint';

  it('accepts a bound token with a proof by its key, and an unbound token as Bearer', () => {
    expect(() =>
      checkAccessTokenBinding({ scheme: 'DPoP', token: TOKEN }, jkt, proofOf(jkt), BOTH),
    ).not.toThrow();
    expect(() =>
      checkAccessTokenBinding({ scheme: 'Bearer', token: TOKEN }, undefined, undefined, BOTH),
    ).not.toThrow();
  });

  it('refuses a bound token presented as Bearer with 401 invalid_token (§7.2)', () => {
    const error = thrown(() =>
      checkAccessTokenBinding({ scheme: 'Bearer', token: TOKEN }, jkt, undefined, BOTH),
    );
    expect(error.code).toBe('invalid_token');
    expect(error.status).toBe(401);
    expect(error.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token", .*resource_metadata=/);
  });

  it('refuses a proof made with another key than the token is bound to (§7.1)', () => {
    const error = thrown(() =>
      checkAccessTokenBinding({ scheme: 'DPoP', token: TOKEN }, jkt, proofOf('other'), BOTH),
    );
    expect(error.code).toBe('invalid_token');
    expect(error.status).toBe(401);
    expect(error.headers['www-authenticate']).toMatch(
      /, DPoP algs="ES256 EdDSA", error="invalid_token", error_description="[^"]+", resource_metadata="[^"]+"$/,
    );
  });

  it('refuses the DPoP scheme without a proof, and an unbound token sent as DPoP', () => {
    expect(
      thrown(() => checkAccessTokenBinding({ scheme: 'DPoP', token: TOKEN }, jkt, undefined, BOTH)).code,
    ).toBe('invalid_token');
    expect(
      thrown(() => checkAccessTokenBinding({ scheme: 'DPoP', token: TOKEN }, undefined, proofOf(jkt), BOTH))
        .code,
    ).toBe('invalid_token');
  });

  it("DPOP-03 refuses a stolen bound token used with the thief's own valid proof", async () => {
    const owner = KEYS.ES256;
    const thief = await testKey('ES256');
    const url = 'https://api.example.com/items';
    const now = Math.floor(Date.now() / 1000);
    const stolenProof = await sign(
      thief,
      { jti: crypto.randomUUID(), htm: 'GET', htu: url, iat: now, ath: await accessTokenHash(TOKEN) },
      { typ: 'dpop+jwt', jwk: thief.publicJwk },
    );
    const credential = readAccessTokenCredential(`DPoP ${TOKEN}`, BOTH)!;
    const proof = await verifyDpopProof(
      { dpop: stolenProof, method: 'GET', url, accessToken: credential.token },
      { at: 'resource', replayStore: memoryReplayStore(), algorithms: BOTH.algs },
    );
    const boundTo = await jwkThumbprint(owner.publicJwk);
    expect(thrown(() => checkAccessTokenBinding(credential, boundTo, proof, BOTH)).code).toBe(
      'invalid_token',
    );
  });
});

describe('token endpoint bindings (RFC 9449 §5)', () => {
  it('requireDpopForClient refuses a client registered with dpop_bound_access_tokens that sends no proof (§5.2)', () => {
    const error = thrown(() => requireDpopForClient(undefined, true));
    expect(error.code).toBe('invalid_dpop_proof');
    expect(error.status).toBe(400);
    expect(() => requireDpopForClient(undefined, false)).not.toThrow();
    expect(() => requireDpopForClient(undefined, undefined)).not.toThrow();
    expect(() => requireDpopForClient(proofOf('k'), true)).not.toThrow();
  });

  it('DPOP-02 refuses a bound refresh token presented with another key (invalid_grant) or without a proof', () => {
    expect(thrown(() => checkRefreshTokenBinding('k1', proofOf('k2'))).code).toBe('invalid_grant');
    expect(thrown(() => checkRefreshTokenBinding('k1', undefined)).code).toBe('invalid_dpop_proof');
    expect(() => checkRefreshTokenBinding('k1', proofOf('k1'))).not.toThrow();
    expect(() => checkRefreshTokenBinding(undefined, undefined)).not.toThrow();
    expect(() => checkRefreshTokenBinding(undefined, proofOf('k2'))).not.toThrow();
  });
});
