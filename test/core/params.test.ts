/**
 * Strict parameter and body parsing (RFC 6749 §3.1, §3.2; the parser side of ATK-30..ATK-32).
 */
import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../src/core/errors.js';
import type { OAuthRequest } from '../../src/core/http.js';
import {
  bodySize,
  bodyText,
  Params,
  parseFormBody,
  parseJsonObject,
  parseQuery,
} from '../../src/core/params.js';

/** Runs `fn` and returns the OAuthError it throws (failing when it throws nothing or something else). */
function oauthErrorOf(fn: () => unknown): OAuthError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(OAuthError);
    return error as OAuthError;
  }
  throw new Error('expected an OAuthError, nothing was thrown');
}

function request(body: OAuthRequest['body'], contentType?: string, url = '/x'): OAuthRequest {
  return {
    method: 'POST',
    url,
    headers: contentType === undefined ? {} : { 'content-type': contentType },
    body,
  };
}

describe('Params', () => {
  it('get returns the single value of a parameter', () => {
    const params = Params.parse('grant_type=authorization_code&code=abc');
    expect(params.get('grant_type')).toBe('authorization_code');
    expect(params.get('code')).toBe('abc');
    expect(params.get('missing')).toBeUndefined();
  });

  it('get refuses a parameter sent twice with invalid_request, even with equal values (RFC 6749 §3.1; ATK-32)', () => {
    for (const raw of ['code=A&code=B', 'code=A&code=A', 'code=A&code=']) {
      const error = oauthErrorOf(() => Params.parse(raw).get('code'));
      expect(error.code).toBe('invalid_request');
      expect(error.status).toBe(400);
      expect(error.description).toContain('code');
    }
  });

  it('getAll returns every non-empty value, for the parameters that may repeat (RFC 8707 §2)', () => {
    const params = Params.parse(
      'resource=https%3A%2F%2Fa.example&resource=&resource=https%3A%2F%2Fb.example',
    );
    expect(params.getAll('resource')).toEqual(['https://a.example', 'https://b.example']);
    expect(params.getAll('missing')).toEqual([]);
  });

  it('treats a parameter sent without a value as omitted (RFC 6749 §3.1)', () => {
    const params = Params.parse('scope=&state&code=x');
    expect(params.get('scope')).toBeUndefined();
    expect(params.get('state')).toBeUndefined();
    expect(params.has('scope')).toBe(true);
    expect(params.has('state')).toBe(true);
    expect(params.has('nonce')).toBe(false);
  });

  it('decodes + and %20 as a space and %2B as a plus, in names and values', () => {
    const params = Params.parse('scope=openid+profile%20email&a%2Bb=c%2Bd&with%20space=1');
    expect(params.get('scope')).toBe('openid profile email');
    expect(params.get('a+b')).toBe('c+d');
    expect(params.get('with space')).toBe('1');
  });

  it('keeps = inside a value and decodes UTF-8', () => {
    const params = Params.parse('state=a%3Db=c&name=%C3%A9t%C3%A9');
    expect(params.get('state')).toBe('a=b=c');
    expect(params.get('name')).toBe('été');
  });

  it('skips empty segments between ampersands', () => {
    const params = Params.parse('&a=1&&b=2&');
    expect(params.entries()).toEqual([
      ['a', ['1']],
      ['b', ['2']],
    ]);
  });

  it.each([
    ['an invalid escape', 'code=%zz'],
    ['a lone percent sign', 'code=%'],
    ['a truncated escape', 'code=%2'],
    ['a malformed name', 'co%de=1'],
    ['a truncated UTF-8 sequence', 'name=%E0%A4'],
    ['a byte that is never UTF-8', 'name=%FF'],
    ['an encoded UTF-16 surrogate', 'name=%ED%A0%80'],
    ['an overlong encoding of /', 'name=%C0%AF'],
  ])('refuses %s with invalid_request', (_label, raw) => {
    const error = oauthErrorOf(() => Params.parse(raw));
    expect(error.code).toBe('invalid_request');
    expect(error.status).toBe(400);
  });

  it('refuses too many parameters with invalid_request, and accepts a realistic number', () => {
    const many = Array.from({ length: 1000 }, (_, i) => `p${i}=1`).join('&');
    expect(oauthErrorOf(() => Params.parse(many)).code).toBe('invalid_request');
    const realistic = Array.from({ length: 20 }, (_, i) => `p${i}=1`).join('&');
    expect(Params.parse(realistic).get('p19')).toBe('1');
  });

  it('does not see Object.prototype members as parameters, and stores __proto__ as plain data', () => {
    const params = Params.parse('a=1');
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(params.get(name), name).toBeUndefined();
      expect(params.has(name), name).toBe(false);
      expect(params.getAll(name), name).toEqual([]);
    }
    const tricky = Params.parse('__proto__=x&constructor=y');
    expect(tricky.get('__proto__')).toBe('x');
    expect(tricky.get('constructor')).toBe('y');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('repeated lists the names sent more than once', () => {
    expect(Params.parse('a=1&b=2&a=3&c&c').repeated().sort()).toEqual(['a', 'c']);
    expect(Params.parse('a=1&b=2').repeated()).toEqual([]);
  });
});

describe('parseQuery', () => {
  it('reads the query of the request URL and ignores a fragment', () => {
    const params = parseQuery({
      method: 'GET',
      url: '/oauth/authorize?client_id=a&state=s#frag=1',
      headers: {},
    });
    expect(params.get('client_id')).toBe('a');
    expect(params.get('state')).toBe('s');
    expect(params.has('frag')).toBe(false);
  });

  it('gives no parameters without a query', () => {
    expect(parseQuery({ method: 'GET', url: '/oauth/authorize', headers: {} }).entries()).toEqual([]);
  });
});

describe('parseFormBody', () => {
  it.each([
    ['no content type', undefined],
    ['JSON', 'application/json'],
    ['text', 'text/plain'],
    ['multipart', 'multipart/form-data; boundary=x'],
  ])('refuses a body sent as %s with 400 invalid_request, never 415', (_label, type) => {
    const error = oauthErrorOf(() => parseFormBody(request('a=1', type)));
    expect(error.code).toBe('invalid_request');
    expect(error.status).toBe(400);
  });

  it('accepts the media type with parameters and in any case', () => {
    for (const type of [
      'application/x-www-form-urlencoded; charset=UTF-8',
      'Application/X-WWW-Form-Urlencoded',
    ]) {
      expect(parseFormBody(request('a=1', type)).get('a')).toBe('1');
    }
  });

  it('decodes a byte body as UTF-8 and refuses invalid UTF-8 with invalid_request', () => {
    const type = 'application/x-www-form-urlencoded';
    expect(parseFormBody(request(new TextEncoder().encode('name=%C3%A9&x=\u00e9'), type)).get('x')).toBe('é');
    const invalid = new Uint8Array([0x78, 0x3d, 0xc3, 0x28]);
    expect(oauthErrorOf(() => parseFormBody(request(invalid, type))).code).toBe('invalid_request');
  });
});

describe('bodyText and bodySize', () => {
  it('bodyText reports invalid UTF-8 with the code the caller chose', () => {
    const invalid = new Uint8Array([0x7b, 0xff, 0x7d]);
    expect(oauthErrorOf(() => bodyText(request(invalid))).code).toBe('invalid_request');
    expect(oauthErrorOf(() => bodyText(request(invalid), 'invalid_client_metadata')).code).toBe(
      'invalid_client_metadata',
    );
    expect(bodyText(request(undefined))).toBe('');
  });

  it('bodySize counts bytes, a string body as the UTF-8 it encodes', () => {
    expect(bodySize(request(undefined))).toBe(0);
    expect(bodySize(request(new Uint8Array(10)))).toBe(10);
    for (const text of ['plain ascii', 'été', '\u20ac\u20ac', 'a\u{1f600}b', '\u07ff\u0800']) {
      expect(bodySize(request(text)), text).toBe(new TextEncoder().encode(text).byteLength);
    }
  });
});

describe('parseJsonObject', () => {
  const JSON_TYPE = 'application/json';
  const parse = (body: OAuthRequest['body'], type: string | undefined) =>
    parseJsonObject(request(body, type), 'invalid_client_metadata');

  it('returns the object of a JSON body, with or without a charset parameter', () => {
    expect(parse('{"a":[1,"b"]}', JSON_TYPE)).toEqual({ a: [1, 'b'] });
    expect(parse('{"a":1}', 'application/json; charset=utf-8')).toEqual({ a: 1 });
    expect(parse(new TextEncoder().encode('{"name":"été"}'), JSON_TYPE)).toEqual({ name: 'été' });
  });

  it.each([
    ['a missing media type', '{}', undefined],
    ['a form media type', '{}', 'application/x-www-form-urlencoded'],
    ['invalid JSON', '{"a":', 'application/json'],
    ['an empty body', '', 'application/json'],
    ['an array', '[{}]', 'application/json'],
    ['null', 'null', 'application/json'],
    ['a string', '"{}"', 'application/json'],
    ['a number', '1', 'application/json'],
    ['a boolean', 'false', 'application/json'],
  ])('refuses %s with the caller’s code and 400', (_label, body, type) => {
    const error = oauthErrorOf(() => parse(body, type));
    expect(error.code).toBe('invalid_client_metadata');
    expect(error.status).toBe(400);
  });

  it('refuses a body that is not UTF-8 with the caller’s code', () => {
    expect(
      oauthErrorOf(() => parse(new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), JSON_TYPE)).code,
    ).toBe('invalid_client_metadata');
  });

  it('keeps a __proto__ member as data: the prototype and Object.prototype are untouched (ATK-30)', () => {
    const value = parse('{"__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}}}', JSON_TYPE);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect((value as { admin?: unknown }).admin).toBeUndefined();
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});
