/**
 * ABU-05: hostile bytes are refused at the edge. NUL, unpaired surrogates and non-characters in any
 * parameter, header credential or JSON string give 400 (`invalid_request`, or
 * `invalid_client_metadata` at registration) at parse time; display names lose control, bidi and
 * zero-width characters; and no generated input makes any endpoint answer 5xx (memory storage; the
 * fuzz test over every backend reuses the generators of test/helpers/hostile.ts).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuthError } from '../../src/core/errors.js';
import type { OAuthRequest } from '../../src/core/http.js';
import { hostileCharacter, Params, parseFormBody, parseJsonObject } from '../../src/core/params.js';
import { normalizeDisplayName } from '../../src/protocol/client-metadata.js';
import { CB, Harness, json } from '../helpers/harness.js';
import {
  anyString,
  encodedHostile,
  HOSTILE_CHARACTERS,
  hostileCodePoint,
  hostileForm,
  hostileJsonValue,
  hostileString,
  INVISIBLE_CHARACTERS,
  invalidUtf8,
  nastyString,
} from '../helpers/hostile.js';
import type { TestRequest, TestResponse } from '../helpers/transports.js';

const FORM = 'application/x-www-form-urlencoded';
const RUNS = 150;

function post(type: string, body: string | Uint8Array): OAuthRequest {
  return { method: 'POST', url: '/x', headers: { 'content-type': type }, body };
}

function thrown(f: () => unknown): OAuthError {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(OAuthError);
    return error as OAuthError;
  }
  throw new Error('expected an OAuthError');
}

/** Code points of `text` that are NUL or a non-character (a reference for `hostileCharacter`). */
function isHostileCodePoint(cp: number): boolean {
  return (
    cp === 0 || (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) === 0xfffe || (cp >= 0xd800 && cp <= 0xdfff)
  );
}

describe('ABU-05 the parsers refuse hostile characters', () => {
  it('hostileCharacter finds exactly NUL, unpaired surrogates and non-characters', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.option(hostileCodePoint),
        (text, extra) => {
          const s = extra === null ? text : `${text}${extra}`;
          const expected = [...s].some((c) => isHostileCodePoint(c.codePointAt(0)!));
          expect(hostileCharacter(s) !== undefined).toBe(expected);
        },
      ),
      { numRuns: 1000 },
    );
    for (const c of HOSTILE_CHARACTERS) expect(hostileCharacter(`ok${c}`)).toMatch(/^U\+[0-9A-F]{4,6}$/);
    // A paired surrogate (an emoji) is an ordinary character.
    expect(hostileCharacter('\ud83d\ude00')).toBeUndefined();
  });

  it('a query or form parameter with a hostile character, raw or percent-encoded, is 400 invalid_request', () => {
    fc.assert(
      fc.property(hostileForm(['state', 'client_id', 'scope', 'x']), ({ body }) => {
        const error = thrown(() => Params.parse(body));
        expect(error.code).toBe('invalid_request');
        expect(error.status).toBe(400);
        expect(error.description).toMatch(/contains U\+|not UTF-8/);
      }),
      { numRuns: 1000 },
    );
  });

  it('names the parameter and the character', () => {
    const error = thrown(() => Params.parse('client_id=abc%00def'));
    expect(error.description).toBe(
      "the 'client_id' parameter contains U+0000, which is not accepted (NUL, unpaired surrogates and Unicode non-characters never are)",
    );
    expect(thrown(() => Params.parse('state=\ud800')).description).toContain('U+D800');
    expect(thrown(() => Params.parse('%EF%BF%BE=1')).description).toContain(
      'a parameter name contains U+FFFE',
    );
  });

  it('a form body that is not UTF-8 is 400 invalid_request', () => {
    fc.assert(
      fc.property(invalidUtf8, (bytes) => {
        expect(thrown(() => parseFormBody(post(FORM, bytes))).code).toBe('invalid_request');
      }),
      { numRuns: 300 },
    );
  });

  it('a JSON body with a hostile string anywhere (value, element, member name) is refused with the caller’s code', () => {
    fc.assert(
      fc.property(hostileJsonValue, (value) => {
        const body = JSON.stringify({ redirect_uris: [CB], nested: value });
        const error = thrown(() =>
          parseJsonObject(post('application/json', body), 'invalid_client_metadata'),
        );
        expect(error.code).toBe('invalid_client_metadata');
        expect(error.status).toBe(400);
      }),
      { numRuns: 500 },
    );
    const error = thrown(() =>
      parseJsonObject(post('application/json', '{"client_name":"a\\u0000b"}'), 'invalid_client_metadata'),
    );
    expect(error.description).toContain("the member 'client_name' contains U+0000");
  });

  it('a hostile character is refused however the JSON text spells it: raw, escaped, or an escaped surrogate half', () => {
    // The text is only walked when it has an escape or a code unit from U+D800 up; each spelling
    // must still reach the walk, in a value and in a member name.
    const spellings: [string, string][] = [
      ['\ufdd0', 'U+FDD0'],
      ['\\ufdd0', 'U+FDD0'],
      ['\\u0000', 'U+0000'],
      ['\\ud800', 'U+D800'],
      ['\ud800', 'U+D800'],
      ['\\uDFFF', 'U+DFFF'],
    ];
    for (const [spelled, named] of spellings) {
      for (const body of [`{"client_name":"a${spelled}b"}`, `{"a${spelled}":1}`]) {
        const error = thrown(() =>
          parseJsonObject(post('application/json', body), 'invalid_client_metadata'),
        );
        expect(error.code, body).toBe('invalid_client_metadata');
        expect(error.description, body).toContain(`contains ${named},`);
      }
    }
  });

  it('JSON text with harmless escapes, accents and an emoji (a surrogate pair) is accepted as parsed', () => {
    const body = '{"client_name":"caf\\u00e9 \\"q\\" \\n \u00e9 \ud83d\ude00","x":["\\/"]}';
    expect(parseJsonObject(post('application/json', body), 'invalid_client_metadata')).toEqual({
      client_name: 'caf\u00e9 "q" \n \u00e9 \ud83d\ude00',
      x: ['/'],
    });
  });

  it('10 000-deep nesting is walked without exhausting the stack', () => {
    const deep = `{"a":${'['.repeat(10_000)}"\\u0000"${']'.repeat(10_000)}}`;
    expect(
      thrown(() => parseJsonObject(post('application/json', deep), 'invalid_client_metadata')).code,
    ).toBe('invalid_client_metadata');
  });
});

describe('ABU-05 display names', () => {
  it('normalizeDisplayName treats printable ASCII exactly as the general rule does (its fast path)', () => {
    // The general rule, written out: NFC, invisible runs dropped (line breaks as a space), blanks folded, trimmed.
    const general = (text: string) =>
      text
        .normalize('NFC')
        .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, (run) =>
          /[\t\n\v\f\r\u0085\u2028\u2029]/.test(run) ? ' ' : '',
        )
        .replace(/\p{Zs}+/gu, ' ')
        .trim();
    const ascii = fc.string({
      unit: fc.constantFrom(' ', ' ', 'a', 'Z', '0', '~', '!', '-', '.'),
      maxLength: 30,
    });
    fc.assert(
      fc.property(fc.oneof(ascii, fc.string({ unit: 'grapheme-ascii', maxLength: 30 })), (text) => {
        expect(normalizeDisplayName(text)).toBe(general(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('normalizeDisplayName leaves no control, format or separator character, is NFC, trimmed and idempotent', () => {
    fc.assert(
      fc.property(nastyString, (text) => {
        const name = normalizeDisplayName(text);
        expect(name).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
        for (const c of INVISIBLE_CHARACTERS) expect(name).not.toContain(c);
        expect(name).toBe(name.normalize('NFC'));
        expect(name).toBe(name.trim());
        expect(normalizeDisplayName(name)).toBe(name);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('ABU-05 every endpoint answers hostile input with 4xx, never 5xx (memory storage)', () => {
  let h: Harness;
  let confidential: { client_id: string; client_secret?: string };
  beforeAll(async () => {
    h = await Harness.start();
    confidential = await h.register({ token_endpoint_auth_method: 'client_secret_post' });
  });
  afterAll(() => h.close());

  const FORM_HEADERS = { 'content-type': FORM };

  async function send(request: TestRequest): Promise<TestResponse> {
    const response = await h.send(request);
    expect(response.status, `${request.method} ${request.url}: ${response.body.slice(0, 200)}`).toBeLessThan(
      500,
    );
    return response;
  }

  it.each([
    [
      'token',
      '/api/oauth/token',
      [
        'grant_type',
        'code',
        'client_id',
        'client_secret',
        'code_verifier',
        'redirect_uri',
        'refresh_token',
        'resource',
        'scope',
      ],
    ],
    ['revoke', '/api/oauth/revoke', ['token', 'token_type_hint', 'client_id', 'client_secret']],
    ['introspect', '/api/oauth/introspect', ['token', 'token_type_hint', 'client_id', 'client_secret']],
    ['userinfo', '/api/oauth/userinfo', ['access_token']],
    ['consent decision', '/oauth/authorize/decision', ['request_id', 'csrf_token', 'decision']],
  ] as const)('%s: a hostile form parameter is 400 invalid_request', async (_name, url, names) => {
    const base = {
      grant_type: 'authorization_code',
      code: 'c'.repeat(43),
      client_id: confidential.client_id,
      client_secret: confidential.client_secret ?? '',
      code_verifier: 'v'.repeat(43),
      redirect_uri: CB,
      token: 't'.repeat(43),
      request_id: 'r'.repeat(43),
      csrf_token: 'x'.repeat(43),
      decision: 'allow',
    };
    await fc.assert(
      fc.asyncProperty(hostileForm(names, base), async ({ body }) => {
        const response = await send({
          method: 'POST',
          url,
          headers: { ...FORM_HEADERS, origin: 'http://127.0.0.1:4000' },
          body,
        });
        expect(response.status).toBe(400);
        if (url.startsWith('/api/')) expect(json(response).error).toBe('invalid_request');
        expect(response.headers.location).toBeUndefined();
      }),
      { numRuns: RUNS },
    );
  });

  it('authorize: a hostile query parameter is a 400 page, never a redirect', async () => {
    const names = [
      'client_id',
      'redirect_uri',
      'response_type',
      'state',
      'scope',
      'code_challenge',
      'nonce',
      'login_hint',
      'resource',
    ];
    const base = {
      response_type: 'code',
      client_id: confidential.client_id,
      redirect_uri: CB,
      scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    };
    await fc.assert(
      fc.asyncProperty(hostileForm(names, base), async ({ body }) => {
        const response = await send({
          method: 'GET',
          url: `/oauth/authorize?${body}`,
          headers: { cookie: h.login('ada') },
        });
        expect(response.status).toBe(400);
        expect(response.headers['content-type']).toContain('text/html');
        expect(response.headers.location).toBeUndefined();
      }),
      { numRuns: RUNS },
    );
  });

  it('register: a hostile string anywhere in the metadata is 400 invalid_client_metadata', async () => {
    const members = ['client_name', 'software_id', 'software_version', 'scope', 'client_uri', 'logo_uri'];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...members, 'contacts', 'redirect_uris', 'member name'),
        hostileString,
        async (member, bad) => {
          const metadata: Record<string, unknown> = { redirect_uris: [CB], client_name: 'App' };
          if (member === 'contacts' || member === 'redirect_uris') metadata[member] = [bad];
          else if (member === 'member name') metadata[bad] = 'x';
          else metadata[member] = bad;
          const response = await send({
            method: 'POST',
            url: '/api/oauth/register',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(metadata),
          });
          expect(response.status).toBe(400);
          expect(json(response).error).toBe('invalid_client_metadata');
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('register: legal but nasty metadata registers with a clean client_name, or is refused with 400', async () => {
    await fc.assert(
      fc.asyncProperty(
        nastyString,
        fc.array(nastyString, { maxLength: 3 }),
        nastyString,
        async (name, contacts, softwareId) => {
          const response = await send({
            method: 'POST',
            url: '/api/oauth/register',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              redirect_uris: [CB],
              client_name: name,
              contacts,
              software_id: softwareId,
            }),
          });
          if (response.status === 201) {
            const registered = json(response).client_name;
            expect(registered).toBe(normalizeDisplayName(name));
            expect(registered).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
          } else {
            expect(response.status).toBe(400);
            expect(json(response).error).toBe('invalid_client_metadata');
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('header credentials: a hostile Basic client_id or secret is 400, a hostile Bearer token 401', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          hostileString.map((s) => s.replace(/[%+:]/g, '_')),
          encodedHostile,
        ),
        fc.boolean(),
        async (bad, inId) => {
          // Basic credentials are form-encoded before base64 (RFC 6749 §2.3.1); bytes go through latin1.
          const pair = inId ? `${bad}:secret` : `${confidential.client_id}:${bad}`;
          const bytes = [...new TextEncoder().encode(pair)].map((b) => String.fromCharCode(b)).join('');
          const token = await send({
            method: 'POST',
            url: '/api/oauth/token',
            headers: { ...FORM_HEADERS, authorization: `Basic ${btoa(bytes)}` },
            body: 'grant_type=refresh_token&refresh_token=x',
          });
          expect([400, 401]).toContain(token.status);
          const userinfo = await send({
            method: 'GET',
            url: '/api/oauth/userinfo',
            headers: { authorization: `Bearer ${bad}` },
          });
          expect([400, 401]).toContain(userinfo.status);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('any string in any parameter of any endpoint: never 5xx', async () => {
    const endpoints = [
      ['POST', '/api/oauth/token'],
      ['POST', '/api/oauth/revoke'],
      ['POST', '/api/oauth/introspect'],
      ['POST', '/api/oauth/userinfo'],
      ['POST', '/oauth/authorize/decision'],
      ['GET', '/oauth/authorize'],
      ['POST', '/oauth/authorize'],
    ] as const;
    const names = [
      'grant_type',
      'client_id',
      'client_secret',
      'code',
      'redirect_uri',
      'state',
      'scope',
      'token',
      'resource',
      'x',
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...endpoints),
        fc.array(fc.tuple(fc.constantFrom(...names), anyString), { maxLength: 6 }),
        async ([method, url], pairs) => {
          const body = pairs.map(([n, v]) => `${n}=${v.replace(/[&=#%+]/g, '_')}`).join('&');
          await send(
            method === 'GET'
              ? { method, url: `${url}?${body}`, headers: { cookie: h.login('ada') } }
              : { method, url, headers: { ...FORM_HEADERS, cookie: h.login('ada') }, body },
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
