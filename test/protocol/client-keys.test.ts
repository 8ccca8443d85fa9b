/**
 * Client keys for private_key_jwt (PKJ-03): resolution of `jwks_uri` through the SSRF-safe
 * fetcher with a bounded cache, one rate-limited refetch when no key verifies, and errors that
 * reveal no network detail (ABU-04).
 */
import { describe, expect, it } from 'vitest';
import type { MetadataFetcher, MetadataFetchRequest, MetadataFetchResponse } from '../../src/cimd/fetcher.js';
import type { LogFields } from '../../src/core/context.js';
import { isOAuthError } from '../../src/core/errors.js';
import { createClientKeyResolver } from '../../src/protocol/client-keys.js';
import { KEYS } from './key-fixtures.js';

const EC = KEYS.ES256.publicJwk;
const ED = KEYS.EdDSA.publicJwk;
const RSA = KEYS.RS256.publicJwk;
const JWKS_URI = 'https://agent.example.com/.well-known/jwks.json';

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
