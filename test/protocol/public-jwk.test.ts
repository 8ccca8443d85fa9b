/**
 * Public signature keys (RFC 7517 §4, RFC 7518 §6, RFC 8037 §2): what a client key set or a DPoP
 * `jwk` header may hold (PKJ-03, DPOP-01), which key verifies which algorithm, and the RFC 7638
 * thumbprint.
 */
import { describe, expect, it } from 'vitest';
import {
  importPublicJwk,
  jwkThumbprint,
  keyVerifies,
  type PublicJwk,
  publicJwkProblem,
  SIGNATURE_ALGORITHMS,
} from '../../src/protocol/public-jwk.js';
import { KEYS } from './key-fixtures.js';

const ED = { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' } as const;
const EC = KEYS.ES256.publicJwk;
const RSA = KEYS.RS256.publicJwk;

describe('publicJwkProblem', () => {
  it.each(Object.values(KEYS).map((k) => [k.alg, k.publicJwk] as const))(
    'accepts a public %s key',
    (_alg, jwk) => {
      expect(publicJwkProblem(jwk, SIGNATURE_ALGORITHMS)).toBeUndefined();
    },
  );

  it.each(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'])(
    "refuses a key with the private member '%s' (PKJ-03; RFC 9449 §4.3 item 7)",
    (member) => {
      expect(publicJwkProblem({ ...RSA, [member]: 'AQAB' }, SIGNATURE_ALGORITHMS)).toContain(
        `private member '${member}'`,
      );
    },
  );

  it('refuses the private keys of every algorithm, as exported', () => {
    for (const key of Object.values(KEYS)) {
      expect(publicJwkProblem(key.privateJwk, SIGNATURE_ALGORITHMS)).toContain("private member 'd'");
    }
  });

  it.each([
    ['a symmetric key', { kty: 'oct', alg: 'HS256' }, 'symmetric'],
    ['an unknown kty', { kty: 'AKP', alg: 'ML-DSA-44', pub: 'AA' }, "'kty' must be"],
    ['P-521', { ...EC, crv: 'P-521' }, "'P-256' or 'P-384'"],
    ['secp256k1', { ...EC, crv: 'secp256k1' }, "'P-256' or 'P-384'"],
    ['X25519', { ...ED, crv: 'X25519' }, "'Ed25519'"],
    ['Ed448', { ...ED, crv: 'Ed448' }, "'Ed25519'"],
    ['a short EC coordinate', { ...EC, x: 'AAAA' }, "'x' must be"],
    ['a P-256 key labelled P-384', { ...EC, crv: 'P-384' }, "'x' must be"],
    ['a non-base64url coordinate', { ...ED, x: `${ED.x.slice(0, 42)}=` }, "'x' must be"],
    ['a 1024-bit RSA key', { kty: 'RSA', n: 'A'.repeat(171), e: 'AQAB' }, 'RSA key of 2048'],
    ['an RSA key without e', { kty: 'RSA', n: RSA.n }, "'e' must be"],
    ['a kid that is not a string', { ...ED, kid: 7 }, "'kid'"],
    ['an empty kid', { ...ED, kid: '' }, "'kid'"],
    ['an unknown use', { ...ED, use: 'auth' }, "'use'"],
    ['key_ops that is not a string array', { ...ED, key_ops: 'verify' }, "'key_ops'"],
    ['an HMAC alg on a signing key', { ...ED, alg: 'HS256' }, "'alg' must be one of"],
    ['alg none', { ...ED, alg: 'none' }, "'alg' must be one of"],
    ['an alg that does not fit the key', { ...EC, alg: 'RS256' }, 'does not fit'],
    ['ES384 on a P-256 key', { ...EC, alg: 'ES384' }, 'does not fit'],
    ['not an object', 'key', 'JSON object'],
    ['an array', [ED], 'JSON object'],
  ])('refuses %s', (_label, jwk, expected) => {
    expect(publicJwkProblem(jwk, SIGNATURE_ALGORITHMS)).toContain(expected);
  });

  it('refuses an alg outside the configured algorithms', () => {
    expect(publicJwkProblem({ ...EC, alg: 'ES256' }, ['EdDSA'])).toContain('must be one of EdDSA');
  });

  it('accepts an encryption key with its own alg (it is never used to verify)', () => {
    expect(
      publicJwkProblem({ ...RSA, use: 'enc', alg: 'RSA-OAEP-256' }, SIGNATURE_ALGORITHMS),
    ).toBeUndefined();
  });
});

describe('keyVerifies', () => {
  it('matches key type and curve to the algorithm (RFC 7518 §3.1)', () => {
    expect(keyVerifies(EC, 'ES256')).toBe(true);
    expect(keyVerifies(EC, 'ES384')).toBe(false);
    expect(keyVerifies(EC, 'RS256')).toBe(false);
    expect(keyVerifies(RSA, 'RS256')).toBe(true);
    expect(keyVerifies(RSA, 'PS256')).toBe(true);
    expect(keyVerifies(ED, 'EdDSA')).toBe(true);
    expect(keyVerifies(ED, 'Ed25519')).toBe(true);
    expect(keyVerifies(ED, 'ES256')).toBe(false);
  });

  it("honours the key's alg, use and key_ops (RFC 7517 §4.2-4.4)", () => {
    expect(keyVerifies({ ...RSA, alg: 'RS256' }, 'PS256')).toBe(false);
    expect(keyVerifies({ ...ED, alg: 'EdDSA' }, 'Ed25519')).toBe(true);
    expect(keyVerifies({ ...RSA, use: 'enc' }, 'RS256')).toBe(false);
    expect(keyVerifies({ ...RSA, key_ops: ['encrypt'] }, 'RS256')).toBe(false);
    expect(keyVerifies({ ...RSA, key_ops: ['verify'] }, 'RS256')).toBe(true);
  });
});

describe('importPublicJwk', () => {
  it('imports the key members only, so key_ops or use cannot break the import', async () => {
    expect(await importPublicJwk({ ...EC, key_ops: ['verify'], use: 'sig' }, 'ES256')).toBeDefined();
  });

  it('answers undefined for a point that is not on the curve', async () => {
    const offCurve: PublicJwk = { ...EC, y: EC.x! };
    expect(await importPublicJwk(offCurve, 'ES256')).toBeUndefined();
  });
});

describe('jwkThumbprint (RFC 7638)', () => {
  it('matches the RFC 7638 §3.1 example', async () => {
    const n =
      '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw';
    expect(await jwkThumbprint({ kty: 'RSA', n, e: 'AQAB', alg: 'RS256', kid: '2011-04-29' })).toBe(
      'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs',
    );
  });

  it('matches the RFC 8037 Appendix A.3 Ed25519 example, whatever optional members the key has', async () => {
    expect(await jwkThumbprint(ED)).toBe('kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k');
    expect(await jwkThumbprint({ ...ED, kid: 'x', use: 'sig' })).toBe(
      'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k',
    );
  });
});
