/**
 * private_key_jwt client assertions (RFC 7523 §2.2, §3; RFC 7521 §4.2; OpenID Connect Core §9;
 * draft-ietf-oauth-rfc7523bis; PKJ-01, PKJ-02, PKJ-04): the accepted shapes, and every attack on
 * the header, the signature, the claims and the jti, each refused with invalid_client.
 */
import { describe, expect, it } from 'vitest';
import { isOAuthError, type OAuthError } from '../../src/core/errors.js';
import {
  type ClientAssertionOptions,
  JWT_BEARER_ASSERTION_TYPE,
  type PresentedClientAssertion,
  readClientAssertion,
  verifyClientAssertion,
} from '../../src/protocol/client-assertion.js';
import type { ClientKeyLookup } from '../../src/protocol/client-keys.js';
import type { PublicJwk, SignatureAlgorithm } from '../../src/protocol/public-jwk.js';
import { memoryReplayStore } from '../../src/protocol/replay-store.js';
import { hmacSigned, KEYS, sign, type TestKey, testKey, unsigned } from './key-fixtures.js';

const ISSUER = 'https://auth.example.com';
const TOKEN_ENDPOINT = `${ISSUER}/oauth/token`;
const CLIENT = 'client-1';
const NOW = 1_900_000_000;

function params(values: Record<string, string | undefined>) {
  return { get: (name: string) => values[name] };
}

function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: CLIENT,
    sub: CLIENT,
    aud: ISSUER,
    iat: NOW,
    exp: NOW + 60,
    jti: crypto.randomUUID(),
    ...overrides,
  };
}

function staticKeys(...keys: PublicJwk[]): ClientKeyLookup & { calls: boolean[] } {
  const calls: boolean[] = [];
  const lookup = async (refresh: boolean) => {
    calls.push(refresh);
    return keys;
  };
  return Object.assign(lookup, { calls });
}

function options(overrides: Partial<ClientAssertionOptions> = {}): ClientAssertionOptions {
  return {
    issuer: ISSUER,
    endpointAudiences: [TOKEN_ENDPOINT],
    replayStore: memoryReplayStore(),
    clock: () => NOW * 1000,
    ...overrides,
  };
}

function present(assertion: string, clientId = CLIENT): PresentedClientAssertion {
  return { clientId, assertion };
}

async function failure(promise: Promise<unknown>): Promise<OAuthError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isOAuthError(error)) throw new Error(`expected an OAuthError, got ${String(error)}`);
  return error;
}

async function verify(
  assertion: string,
  keys: ClientKeyLookup = staticKeys(KEYS.ES256.publicJwk),
  opts: Partial<ClientAssertionOptions> = {},
) {
  return verifyClientAssertion(present(assertion), keys, options(opts));
}

describe('readClientAssertion (RFC 7523 §2.2)', () => {
  it('reads the claimed client from the assertion, with or without client_id', async () => {
    const assertion = await sign(KEYS.ES256, claims());
    const body = { client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: assertion };
    expect(readClientAssertion(params(body), false)).toEqual({ clientId: CLIENT, assertion });
    expect(readClientAssertion(params({ ...body, client_id: CLIENT }), false)).toEqual({
      clientId: CLIENT,
      assertion,
    });
  });

  it('answers undefined when the client uses another method', () => {
    expect(readClientAssertion(params({ client_id: CLIENT, client_secret: 's' }), false)).toBeUndefined();
  });

  it.each([
    ['a client_secret', { client_secret: 's' }, false],
    ['Basic credentials', {}, true],
  ])(
    'PKJ-04 refuses an assertion sent with %s: invalid_request (RFC 6749 §2.3)',
    async (_label, extra, basic) => {
      const assertion = await sign(KEYS.ES256, claims());
      const body = {
        client_assertion_type: JWT_BEARER_ASSERTION_TYPE,
        client_assertion: assertion,
        ...extra,
      };
      expect(() => readClientAssertion(params(body), basic)).toThrow(
        expect.objectContaining({ code: 'invalid_request' }),
      );
    },
  );

  it.each([
    ['no assertion', { client_assertion_type: JWT_BEARER_ASSERTION_TYPE }, 'invalid_request'],
    ['no type', { client_assertion: 'a.b.c' }, 'invalid_request'],
    [
      'another type',
      {
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer',
        client_assertion: 'a.b.c',
      },
      'invalid_client',
    ],
  ])('refuses %s', (_label, body, code) => {
    expect(() => readClientAssertion(params(body), false)).toThrow(expect.objectContaining({ code }));
  });

  it.each([
    [
      'an oversized assertion',
      () => `${'a'.repeat(8000)}.${'b'.repeat(100)}.${'c'.repeat(100)}`,
      'longer than 8192',
    ],
    ['two parts', () => 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJjIn0', 'compact JWS'],
    ['an encrypted JWT (five parts)', () => 'a.b.c.d.e', 'compact JWS'],
    ['alg none without signature', () => unsigned(claims()), 'compact JWS'],
    [
      'a payload that is not JSON',
      () => 'eyJhbGciOiJFUzI1NiJ9.bm90IGpzb24.c2ln',
      'payload is not a JSON object',
    ],
    ['no sub', () => unsigned(claims({ sub: undefined }), { alg: 'ES256' }, 'c2ln'), 'client_id as sub'],
    [
      'iss different from sub',
      () => unsigned(claims({ iss: 'other' }), { alg: 'ES256' }, 'c2ln'),
      'iss equal to sub',
    ],
  ])('refuses %s with invalid_client', (_label, make, expected) => {
    const body = { client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: make() };
    expect(() => readClientAssertion(params(body), false)).toThrow(
      expect.objectContaining({ code: 'invalid_client', description: expect.stringContaining(expected) }),
    );
  });

  it('refuses a client_id parameter that differs from sub (RFC 7523 §3)', async () => {
    const body = {
      client_assertion_type: JWT_BEARER_ASSERTION_TYPE,
      client_assertion: await sign(KEYS.ES256, claims()),
      client_id: 'client-2',
    };
    expect(() => readClientAssertion(params(body), false)).toThrow(
      expect.objectContaining({ code: 'invalid_client' }),
    );
  });
});

describe('verifyClientAssertion: accepted assertions (PKJ-01)', () => {
  it.each(Object.keys(KEYS) as SignatureAlgorithm[])('verifies %s', async (alg) => {
    const key: TestKey = KEYS[alg];
    const jti = crypto.randomUUID();
    const verified = await verify(
      await sign(key, claims({ jti }), { kid: key.publicJwk.kid }),
      staticKeys(key.publicJwk),
    );
    expect(verified).toEqual({ clientId: CLIENT, jti, expiresAt: NOW + 60, alg, kid: key.publicJwk.kid });
  });

  it.each([
    ['the issuer', ISSUER],
    ['the token endpoint URL (OIDC Core §9)', TOKEN_ENDPOINT],
    ['an array containing the issuer', ['https://other.example', ISSUER]],
  ])('accepts an untyped assertion whose aud is %s', async (_label, aud) => {
    await expect(verify(await sign(KEYS.ES256, claims({ aud })))).resolves.toMatchObject({
      clientId: CLIENT,
    });
  });

  it.each(['client-authentication+jwt', 'application/client-authentication+jwt', 'JWT', 'jwt'])(
    'accepts typ %s',
    async (typ) => {
      await expect(verify(await sign(KEYS.ES256, claims(), { typ }))).resolves.toMatchObject({
        clientId: CLIENT,
      });
    },
  );

  it('finds the key without a kid among keys of the right type', async () => {
    const keys = staticKeys(KEYS.RS256.publicJwk, KEYS.EdDSA.publicJwk, KEYS.ES256.publicJwk);
    await expect(verify(await sign(KEYS.ES256, claims()), keys)).resolves.toMatchObject({ kid: 'es256-1' });
  });

  it('accepts an assertion without iat whose exp is near, and one expired within the clock tolerance', async () => {
    await expect(
      verify(await sign(KEYS.ES256, claims({ iat: undefined, exp: NOW + 300 }))),
    ).resolves.toBeDefined();
    await expect(
      verify(await sign(KEYS.ES256, claims({ iat: NOW - 60, exp: NOW - 29 }))),
    ).resolves.toBeDefined();
  });

  it('works after the client rotated its keys: one refetch finds the new key (PKJ-03)', async () => {
    const rotated = await testKey('ES256', 'es256-2');
    const calls: boolean[] = [];
    const keys: ClientKeyLookup = async (refresh) => {
      calls.push(refresh);
      return refresh ? [rotated.publicJwk] : [KEYS.ES256.publicJwk];
    };
    await expect(verify(await sign(rotated, claims(), { kid: 'es256-2' }), keys)).resolves.toMatchObject({
      kid: 'es256-2',
    });
    expect(calls).toEqual([false, true]);
  });
});

describe('verifyClientAssertion: attacks (PKJ-01, PKJ-02)', () => {
  it('refuses alg none with a made-up signature', async () => {
    const error = await failure(verify(unsigned(claims(), { alg: 'none' }, 'c2ln')));
    expect(error.code).toBe('invalid_client');
    expect(error.description).toContain('alg must be one of');
  });

  it('refuses HS256 signed with the public key as the HMAC secret (key confusion)', async () => {
    const secret = new TextEncoder().encode(JSON.stringify(KEYS.ES256.publicJwk));
    const error = await failure(verify(await hmacSigned(secret, claims())));
    expect(error.code).toBe('invalid_client');
    expect(error.description).toContain('alg must be one of');
  });

  it('refuses an alg the server does not advertise', async () => {
    const error = await failure(
      verify(await sign(KEYS.RS256, claims()), staticKeys(KEYS.RS256.publicJwk), { algorithms: ['ES256'] }),
    );
    expect(error.description).toBe('the client_assertion alg must be one of ES256');
  });

  it("refuses a signature by a key that is not the client's, also under the client's kid, without naming the keys", async () => {
    const attacker = await testKey('ES256');
    for (const header of [{ kid: 'es256-1' }, {}, { kid: 'made-up' }]) {
      const error = await failure(verify(await sign(attacker, claims(), header)));
      expect(error.code).toBe('invalid_client');
      expect(error.description).toBe(
        "the client_assertion signature does not verify with the client's registered keys",
      );
    }
  });

  it('asks for a refetch once when no key verifies, then gives up', async () => {
    const keys = staticKeys(KEYS.ES256.publicJwk);
    await failure(verify(await sign(await testKey('ES256'), claims(), { kid: 'new' }), keys));
    expect(keys.calls).toEqual([false, true]);
  });

  it('refuses when the client has no keys', async () => {
    expect((await failure(verify(await sign(KEYS.ES256, claims()), staticKeys()))).code).toBe(
      'invalid_client',
    );
  });

  it('never uses an encryption key or a key for another algorithm', async () => {
    const enc = { ...KEYS.ES256.publicJwk, use: 'enc' };
    await failure(verify(await sign(KEYS.ES256, claims()), staticKeys(enc)));
    const psKeyForRs256Only = { ...KEYS.PS256.publicJwk, alg: 'RS256' };
    await failure(verify(await sign(KEYS.PS256, claims()), staticKeys(psKeyForRs256Only)));
  });

  it('tries at most three keys when the assertion names no kid', async () => {
    const others = await Promise.all([1, 2, 3].map(() => testKey('ES256')));
    const keys = staticKeys(...others.map((k) => k.publicJwk), KEYS.ES256.publicJwk);
    const error = await failure(verify(await sign(KEYS.ES256, claims()), keys));
    expect(error.code).toBe('invalid_client');
  });

  it.each([
    ['dpop+jwt', 'typ must be absent'],
    ['at+jwt', 'typ must be absent'],
  ])('refuses typ %s: another kind of JWT (RFC 8725 §3.11)', async (typ, expected) => {
    expect((await failure(verify(await sign(KEYS.ES256, claims(), { typ })))).description).toContain(
      expected,
    );
  });

  it('refuses a crit header', async () => {
    const error = await failure(verify(await sign(KEYS.ES256, claims(), { crit: ['b64'], b64: true })));
    expect(error.description).toContain('crit');
  });

  it('refuses a signed payload whose iss and sub are another client than the one presented', async () => {
    const assertion = await sign(KEYS.ES256, claims());
    const error = await failure(
      verifyClientAssertion(present(assertion, 'client-2'), staticKeys(KEYS.ES256.publicJwk), options()),
    );
    expect(error.description).toBe('the client_assertion must have the client_id as iss and sub');
  });

  it.each([
    ['missing', undefined, 'must have an aud'],
    ['another server', 'https://other.example', 'must contain'],
    ['the issuer with a trailing slash', `${ISSUER}/`, 'must contain'],
    ['a number', 42, 'must have an aud'],
    ['an empty array', [], 'must have an aud'],
    ['eleven entries', Array.from({ length: 11 }, () => ISSUER), 'at most 10'],
  ])('refuses an aud that is %s (RFC 7523 §3 item 3)', async (_label, aud, expected) => {
    expect((await failure(verify(await sign(KEYS.ES256, claims({ aud }))))).description).toContain(expected);
  });

  it('refuses the token endpoint as aud when endpoint audiences are off (audience injection, rfc7523bis)', async () => {
    const error = await failure(
      verify(await sign(KEYS.ES256, claims({ aud: TOKEN_ENDPOINT })), undefined, { endpointAudiences: [] }),
    );
    expect(error.description).toContain("must contain this server's issuer identifier");
  });

  it.each([
    ['the token endpoint', TOKEN_ENDPOINT],
    ['the issuer among others', [ISSUER, TOKEN_ENDPOINT]],
  ])('refuses a client-authentication+jwt assertion whose aud is %s (rfc7523bis)', async (_label, aud) => {
    const error = await failure(
      verify(await sign(KEYS.ES256, claims({ aud }), { typ: 'client-authentication+jwt' })),
    );
    expect(error.description).toContain('as its only aud');
  });

  it.each([
    ['no exp', { exp: undefined }, 'must have an exp'],
    ['a string exp', { exp: String(NOW + 60) }, 'must have an exp'],
    ['an expired assertion', { iat: NOW - 100, exp: NOW - 31 }, 'has expired'],
    ['an exp too far ahead without iat', { iat: undefined, exp: NOW + 331 }, 'expire within 300 seconds'],
    ['a lifetime over 5 minutes', { iat: NOW - 100, exp: NOW + 201 }, 'at most 300 seconds'],
    ['an iat in the future', { iat: NOW + 31, exp: NOW + 90 }, 'iat is in the future'],
    ['a string iat', { iat: 'now' }, 'iat must be a NumericDate'],
    ['an nbf in the future', { nbf: NOW + 31 }, 'not valid yet'],
    ['no jti', { jti: undefined }, 'must have a jti'],
    ['an empty jti', { jti: '' }, 'must have a jti'],
    ['a jti over 256 characters', { jti: 'j'.repeat(257) }, 'must have a jti'],
  ])('refuses %s (RFC 7523 §3)', async (_label, overrides, expected) => {
    const error = await failure(verify(await sign(KEYS.ES256, claims(overrides))));
    expect(error.code).toBe('invalid_client');
    expect(error.description).toContain(expected);
  });

  it('PKJ-02 refuses a replayed assertion, and its jti is not recorded before the assertion is valid', async () => {
    const replayStore = memoryReplayStore();
    const jti = 'once';
    await failure(
      verify(await sign(KEYS.ES256, claims({ jti, aud: 'https://other.example' })), undefined, {
        replayStore,
      }),
    );
    const assertion = await sign(KEYS.ES256, claims({ jti }));
    await expect(verify(assertion, undefined, { replayStore })).resolves.toMatchObject({ jti });
    const error = await failure(verify(assertion, undefined, { replayStore }));
    expect(error.description).toContain('already used');
    // Another assertion with the same jti is a replay too.
    await failure(
      verify(await sign(KEYS.ES256, claims({ jti, exp: NOW + 120 })), undefined, { replayStore }),
    );
  });

  it('PKJ-02 lets one of 20 concurrent uses of one assertion win, across instances sharing the store', async () => {
    const replayStore = memoryReplayStore();
    const assertion = await sign(KEYS.ES256, claims());
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => verify(assertion, undefined, { replayStore })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it('keeps jtis apart per client: two clients may use the same jti', async () => {
    const replayStore = memoryReplayStore();
    await verify(await sign(KEYS.ES256, claims({ jti: 'same' })), undefined, { replayStore });
    const other = claims({ jti: 'same', iss: 'client-2', sub: 'client-2' });
    await expect(
      verifyClientAssertion(
        present(await sign(KEYS.ES256, other), 'client-2'),
        staticKeys(KEYS.ES256.publicJwk),
        options({ replayStore }),
      ),
    ).resolves.toMatchObject({ clientId: 'client-2' });
  });

  it('remembers the jti until the assertion expires, plus the clock tolerance', async () => {
    const seen: number[] = [];
    const replayStore = {
      async checkAndStore(_key: string, expiresAt: number) {
        seen.push(expiresAt);
        return true;
      },
    };
    await verify(await sign(KEYS.ES256, claims({ exp: NOW + 60 })), undefined, { replayStore });
    expect(seen).toEqual([NOW + 90]);
  });
});
