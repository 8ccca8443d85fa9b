/**
 * Client key sets for private_key_jwt (PKJ-03): `jwks` and `jwks_uri` in registration and
 * metadata documents (RFC 7591 §2, RFC 7517 §5), and resolution of `jwks_uri` through the
 * SSRF-safe fetcher with a bounded cache, one rate-limited refetch when no key verifies, and
 * errors that reveal no network detail (ABU-04).
 */
import { describe, expect, it } from 'vitest';
import type { MetadataFetcher, MetadataFetchRequest, MetadataFetchResponse } from '../../src/cimd/fetcher.js';
import type { LogFields } from '../../src/core/context.js';
import { isOAuthError } from '../../src/core/errors.js';
import {
  clientJwksProblem,
  clientKeyMetadataProblem,
  createClientKeyResolver,
  jwksUriProblem,
} from '../../src/protocol/client-keys.js';
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

/** A scripted fetcher that records its requests. */
function scriptedFetcher(responses: Array<Partial<MetadataFetchResponse> | Error>) {
  const requests: MetadataFetchRequest[] = [];
  const fetcher: MetadataFetcher = async (request) => {
    requests.push(request);
    const next = responses.length > 1 ? responses.shift()! : responses[0]!;
    if (next instanceof Error) throw next;
    return {
      status: 200,
      contentType: 'application/jwk-set+json',
      cacheControl: undefined,
      body: new Uint8Array(),
      ...next,
    };
  };
  return { fetcher, requests };
}

function served(keys: readonly unknown[], cacheControl?: string): Partial<MetadataFetchResponse> {
  return { body: new TextEncoder().encode(JSON.stringify({ keys })), cacheControl };
}

function setup(responses: Array<Partial<MetadataFetchResponse> | Error>) {
  let now = Date.parse('2030-01-01T00:00:00Z');
  const logs: LogFields[] = [];
  const { fetcher, requests } = scriptedFetcher(responses);
  const resolver = createClientKeyResolver({
    fetcher,
    clock: () => now,
    logger: { debug() {}, info: (_m, fields) => logs.push(fields ?? {}), warn() {}, error() {} },
  });
  const lookup = resolver.lookup({ clientId: 'agent', jwksUri: JWKS_URI });
  return { lookup, requests, logs, advance: (seconds: number) => (now += seconds * 1000), resolver };
}

describe('createClientKeyResolver', () => {
  it('returns registered jwks without fetching', async () => {
    const { resolver, requests } = setup([served([EC])]);
    expect(await resolver.lookup({ clientId: 'c', jwks: { keys: [ED] } })(true)).toEqual([ED]);
    expect(requests).toHaveLength(0);
  });

  it('fetches jwks_uri through the fetcher with the size and time budget, and caches it', async () => {
    const { lookup, requests } = setup([served([EC, ED])]);
    expect(await lookup(false)).toEqual([EC, ED]);
    expect(await lookup(false)).toEqual([EC, ED]);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ maxBytes: 16384, timeoutMs: 5000 });
    expect(requests[0]!.target).toMatchObject({ host: 'agent.example.com', path: '/.well-known/jwks.json' });
  });

  it('makes one fetch for concurrent lookups of one client', async () => {
    const { lookup, requests } = setup([served([EC])]);
    await Promise.all(Array.from({ length: 10 }, () => lookup(false)));
    expect(requests).toHaveLength(1);
  });

  it('keeps a set for its max-age within bounds, and at least the minimum for no-store', async () => {
    const { lookup, requests, advance } = setup([
      served([EC], 'max-age=120'),
      served([ED], 'no-store'),
      served([RSA]),
    ]);
    await lookup(false);
    advance(119);
    expect(await lookup(false)).toEqual([EC]);
    advance(2);
    expect(await lookup(false)).toEqual([ED]);
    advance(59);
    expect(await lookup(false)).toEqual([ED]);
    advance(2);
    expect(await lookup(false)).toEqual([RSA]);
    expect(requests).toHaveLength(3);
  });

  it('refetches when no key verified, at most once per interval per client (PKJ-03)', async () => {
    const { lookup, requests, advance } = setup([served([EC]), served([ED]), served([RSA])]);
    expect(await lookup(false)).toEqual([EC]);
    advance(59);
    expect(await lookup(true)).toEqual([EC]);
    expect(requests).toHaveLength(1);
    advance(1);
    expect(await lookup(true)).toEqual([ED]);
    expect(await lookup(true)).toEqual([ED]);
    expect(requests).toHaveLength(2);
  });

  it('keys the cache by client and URL: a changed jwks_uri is fetched at once', async () => {
    const { resolver, requests } = setup([served([EC]), served([ED])]);
    await resolver.lookup({ clientId: 'agent', jwksUri: JWKS_URI })(false);
    expect(await resolver.lookup({ clientId: 'agent', jwksUri: `${JWKS_URI}?v=2` })(false)).toEqual([ED]);
    expect(requests).toHaveLength(2);
  });

  it.each([
    ['a 404', { status: 404 }, 'HTTP status 404'],
    ['a redirect', { status: 302 }, 'HTTP status 302'],
    ['HTML', { ...served([EC]), contentType: 'text/html' }, 'not served as JSON'],
    ['no content type', { ...served([EC]), contentType: undefined }, 'not served as JSON'],
    ['a body over the cap', { body: new Uint8Array(16_385) }, 'larger than 16384 bytes'],
    ['invalid JSON', { body: new TextEncoder().encode('{"keys": [') }, 'not valid UTF-8 JSON'],
    ['a private key', served([KEYS.ES256.privateJwk]), "private member 'd'"],
    ['a symmetric key', served([{ kty: 'oct', k: 'c2VjcmV0' }]), "private member 'k'"],
    ['no usable key', served([{ ...RSA, use: 'enc' }]), 'no key that can verify'],
    ['a network failure', new Error('connect ECONNREFUSED 10.0.0.7:443'), 'the fetch failed'],
  ])('refuses %s with invalid_client and no network detail (ABU-04)', async (_label, response, reason) => {
    const { lookup, logs } = setup([response]);
    const error = await lookup(false).catch((e: unknown) => e);
    expect(isOAuthError(error) && error.code).toBe('invalid_client');
    expect(isOAuthError(error) && error.description).toBe(
      "the client's jwks_uri could not be fetched or did not hold a usable key set",
    );
    expect(logs).toEqual([{ clientId: 'agent', reason: expect.stringContaining(reason) }]);
  });

  it('remembers a failure for one interval, so a broken URL is not fetched per request', async () => {
    const { lookup, requests, advance } = setup([{ status: 500 }, served([EC])]);
    await expect(lookup(false)).rejects.toMatchObject({ code: 'invalid_client' });
    advance(59);
    await expect(lookup(true)).rejects.toMatchObject({ code: 'invalid_client' });
    expect(requests).toHaveLength(1);
    advance(1);
    expect(await lookup(false)).toEqual([EC]);
  });

  it('keeps the cached set when a refetch fails', async () => {
    const { lookup, requests, advance } = setup([served([EC]), { status: 503 }, served([ED])]);
    await lookup(false);
    advance(60);
    expect(await lookup(true)).toEqual([EC]);
    advance(30);
    expect(await lookup(true)).toEqual([EC]);
    expect(requests).toHaveLength(2);
  });

  it('refuses a special-use IP literal without fetching', async () => {
    const { resolver, requests } = setup([served([EC])]);
    const lookup = resolver.lookup({ clientId: 'agent', jwksUri: 'https://10.0.0.7/jwks.json' });
    await expect(lookup(false)).rejects.toMatchObject({ code: 'invalid_client' });
    expect(requests).toHaveLength(0);
  });
});
