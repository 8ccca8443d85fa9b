/**
 * Properties of DPoP proof checking (RFC 9449 §4.3; RFC 3986 §6.2.2, §6.2.3): no header value
 * makes it throw anything but an OAuthError, htu normalisation is idempotent and ignores only what
 * the RFCs say it may, a proof is accepted only for its own method and URL, and no string passes
 * as a server nonce.
 */
import fc from 'fast-check';
import { base64url } from 'jose';
import { describe, expect, it } from 'vitest';
import { isOAuthError } from '../../src/core/errors.js';
import { normalizeHtu, verifyDpopProof } from '../../src/protocol/dpop.js';
import { createDpopNonceSource } from '../../src/protocol/dpop-nonce.js';
import { memoryReplayStore } from '../../src/protocol/replay-store.js';
import { KEYS, sign } from '../protocol/key-fixtures.js';

const NOW = 1_900_000_000;
const options = () => ({
  at: 'authorization_server' as const,
  replayStore: memoryReplayStore(),
  clock: () => NOW * 1000,
});

const segment = fc.stringMatching(/^[a-z0-9_~-]{1,12}$/);
const host = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}\.(?:example|test)$/);
const url = fc
  .record({ host, path: fc.array(segment, { maxLength: 4 }) })
  .map(({ host, path }) => `https://${host}/${path.join('/')}`);
const b64part = fc
  .jsonValue({ maxDepth: 2 })
  .map((value) => base64url.encode(JSON.stringify(value) ?? 'null'));

describe('verifyDpopProof never fails with anything but an OAuthError', () => {
  it('for any header value', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.tuple(b64part, b64part, fc.stringMatching(/^[A-Za-z0-9_-]{0,40}$/)).map((p) => p.join('.')),
        ),
        async (dpop) => {
          const error = await verifyDpopProof(
            { dpop, method: 'POST', url: 'https://as.example/token' },
            options(),
          ).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(isOAuthError(error)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('normalizeHtu (RFC 3986 §6.2.2, §6.2.3)', () => {
  it('is idempotent', () => {
    fc.assert(
      fc.property(url, fc.webUrl(), (a, b) => {
        for (const u of [a, b]) {
          const once = normalizeHtu(u);
          if (once !== undefined) expect(normalizeHtu(once)).toBe(once);
        }
      }),
    );
  });

  it('ignores scheme and host case, the default port, the query and the fragment', () => {
    fc.assert(
      fc.property(url, fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 }), (u, query, fragment) => {
        const shouted = u.replace(/^https:\/\/([^/]+)/, (_m, h: string) => `HTTPS://${h.toUpperCase()}:443`);
        const decorated = `${shouted}?${encodeURIComponent(query)}#${encodeURIComponent(fragment)}`;
        expect(normalizeHtu(decorated)).toBe(normalizeHtu(u));
      }),
    );
  });

  it('keeps different paths and hosts apart', () => {
    fc.assert(
      fc.property(url, url, (a, b) => {
        fc.pre(a !== b);
        expect(normalizeHtu(a)).not.toBe(normalizeHtu(b));
      }),
    );
  });
});

describe('a proof is accepted only for its own method and URL (RFC 9449 §4.3 items 8, 9)', () => {
  it('for any two requests', async () => {
    const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE');
    await fc.assert(
      fc.asyncProperty(method, url, method, url, async (htm, htu, m, u) => {
        const proof = await sign(
          KEYS.ES256,
          { jti: crypto.randomUUID(), htm, htu, iat: NOW },
          { typ: 'dpop+jwt', jwk: KEYS.ES256.publicJwk },
        );
        const accepted = await verifyDpopProof({ dpop: proof, method: m, url: u }, options()).then(
          () => true,
          () => false,
        );
        expect(accepted).toBe(htm === m && htu === u);
      }),
      { numRuns: 60 },
    );
  });
});

describe('server nonces (RFC 9449 §8)', () => {
  it('no string passes as a nonce but the one issued', async () => {
    const nonces = createDpopNonceSource({
      secret: 'a shared secret of at least 32 bytes!!',
      clock: () => NOW * 1000,
    });
    const issued = await nonces.current();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ maxLength: 80 }), fc.stringMatching(/^[0-9a-z]{1,8}\.[A-Za-z0-9_-]{43}$/)),
        async (nonce) => {
          expect(await nonces.check(nonce)).toBe(nonce === issued);
        },
      ),
      { numRuns: 300 },
    );
  });
});
