/**
 * Client key sets for private_key_jwt (PKJ-03): `jwks` and `jwks_uri` in registration and
 * metadata documents (RFC 7591 §2, RFC 7517 §5, CIMD §6.5): public keys only, supported types,
 * bounded, unique kids; https and no special-use literal for `jwks_uri`.
 */
import { describe, expect, it } from 'vitest';
import {
  clientJwksProblem,
  clientKeyMetadataProblem,
  jwksUriProblem,
} from '../../src/protocol/client-jwks.js';
import { parseAddressRange } from '../../src/protocol/ip-address.js';
import { KEYS } from './key-fixtures.js';

const EC = KEYS.ES256.publicJwk;
const ED = KEYS.EdDSA.publicJwk;
const RSA = KEYS.RS256.publicJwk;
const JWKS_URI = 'https://agent.example.com/.well-known/jwks.json';

describe('clientJwksProblem', () => {
  it('accepts a set of public keys of each supported type', () => {
    const result = clientJwksProblem({ keys: [EC, ED, RSA] }, 'registration');
    expect(result).toEqual({ ok: true, jwks: { keys: [EC, ED, RSA] } });
  });

  it.each([
    ['not an object', 'keys', 'JWK Set'],
    ['no keys array', { keys: EC }, 'JWK Set'],
    ['no keys', { keys: [] }, '1 to 10 keys'],
    ['11 keys', { keys: Array.from({ length: 11 }, (_, i) => ({ ...ED, kid: `k${i}` })) }, '1 to 10 keys'],
    ['a private key', { keys: [KEYS.ES256.privateJwk] }, "keys[0]: it contains the private member 'd'"],
    [
      'a repeated kid',
      {
        keys: [
          { ...EC, kid: 'a' },
          { ...ED, kid: 'a' },
        ],
      },
      "kid 'a' is used twice",
    ],
    ['only encryption keys', { keys: [{ ...RSA, use: 'enc' }] }, 'no key that can verify'],
    ['an unsupported key', { keys: [EC, { ...ED, crv: 'X25519' }] }, 'keys[1]:'],
  ])('registration refuses %s (RFC 7591 §2; PKJ-03)', (_label, jwks, expected) => {
    const result = clientJwksProblem(jwks, 'registration');
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problem).toContain(expected);
  });

  it('refuses a set larger than maxBytes', () => {
    const result = clientJwksProblem({ keys: [{ ...RSA, x5c: ['A'.repeat(20_000)] }] }, 'registration');
    expect(!result.ok && result.problem).toContain('at most 16384 bytes');
  });

  it('a published set skips keys it does not understand (RFC 7517 §5) but still refuses private keys', () => {
    const skipped = clientJwksProblem(
      { keys: [{ kty: 'AKP', alg: 'ML-DSA-44' }, { ...ED, crv: 'X25519' }, EC] },
      'published',
    );
    expect(skipped).toEqual({ ok: true, jwks: { keys: [EC] } });
    const leaked = clientJwksProblem({ keys: [EC, KEYS.EdDSA.privateJwk] }, 'published');
    expect(!leaked.ok && leaked.problem).toContain("private member 'd'");
  });

  it('honours the configured algorithms', () => {
    const result = clientJwksProblem({ keys: [RSA] }, 'registration', { algorithms: ['ES256', 'EdDSA'] });
    expect(!result.ok && result.problem).toContain('no key that can verify ES256, EdDSA');
  });
});

describe('jwksUriProblem', () => {
  it('accepts an https URL and returns its parts as a fetch target', () => {
    const result = jwksUriProblem(`${JWKS_URI}?v=2`, []);
    expect(result).toEqual({
      ok: true,
      target: {
        clientId: `${JWKS_URI}?v=2`,
        host: 'agent.example.com',
        hostKind: 'name',
        port: undefined,
        path: '/.well-known/jwks.json',
        query: 'v=2',
      },
    });
  });

  it.each([
    ['http', 'http://agent.example.com/jwks.json', 'https://'],
    ['a fragment', `${JWKS_URI}#k`, 'fragment'],
    ['user info', 'https://u:p@agent.example.com/jwks.json', 'user info'],
    ['a numeric host', 'https://2130706433/jwks.json', 'numeric host'],
    ['a loopback literal', 'https://127.0.0.1/jwks.json', 'loopback'],
    ['a cloud metadata address', 'https://169.254.169.254/latest', 'link-local'],
    ['an IPv6 loopback literal', 'https://[::1]/jwks.json', 'jwks_uri names a'],
    ['not a string', 42, 'string'],
  ])('refuses %s (CIMD §6.5)', (_label, uri, expected) => {
    const result = jwksUriProblem(uri, []);
    expect(!result.ok && result.problem).toContain(expected);
  });

  it('accepts a special-use literal inside an allowed range', () => {
    expect(jwksUriProblem('https://127.0.0.1:8443/jwks.json', [parseAddressRange('127.0.0.1')!]).ok).toBe(
      true,
    );
  });
});

describe('clientKeyMetadataProblem', () => {
  it('refuses jwks and jwks_uri together (RFC 7591 §2)', () => {
    const result = clientKeyMetadataProblem({ jwks: { keys: [EC] }, jwks_uri: JWKS_URI });
    expect(!result.ok && result.problem).toBe('jwks and jwks_uri must not both be present');
  });

  it('requires one of them for private_key_jwt (RFC 7523 §2.2)', () => {
    const result = clientKeyMetadataProblem({ token_endpoint_auth_method: 'private_key_jwt' });
    expect(!result.ok && result.problem).toBe('private_key_jwt needs jwks or jwks_uri');
  });

  it('returns the validated member', () => {
    expect(
      clientKeyMetadataProblem({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: JWKS_URI }),
    ).toEqual({
      ok: true,
      keys: { jwks_uri: JWKS_URI },
    });
    expect(clientKeyMetadataProblem({ jwks: { keys: [EC] } })).toEqual({
      ok: true,
      keys: { jwks: { keys: [EC] } },
    });
    expect(clientKeyMetadataProblem({ token_endpoint_auth_method: 'none' })).toEqual({ ok: true, keys: {} });
  });

  it('passes on the problems of its members', () => {
    expect(clientKeyMetadataProblem({ jwks_uri: 'http://x.example/j' }).ok).toBe(false);
    expect(clientKeyMetadataProblem({ jwks: { keys: [KEYS.ES256.privateJwk] } }).ok).toBe(false);
  });
});
