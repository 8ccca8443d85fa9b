/**
 * DPoP proofs (RFC 9449 §4.3; DPOP-01): every check of a proof, the errors at the authorization
 * server (400, §5) and at a resource (401 with a `DPoP` challenge, §7.1), server nonces (§8, §9),
 * and the attacks: a replayed proof, a proof for another URL or method, a proof signed by another
 * key than its `jwk`, a private key in the header.
 */
import { describe, expect, it } from 'vitest';
import { isOAuthError, type OAuthError } from '../../src/core/errors.js';
import {
  accessTokenHash,
  type DpopProofOptions,
  type DpopRequest,
  dpopChallenge,
  normalizeHtu,
  readDpopHeader,
  verifyDpopProof,
} from '../../src/protocol/dpop.js';
import { createDpopNonceSource } from '../../src/protocol/dpop-nonce.js';
import { jwkThumbprint, type SignatureAlgorithm } from '../../src/protocol/public-jwk.js';
import { memoryReplayStore } from '../../src/protocol/replay-store.js';
import { hmacSigned, KEYS, sign, type TestKey, testKey, unsigned } from './key-fixtures.js';

const TOKEN_URL = 'https://auth.example.com/oauth/token';
const NOW = 1_900_000_000;
const ES = KEYS.ES256;

function proofClaims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { jti: crypto.randomUUID(), htm: 'POST', htu: TOKEN_URL, iat: NOW, ...overrides };
}

function makeProof(
  key: TestKey = ES,
  overrides: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  return sign(key, proofClaims(overrides), { typ: 'dpop+jwt', jwk: key.publicJwk, ...header });
}

function options(overrides: Partial<DpopProofOptions> = {}): DpopProofOptions {
  return {
    at: 'authorization_server',
    replayStore: memoryReplayStore(),
    clock: () => NOW * 1000,
    ...overrides,
  };
}

function request(dpop: DpopRequest['dpop'], overrides: Partial<DpopRequest> = {}): DpopRequest {
  return { dpop, method: 'POST', url: TOKEN_URL, ...overrides };
}

async function failure(promise: Promise<unknown>): Promise<OAuthError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isOAuthError(error)) throw new Error(`expected an OAuthError, got ${String(error)}`);
  return error;
}

async function refused(
  dpop: DpopRequest['dpop'],
  overrides: Partial<DpopRequest> = {},
  opts: Partial<DpopProofOptions> = {},
) {
  const error = await failure(verifyDpopProof(request(dpop, overrides), options(opts)));
  expect(error.code).toBe('invalid_dpop_proof');
  expect(error.status).toBe(400);
  return error.description;
}

describe('verifyDpopProof: accepted proofs (RFC 9449 §4.3)', () => {
  it.each(Object.keys(KEYS) as SignatureAlgorithm[])(
    'verifies a %s proof and returns its key thumbprint',
    async (alg) => {
      const key = KEYS[alg];
      const jti = crypto.randomUUID();
      const proof = await verifyDpopProof(request(await makeProof(key, { jti })), options());
      expect(proof).toEqual({
        jkt: await jwkThumbprint(key.publicJwk),
        jwk: key.publicJwk,
        alg,
        jti,
        issuedAt: NOW,
      });
    },
  );

  it.each([
    ['upper-case scheme and host', 'HTTPS://AUTH.EXAMPLE.COM/oauth/token'],
    ['the default port', 'https://auth.example.com:443/oauth/token'],
    ['a percent-encoded unreserved character', 'https://auth.example.com/oauth/%74oken'],
    ['a dot segment', 'https://auth.example.com/oauth/x/../token'],
    ['a query and a fragment', `${TOKEN_URL}?a=1#f`],
  ])('matches an htu written with %s (RFC 3986 §6.2.2, §6.2.3)', async (_label, htu) => {
    await expect(verifyDpopProof(request(await makeProof(ES, { htu })), options())).resolves.toBeDefined();
  });

  it('ignores the query of the request URL (RFC 9449 §4.3 item 9)', async () => {
    const proof = await makeProof(ES, { htm: 'GET', htu: 'https://api.example.com/items' });
    await expect(
      verifyDpopProof(
        request(proof, { method: 'GET', url: 'https://api.example.com/items?page=2' }),
        options(),
      ),
    ).resolves.toBeDefined();
  });

  it('accepts iat up to 60 seconds either side of now', async () => {
    for (const iat of [NOW - 60, NOW + 60]) {
      await expect(verifyDpopProof(request(await makeProof(ES, { iat })), options())).resolves.toBeDefined();
    }
  });

  it('checks ath when the proof comes with an access token', async () => {
    const accessToken = 'an-access-token';
    const proof = await makeProof(ES, { ath: await accessTokenHash(accessToken) });
    await expect(verifyDpopProof(request(proof, { accessToken }), options())).resolves.toBeDefined();
  });

  it('accepts the header as one string or as a one-entry list, surrounding spaces ignored', async () => {
    await expect(verifyDpopProof(request(` ${await makeProof()} `), options())).resolves.toBeDefined();
    await expect(verifyDpopProof(request([await makeProof()]), options())).resolves.toBeDefined();
  });
});

describe('verifyDpopProof: refused proofs (DPOP-01)', () => {
  it.each([
    ['no DPoP header', undefined, 'is required'],
    ['an empty list', [], 'is required'],
    ['an empty header', '  ', 'empty'],
    ['an oversized proof', `${'a'.repeat(8200)}.${'b'.repeat(100)}.c`, 'longer than 8192'],
    ['a JWT without signature', unsigned(proofClaims(), { alg: 'none', typ: 'dpop+jwt' }), 'compact JWS'],
    ['an unparsable header', 'bm90IGpzb24.e30.c2ln', 'header is not a JSON object'],
  ])('refuses %s', async (_label, dpop, expected) => {
    expect(await refused(dpop)).toContain(expected);
  });

  it('refuses two DPoP headers, as a list or joined with a comma (§4.3 item 1)', async () => {
    const [a, b] = [await makeProof(), await makeProof()];
    expect(await refused([a, b])).toBe('send exactly one DPoP header');
    expect(await refused(`${a}, ${b}`)).toBe('send exactly one DPoP header');
  });

  it.each([
    ['absent', undefined],
    ['JWT', 'JWT'],
    ['client-authentication+jwt', 'client-authentication+jwt'],
  ])('refuses typ %s (§4.3 item 4)', async (_label, typ) => {
    expect(await refused(await makeProof(ES, {}, { typ }))).toBe('the DPoP proof typ must be dpop+jwt');
  });

  it('refuses alg none with a made-up signature', async () => {
    const dpop = unsigned(proofClaims(), { alg: 'none', typ: 'dpop+jwt', jwk: ES.publicJwk }, 'c2ln');
    expect(await refused(dpop)).toContain('alg must be one of');
  });

  it('refuses HS256 keyed with the public key (key confusion)', async () => {
    const secret = new TextEncoder().encode(JSON.stringify(ES.publicJwk));
    const dpop = await hmacSigned(secret, proofClaims(), { typ: 'dpop+jwt', jwk: ES.publicJwk });
    expect(await refused(dpop)).toContain('alg must be one of');
  });

  it('refuses an alg the server does not advertise', async () => {
    expect(await refused(await makeProof(KEYS.RS256), {}, { algorithms: ['ES256', 'EdDSA'] })).toBe(
      'the DPoP proof alg must be one of ES256, EdDSA',
    );
  });

  it('refuses a proof whose jwk header carries the private key (§4.3 item 7)', async () => {
    const dpop = await makeProof(ES, {}, { jwk: ES.privateJwk });
    expect(await refused(dpop)).toContain("private member 'd'");
  });

  it.each([
    ['no jwk', { jwk: undefined }, 'not a usable public key'],
    ['a symmetric jwk', { jwk: { kty: 'oct', k: 'c2VjcmV0' } }, "private member 'k'"],
    ['a jwk of another type than alg', { jwk: KEYS.EdDSA.publicJwk }, 'does not fit its alg ES256'],
    ['a jwk that is not an object', { jwk: 'key' }, 'not a usable public key'],
    ['a crit header', { crit: ['b64'], b64: true }, 'crit'],
  ])('refuses %s', async (_label, header, expected) => {
    expect(await refused(await makeProof(ES, {}, header))).toContain(expected);
  });

  it('refuses a proof signed by another key than its jwk (§4.3 item 6)', async () => {
    const attacker = await testKey('ES256');
    const dpop = await makeProof(attacker, {}, { jwk: ES.publicJwk });
    expect(await refused(dpop)).toBe('the DPoP proof signature does not verify with its jwk');
  });

  it.each([
    ['no jti', { jti: undefined }, 'must have a jti'],
    ['a jti over 256 characters', { jti: 'j'.repeat(257) }, 'must have a jti'],
    ['no htm', { htm: undefined }, 'must have htm'],
    ['no htu', { htu: undefined }, 'must have htu'],
    ['no iat', { iat: undefined }, 'must have iat'],
    ['a string iat', { iat: String(NOW) }, 'must have iat'],
  ])('refuses %s (§4.2)', async (_label, claims, expected) => {
    expect(await refused(await makeProof(ES, claims))).toContain(expected);
  });

  it.each([
    ['GET', 'GET'],
    ['a lower-case method', 'post'],
  ])('refuses a proof made for %s at a POST endpoint (§4.3 item 8)', async (_label, htm) => {
    expect(await refused(await makeProof(ES, { htm }))).toBe(
      'the DPoP proof htm must be POST, the method of this request',
    );
  });

  it.each([
    ['another path', 'https://auth.example.com/oauth/revoke'],
    ['another host', 'https://evil.example/oauth/token'],
    ['http instead of https', 'http://auth.example.com/oauth/token'],
    ['another port', 'https://auth.example.com:8443/oauth/token'],
    ['a trailing slash', `${TOKEN_URL}/`],
    ['user info', 'https://user@auth.example.com/oauth/token'],
    ['another scheme', 'wss://auth.example.com/oauth/token'],
    ['a relative URL', '/oauth/token'],
  ])('refuses a proof made for %s (§4.3 item 9)', async (_label, htu) => {
    expect(await refused(await makeProof(ES, { htu }))).toBe(`the DPoP proof htu must be ${TOKEN_URL}`);
  });

  it.each([
    ['61 seconds old', NOW - 61],
    ['61 seconds ahead', NOW + 61],
  ])('refuses a proof whose iat is %s (§4.3 item 11)', async (_label, iat) => {
    expect(await refused(await makeProof(ES, { iat }))).toContain('within 60 seconds');
  });

  it('refuses a proof without ath, or with the ath of another token, when an access token is presented (§4.3 item 12)', async () => {
    const accessToken = 'the-presented-token';
    expect(await refused(await makeProof(), { accessToken })).toContain('must have ath');
    const other = await makeProof(ES, { ath: await accessTokenHash('another-token') });
    expect(await refused(other, { accessToken })).toBe('the DPoP proof ath does not match the access token');
  });

  it('DPOP-01 refuses a replayed proof, also from another instance sharing the store (§11.1)', async () => {
    const replayStore = memoryReplayStore();
    const dpop = await makeProof();
    await verifyDpopProof(request(dpop), options({ replayStore }));
    expect(await refused(dpop, {}, { replayStore })).toContain('already used');
  });

  it('DPOP-01 lets one of 20 concurrent uses of one proof win', async () => {
    const replayStore = memoryReplayStore();
    const dpop = await makeProof();
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => verifyDpopProof(request(dpop), options({ replayStore }))),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it('keys the replay store by key and jti, until the proof could no longer be accepted', async () => {
    const seen: Array<[string, number]> = [];
    const replayStore = {
      async checkAndStore(key: string, expiresAt: number) {
        seen.push([key, expiresAt]);
        return true;
      },
    };
    await verifyDpopProof(
      request(await makeProof(ES, { jti: 'same', iat: NOW - 10 })),
      options({ replayStore }),
    );
    await verifyDpopProof(request(await makeProof(KEYS.EdDSA, { jti: 'same' })), options({ replayStore }));
    expect(seen[0]![1]).toBe(NOW - 10 + 61);
    expect(seen[0]![0]).not.toBe(seen[1]![0]);
  });

  it('records nothing for a proof that fails a check', async () => {
    const replayStore = memoryReplayStore();
    const jti = 'kept';
    await refused(await makeProof(ES, { jti, htm: 'GET' }), {}, { replayStore });
    await expect(
      verifyDpopProof(request(await makeProof(ES, { jti })), options({ replayStore })),
    ).resolves.toBeDefined();
  });
});

describe('verifyDpopProof at a resource (RFC 9449 §7.1)', () => {
  it('answers 401 with a DPoP challenge naming the algorithms, the error and the extra parameters', async () => {
    const error = await failure(
      verifyDpopProof(
        request(await makeProof(ES, { htm: 'GET' })),
        options({
          at: 'resource',
          algorithms: ['ES256', 'EdDSA'],
          challenge: { resource_metadata: 'https://api.example.com/.well-known/oauth-protected-resource' },
          otherChallenges: [
            'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource"',
          ],
        }),
      ),
    );
    expect(error.status).toBe(401);
    expect(error.code).toBe('invalid_dpop_proof');
    expect(error.headers['www-authenticate']).toBe(
      'DPoP algs="ES256 EdDSA", resource_metadata="https://api.example.com/.well-known/oauth-protected-resource", ' +
        'error="invalid_dpop_proof", error_description="the DPoP proof htm must be POST, the method of this request", ' +
        'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource"',
    );
  });

  it('answers a missing proof with 401 and a challenge too', async () => {
    const error = await failure(verifyDpopProof(request(undefined), options({ at: 'resource' })));
    expect(error.status).toBe(401);
    expect(error.headers['www-authenticate']).toContain('error="invalid_dpop_proof"');
  });
});

describe('server nonces (RFC 9449 §8, §9)', () => {
  function nonceSetup() {
    let clockMs = NOW * 1000;
    const clock = () => clockMs;
    const nonces = createDpopNonceSource({ secret: 'a shared secret of at least 32 bytes!!', clock });
    return { nonces, clock, advance: (seconds: number) => (clockMs += seconds * 1000) };
  }

  it('asks for a nonce with use_dpop_nonce and a DPoP-Nonce header, then accepts the proof carrying it', async () => {
    const { nonces } = nonceSetup();
    const error = await failure(verifyDpopProof(request(await makeProof()), options({ nonces })));
    expect(error.code).toBe('use_dpop_nonce');
    expect(error.status).toBe(400);
    const nonce = error.headers['dpop-nonce'];
    expect(nonce).toBe(await nonces.current());
    await expect(
      verifyDpopProof(request(await makeProof(ES, { nonce })), options({ nonces })),
    ).resolves.toBeDefined();
  });

  it('refuses a forged nonce with use_dpop_nonce', async () => {
    const { nonces } = nonceSetup();
    const forged = `${(await nonces.current()).split('.')[0]}.${'A'.repeat(43)}`;
    const error = await failure(
      verifyDpopProof(request(await makeProof(ES, { nonce: forged })), options({ nonces })),
    );
    expect(error.code).toBe('use_dpop_nonce');
  });

  it('refuses an expired nonce with use_dpop_nonce and sends the current one', async () => {
    const { nonces, clock, advance } = nonceSetup();
    const old = await nonces.current();
    advance(600);
    const proof = await makeProof(ES, { nonce: old, iat: NOW + 600 });
    const error = await failure(verifyDpopProof(request(proof), options({ nonces, clock })));
    expect(error.code).toBe('use_dpop_nonce');
    expect(error.headers['dpop-nonce']).toBe(await nonces.current());
    expect(error.headers['dpop-nonce']).not.toBe(old);
  });

  it('answers use_dpop_nonce at a resource with 401, a DPoP challenge and the DPoP-Nonce header (§9)', async () => {
    const { nonces } = nonceSetup();
    const error = await failure(
      verifyDpopProof(request(await makeProof()), options({ at: 'resource', nonces })),
    );
    expect(error.status).toBe(401);
    expect(error.headers['www-authenticate']).toContain('error="use_dpop_nonce"');
    expect(error.headers['dpop-nonce']).toBe(await nonces.current());
  });
});

describe('helpers', () => {
  it('accessTokenHash matches the RFC 9449 §7.1 example', async () => {
    expect(await accessTokenHash('Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU')).toBe(
      'fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo',
    );
  });

  it('readDpopHeader answers undefined for no header and refuses two', () => {
    expect(readDpopHeader(undefined)).toBeUndefined();
    expect(() => readDpopHeader(['a.b.c', 'd.e.f'])).toThrow(
      expect.objectContaining({ code: 'invalid_dpop_proof' }),
    );
  });

  it('normalizeHtu drops query, fragment and default port, and keeps distinct resources distinct', () => {
    expect(normalizeHtu('HTTPS://API.Example.com:443/a/./b%7e?q=1#f')).toBe('https://api.example.com/a/b~');
    expect(normalizeHtu('http://api.example.com:80/')).toBe('http://api.example.com/');
    expect(normalizeHtu('https://api.example.com')).toBe('https://api.example.com/');
    expect(normalizeHtu('https://api.example.com/a%2fb')).toBe('https://api.example.com/a%2Fb');
    expect(normalizeHtu('https://api.example.com/a%2fb')).not.toBe(
      normalizeHtu('https://api.example.com/a/b'),
    );
    expect(normalizeHtu('ftp://api.example.com/')).toBeUndefined();
    expect(normalizeHtu('not a url')).toBeUndefined();
  });

  it('dpopChallenge writes algs first and each parameter once, quoted', () => {
    expect(
      dpopChallenge(['ES256'], { error: 'invalid_token', error_description: 'say "no"', algs: 'RS256' }),
    ).toBe('DPoP algs="ES256", error="invalid_token", error_description="say no"');
  });
});
