/**
 * Properties of private_key_jwt (RFC 7523 §3; RFC 7517 §5; RFC 7591 §2): no request parameters,
 * assertion, key or key set makes the checks throw anything but an OAuthError (or answer anything
 * but a verdict), and the memory replay store behaves like its one-line model.
 */
import fc from 'fast-check';
import { base64url } from 'jose';
import { describe, expect, it } from 'vitest';
import { isOAuthError } from '../../src/core/errors.js';
import {
  JWT_BEARER_ASSERTION_TYPE,
  readClientAssertion,
  verifyClientAssertion,
} from '../../src/protocol/client-assertion.js';
import {
  clientJwksProblem,
  clientKeyMetadataProblem,
  jwksUriProblem,
} from '../../src/protocol/client-jwks.js';
import { publicJwkProblem, SIGNATURE_ALGORITHMS } from '../../src/protocol/public-jwk.js';
import { memoryReplayStore } from '../../src/protocol/replay-store.js';
import { KEYS } from '../protocol/key-fixtures.js';

const b64part = fc
  .jsonValue({ maxDepth: 2 })
  .map((value) => base64url.encode(JSON.stringify(value) ?? 'null'));
const claimsPart = fc
  .record(
    {
      iss: fc.constantFrom('c', 'd'),
      sub: fc.constantFrom('c', 'd'),
      aud: fc.jsonValue(),
      exp: fc.jsonValue(),
      jti: fc.jsonValue(),
    },
    { requiredKeys: [] },
  )
  .map((claims) => base64url.encode(JSON.stringify(claims)));
const headerPart = fc
  .record(
    {
      alg: fc.constantFrom('ES256', 'none', 'HS256', 'RS256', 42),
      kid: fc.jsonValue(),
      typ: fc.jsonValue(),
      crit: fc.jsonValue(),
    },
    { requiredKeys: [] },
  )
  .map((header) => base64url.encode(JSON.stringify(header)));
const assertion = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc
    .tuple(
      fc.oneof(headerPart, b64part),
      fc.oneof(claimsPart, b64part),
      fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/),
    )
    .map((p) => p.join('.')),
);

describe('client assertions never fail with anything but an OAuthError', () => {
  it('readClientAssertion and verifyClientAssertion, for any parameters', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.option(fc.constantFrom(JWT_BEARER_ASSERTION_TYPE, 'other', ''), { nil: undefined }),
        fc.option(assertion, { nil: undefined }),
        fc.option(fc.constantFrom('c', 'd'), { nil: undefined }),
        async (type, value, clientId) => {
          const values: Record<string, string | undefined> = {
            client_assertion_type: type,
            client_assertion: value,
            client_id: clientId,
          };
          try {
            const presented = readClientAssertion({ get: (name) => values[name] }, false);
            if (presented === undefined) return;
            await verifyClientAssertion(presented, async () => [KEYS.ES256.publicJwk], {
              issuer: 'https://as.example',
              replayStore: memoryReplayStore(),
            });
            throw new Error('a made-up assertion was accepted');
          } catch (error) {
            expect(isOAuthError(error)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('key set validation answers a verdict for any JSON', () => {
  const jwkLike = fc.record(
    {
      kty: fc.constantFrom('EC', 'RSA', 'OKP', 'oct', 'AKP', 7),
      crv: fc.constantFrom('P-256', 'P-384', 'Ed25519', 'X25519', 'P-521'),
      x: fc.oneof(fc.string(), fc.constant(KEYS.ES256.publicJwk.x)),
      y: fc.oneof(fc.string(), fc.constant(KEYS.ES256.publicJwk.y)),
      n: fc.string(),
      e: fc.string(),
      alg: fc.jsonValue(),
      kid: fc.jsonValue(),
      use: fc.jsonValue(),
      key_ops: fc.jsonValue(),
      d: fc.string(),
    },
    { requiredKeys: [] },
  );

  it('publicJwkProblem, clientJwksProblem, clientKeyMetadataProblem and jwksUriProblem never throw', () => {
    fc.assert(
      fc.property(
        fc.oneof(jwkLike, fc.jsonValue()),
        fc.array(fc.oneof(jwkLike, fc.jsonValue()), { maxLength: 12 }),
        fc.jsonValue(),
        (jwk, keys, uri) => {
          const problem = publicJwkProblem(jwk, SIGNATURE_ALGORITHMS);
          expect(problem === undefined || typeof problem === 'string').toBe(true);
          for (const mode of ['registration', 'published'] as const) {
            const result = clientJwksProblem({ keys }, mode);
            if (result.ok)
              expect(
                result.jwks.keys.every((k) => publicJwkProblem(k, SIGNATURE_ALGORITHMS) === undefined),
              ).toBe(true);
          }
          expect(
            typeof clientKeyMetadataProblem({ jwks: { keys }, token_endpoint_auth_method: 'private_key_jwt' })
              .ok,
          ).toBe('boolean');
          expect(typeof jwksUriProblem(uri, []).ok).toBe('boolean');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a key set that passes holds no private member', () => {
    fc.assert(
      fc.property(fc.array(jwkLike, { minLength: 1, maxLength: 10 }), (keys) => {
        const result = clientJwksProblem({ keys }, 'published');
        if (result.ok) expect(result.jwks.keys.some((k) => 'd' in k)).toBe(false);
      }),
    );
  });
});

describe('memoryReplayStore (RFC 9449 §11.1)', () => {
  it('answers like its model: a key is new unless recorded with an expiry after now', async () => {
    const op = fc.record({
      key: fc.constantFrom('a', 'b', 'c'),
      ttl: fc.integer({ min: 1, max: 30 }),
      step: fc.integer({ min: 0, max: 10 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        const store = memoryReplayStore();
        const model = new Map<string, number>();
        let now = 1000;
        for (const { key, ttl, step } of ops) {
          now += step;
          const expected = !((model.get(key) ?? 0) > now);
          if (expected) model.set(key, now + ttl);
          expect(await store.checkAndStore(key, now + ttl, now)).toBe(expected);
        }
      }),
    );
  });
});
