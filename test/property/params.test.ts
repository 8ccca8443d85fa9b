/**
 * Properties of the query, form and JSON parsers (RFC 6749 §3.1, §3.2; RFC 7591 §3): no input
 * makes them throw anything but an OAuthError, and well-formed input round-trips.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../src/core/errors.js';
import type { OAuthRequest } from '../../src/core/http.js';
import {
  hostileCharacter,
  Params,
  parseFormBody,
  parseJsonObject,
  parseQuery,
} from '../../src/core/params.js';

/** Runs `f`; passes when it returns, or throws an OAuthError (with `code` when given). */
function onlyOAuthErrors(f: () => unknown, code?: string): void {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(OAuthError);
    if (code !== undefined) expect((error as OAuthError).code).toBe(code);
    expect((error as OAuthError).status).toBe(400);
  }
}

/** Text with percent signs, plus signs, ampersands and equals signs in abundance. */
const nastyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({
    unit: fc.constantFrom('%', '+', '&', '=', 'a', '2', 'F', 'z', '[', ']', '\u0000', 'é', '\ud83d\ude00'),
    maxLength: 60,
  }),
);
const bytes = fc.uint8Array({ maxLength: 200 });
const contentType = fc.oneof(
  fc.constantFrom(
    'application/x-www-form-urlencoded',
    'application/x-www-form-urlencoded; charset=utf-8',
    'APPLICATION/JSON',
    'application/json',
    'application/json;charset=utf-8',
    'text/plain',
    '',
  ),
  fc.string({ maxLength: 40 }),
);
const body = fc.oneof(nastyText, bytes);

const request = (type: string | undefined, b: string | Uint8Array, url = '/x'): OAuthRequest => ({
  method: 'POST',
  url,
  headers: type === undefined ? {} : { 'content-type': type },
  body: b,
});

/**
 * Parameter names and values without lone surrogates (which no UTF-8 encoding can carry), NUL or
 * non-characters (which the parsers refuse, ABU-05).
 */
const text = fc.string({ unit: 'binary', maxLength: 30 }).filter((t) => hostileCharacter(t) === undefined);

describe('parsers never throw anything but OAuthError', () => {
  it('Params.parse and its accessors', () => {
    fc.assert(
      fc.property(nastyText, text, (raw, name) => {
        onlyOAuthErrors(() => {
          const params = Params.parse(raw);
          params.get(name);
          params.getAll(name);
          params.repeated();
          for (const [n] of params.entries()) params.get(n);
        }, 'invalid_request');
      }),
      { numRuns: 1000 },
    );
  });

  it('parseQuery on any URL', () => {
    fc.assert(
      fc.property(nastyText, (url) => {
        onlyOAuthErrors(() => parseQuery(request(undefined, '', url)), 'invalid_request');
      }),
      { numRuns: 500 },
    );
  });

  it('parseFormBody on any content type and body', () => {
    fc.assert(
      fc.property(fc.option(contentType, { nil: undefined }), body, (type, b) => {
        onlyOAuthErrors(() => parseFormBody(request(type, b)), 'invalid_request');
      }),
      { numRuns: 1000 },
    );
  });

  it('parseJsonObject on any content type and body, with the caller’s error code', () => {
    fc.assert(
      fc.property(fc.option(contentType, { nil: undefined }), fc.oneof(body, fc.json()), (type, b) => {
        onlyOAuthErrors(
          () => parseJsonObject(request(type, b), 'invalid_client_metadata'),
          'invalid_client_metadata',
        );
      }),
      { numRuns: 1000 },
    );
  });

  it('parseJsonObject returns only plain objects', () => {
    fc.assert(
      fc.property(fc.json(), (json) => {
        try {
          const value = parseJsonObject(request('application/json', json), 'invalid_client_metadata');
          expect(typeof value).toBe('object');
          expect(Array.isArray(value)).toBe(false);
          expect(value).not.toBeNull();
        } catch (error) {
          expect(error).toBeInstanceOf(OAuthError);
          const parsed: unknown = JSON.parse(json);
          expect(typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('well-formed input round-trips', () => {
  const uniqueParams = fc.uniqueArray(
    fc.tuple(
      text.filter((n) => n !== ''),
      text,
    ),
    {
      maxLength: 20,
      selector: ([name]) => name,
    },
  );

  it('form bodies encoded by URLSearchParams (spaces as +)', () => {
    fc.assert(
      fc.property(uniqueParams, (pairs) => {
        const encoded = new URLSearchParams(pairs).toString();
        const params = parseFormBody(request('application/x-www-form-urlencoded', encoded));
        for (const [name, value] of pairs) {
          expect(params.get(name)).toBe(value === '' ? undefined : value);
          expect(params.has(name)).toBe(true);
        }
        expect(params.entries()).toHaveLength(pairs.length);
      }),
      { numRuns: 500 },
    );
  });

  it('query strings encoded with encodeURIComponent, also as UTF-8 bytes', () => {
    fc.assert(
      fc.property(uniqueParams, (pairs) => {
        const encoded = pairs.map(([n, v]) => `${encodeURIComponent(n)}=${encodeURIComponent(v)}`).join('&');
        const fromQuery = parseQuery(request(undefined, '', `/authorize?${encoded}#frag`));
        const fromBytes = parseFormBody(
          request('application/x-www-form-urlencoded', new TextEncoder().encode(encoded)),
        );
        for (const [name, value] of pairs) {
          expect(fromQuery.get(name)).toBe(value === '' ? undefined : value);
          expect(fromBytes.get(name)).toBe(value === '' ? undefined : value);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('repeated parameters are refused by get and kept by getAll', () => {
    fc.assert(
      fc.property(
        text.filter((n) => n !== ''),
        fc.array(
          text.filter((v) => v !== ''),
          { minLength: 2, maxLength: 5 },
        ),
        (name, values) => {
          const params = Params.parse(
            values.map((v) => `${encodeURIComponent(name)}=${encodeURIComponent(v)}`).join('&'),
          );
          expect(() => params.get(name)).toThrow(OAuthError);
          expect(params.getAll(name)).toEqual(values);
          expect(params.repeated()).toEqual([name]);
        },
      ),
    );
  });

  it('JSON objects', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (object) => {
        const json = JSON.stringify(object);
        const parsed = parseJsonObject(
          request('application/json; charset=utf-8', json),
          'invalid_client_metadata',
        );
        expect(parsed).toEqual(JSON.parse(json));
      }),
      { numRuns: 300 },
    );
  });
});
