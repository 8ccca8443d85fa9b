/**
 * Properties of the `Authorization` header parsers: `readBearer` (RFC 6750 §2.1) and the Basic
 * client credentials of `presentedCredentials` (RFC 6749 §2.3.1). Whatever the header, they throw
 * nothing but an `OAuthError` with the documented codes, and well-formed credentials round-trip.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../src/core/errors.js';
import type { OAuthRequest } from '../../src/core/http.js';
import { Params } from '../../src/core/params.js';
import { readBearer } from '../../src/protocol/bearer.js';
import { presentedCredentials } from '../../src/protocol/client-auth.js';
import type { ServerContext } from '../../src/server-context.js';

const B64TOKEN_CHARS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/'];
const b64token = fc
  .tuple(
    fc.string({ unit: fc.constantFrom(...B64TOKEN_CHARS), minLength: 1, maxLength: 300 }),
    fc.nat({ max: 2 }),
  )
  .map(([body, pad]) => body + '='.repeat(pad));
const scheme = fc.constantFrom('Bearer', 'bearer', 'BEARER', 'BeArEr');
const nastyHeader = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 400 }),
  fc
    .tuple(
      fc.constantFrom('Bearer', 'Basic', 'bearer', 'Digest', ''),
      fc.string({ unit: 'binary', maxLength: 200 }),
    )
    .map(([s, v]) => `${s} ${v}`),
  fc.tuple(scheme, b64token, b64token).map(([s, a, b]) => `${s} ${a}, ${s} ${b}`),
  fc
    .tuple(fc.constantFrom('Basic', 'Digest', 'Token', 'DPoP', 'Bearerx', 'MAC'), b64token)
    .map(([s, t]) => `${s} ${t}`),
  fc.constantFrom(
    'Bearer',
    'Bearer ',
    'Bearer  ',
    ' Bearer x',
    'Bearer x y',
    'Bearer\tx',
    'Bearer =x',
    'Bearer x===',
  ),
);

function isAcceptedBearer(header: string): boolean {
  return /^\s*bearer +[A-Za-z0-9\-._~+/]+=*\s*$/i.test(header) && !header.includes(',');
}

describe('readBearer', () => {
  it('throws only invalid_request or invalid_token, and returns only b64token values', () => {
    fc.assert(
      fc.property(
        nastyHeader,
        fc.option(fc.string({ maxLength: 50 }), { nil: undefined }),
        (header, bodyToken) => {
          let result: ReturnType<typeof readBearer>;
          try {
            result = readBearer({ authorization: header }, bodyToken);
          } catch (error) {
            expect(error).toBeInstanceOf(OAuthError);
            expect(['invalid_request', 'invalid_token']).toContain((error as OAuthError).code);
            return;
          }
          expect(result.present).toBe(true);
          if (result.present) expect(result.token).toMatch(/^[A-Za-z0-9\-._~+/]+=*$/);
          // Accepting means: one Bearer credential, no body token beside it.
          expect(bodyToken).toBeUndefined();
          expect(isAcceptedBearer(header)).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('round-trips a well-formed token under any casing of the scheme', () => {
    fc.assert(
      fc.property(scheme, b64token, (s, token) => {
        const result = readBearer({ authorization: `${s} ${token}` });
        expect(result).toEqual({ present: true, token, from: 'header' });
      }),
      { numRuns: 500 },
    );
  });

  it('reads no token when there is no header and no body token', () => {
    expect(readBearer({})).toEqual({ present: false });
  });

  it('separates scheme and token by spaces only (RFC 6750 §2.1): a tab before the token is malformed', () => {
    // Found by the property above (seed -1483569876): the tab was trimmed away and "-" accepted.
    for (const header of ['Bearer \t-', 'Bearer \tabc', 'Bearer  \u00a0abc']) {
      expect(() => readBearer({ authorization: header }), header).toThrow(
        expect.objectContaining({ code: 'invalid_token' }),
      );
    }
    expect(readBearer({ authorization: 'Bearer   abc' })).toEqual({
      present: true,
      token: 'abc',
      from: 'header',
    });
  });
});

const ctx = { config: { clientSecretBasic: true, issuer: 'https://as.example' } } as unknown as ServerContext;

function requestWith(authorization: string): OAuthRequest {
  return { method: 'POST', url: '/api/oauth/token', headers: { authorization } };
}

function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}

describe('Basic client credentials (RFC 6749 §2.3.1)', () => {
  it('throws only invalid_client or invalid_request, whatever the header', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          nastyHeader,
          fc
            .string({ unit: 'binary', maxLength: 200 })
            .map((raw) => `Basic ${Buffer.from(raw, 'latin1').toString('base64')}`),
          fc.string({ maxLength: 100 }).map((s) => `Basic ${s}`),
        ),
        (header) => {
          try {
            const presented = presentedCredentials(ctx, requestWith(header), Params.parse(''));
            expect(presented.method).toBe('client_secret_basic');
          } catch (error) {
            expect(error).toBeInstanceOf(OAuthError);
            const e = error as OAuthError;
            expect(['invalid_client', 'invalid_request']).toContain(e.code);
            if (e.code === 'invalid_client') {
              expect(e.status).toBe(401);
              expect(e.headers['www-authenticate']).toMatch(/^Basic realm=/);
            }
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('round-trips any id and secret that were form-urlencoded before base64', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 60 }), fc.string({ maxLength: 60 }), (id, secret) => {
        const encoded = Buffer.from(`${formEncode(id)}:${formEncode(secret)}`, 'utf8').toString('base64');
        const presented = presentedCredentials(ctx, requestWith(`Basic ${encoded}`), Params.parse(''));
        expect(presented).toEqual({ clientId: id, secret, method: 'client_secret_basic' });
      }),
      { numRuns: 500 },
    );
  });

  it('refuses Basic together with a body secret, and a body client_id that differs', () => {
    const encoded = Buffer.from('a:b').toString('base64');
    expect(() =>
      presentedCredentials(ctx, requestWith(`Basic ${encoded}`), Params.parse('client_secret=x')),
    ).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() =>
      presentedCredentials(ctx, requestWith(`Basic ${encoded}`), Params.parse('client_id=other')),
    ).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});
