/**
 * Registration hygiene through `createAuthorizationServer(...).handle`: REG-12 (429 on bursts),
 * REG-14 / ATK-45 (self-asserted display data), ATK-29 (huge bodies) and ATK-30 (malformed types,
 * prototype pollution).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { OAuthResponse } from '../../src/core/http.js';
import { createMemoryRateLimiter } from '../../src/rate-limit/memory.js';
import { type AuthorizationServer, createAuthorizationServer } from '../../src/server.js';
import { memoryStorage } from '../../src/storage/memory.js';

const CB = 'http://127.0.0.1:49152/cb';

function server(options: Partial<Parameters<typeof createAuthorizationServer>[0]> = {}) {
  return createAuthorizationServer({ issuer: 'http://127.0.0.1:4000', storage: memoryStorage(), ...options });
}

async function register(
  s: AuthorizationServer,
  body: unknown,
  remoteAddress = '198.51.100.1',
): Promise<{ response: OAuthResponse; json: Record<string, unknown> }> {
  const response = await s.handle({
    method: 'POST',
    url: '/oauth/register',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    remoteAddress,
  });
  expect(response).not.toBeNull();
  return { response: response!, json: JSON.parse(response!.body ?? '{}') as Record<string, unknown> };
}

// One server for the tests that need no special options: key generation is costly on shared CPUs.
const shared = await server();
afterAll(() => shared.close());

const valid = { client_name: 'Agent', redirect_uris: [CB], token_endpoint_auth_method: 'none' };

describe('REG-12 abusive registration volume', () => {
  it('answers a burst from one IP with 429, Retry-After and the OAuth JSON shape', async () => {
    const s = await server({ rateLimiter: createMemoryRateLimiter() });
    for (let i = 0; i < 20; i++) expect((await register(s, valid)).response.status).toBe(201);
    const { response, json } = await register(s, valid);
    expect(response.status).toBe(429);
    expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(3599);
    expect(response.headers['content-type']).toBe('application/json');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(json).toEqual({
      error: 'too_many_requests',
      error_description: expect.stringMatching(/^too many requests/),
    });
    // Another address is not affected.
    expect((await register(s, valid, '198.51.100.2')).response.status).toBe(201);
    await s.close();
  });

  it('counts requests before parsing them, so malformed floods are limited too', async () => {
    const s = await server({
      rateLimiter: createMemoryRateLimiter({ limits: { register: { points: 2, durationSeconds: 60 } } }),
    });
    expect((await register(s, '{')).response.status).toBe(400);
    expect((await register(s, '{')).response.status).toBe(400);
    expect((await register(s, valid)).response.status).toBe(429);
    await s.close();
  });
});

describe('REG-14 / ATK-45 self-asserted display data', () => {
  it('stores and echoes a markup-looking client_name raw (escaping is the page’s job)', async () => {
    const s = shared;
    const { response, json } = await register(s, { ...valid, client_name: '<img src=x onerror=alert(1)>' });
    expect(response.status).toBe(201);
    expect(json.client_name).toBe('<img src=x onerror=alert(1)>');
  });

  it.each([
    ['logo_uri', 'javascript:alert(1)'],
    ['logo_uri', 'data:image/png;base64,AAAA'],
    ['client_uri', 'http://client.example/'],
    ['client_uri', 'https://user:pw@client.example/'],
    ['policy_uri', 'https://client.example/p#frag'],
    ['tos_uri', 'https://2130706433/tos'],
    ['logo_uri', 'https://client.example/"><script>x</script>'],
    ['client_uri', `https://client.example/${'a'.repeat(2100)}`],
    ['client_name', 'a'.repeat(201)],
    ['client_name', '\u202e\u200b\n'],
  ])('refuses %s = %j with invalid_client_metadata', async (field, value) => {
    const s = shared;
    const { response, json } = await register(s, { ...valid, [field]: value });
    expect(response.status).toBe(400);
    expect(json.error).toBe('invalid_client_metadata');
    expect(String(json.error_description)).toContain(field);
  });

  it.each([
    ['a right-to-left override', 'Pay\u202eyal', 'Payyal'],
    ['a line break', 'line\nbreak', 'line break'],
    ['zero-width characters and a BOM', '\ufeffPay\u200bPal\u2060', 'PayPal'],
    ['decomposed accents (stored as NFC)', 'Cafe\u0301', 'Caf\u00e9'],
  ])(
    'ABU-05 stores client_name with %s normalised, and echoes the name users will see',
    async (_label, sent, shown) => {
      const s = shared;
      const { response, json } = await register(s, { ...valid, client_name: sent });
      expect(response.status).toBe(201);
      expect(json.client_name).toBe(shown);
    },
  );

  it('accepts https metadata URLs', async () => {
    const s = shared;
    const { response, json } = await register(s, {
      ...valid,
      client_uri: 'https://client.example/',
      logo_uri: 'https://cdn.client.example/logo.png?v=2',
    });
    expect(response.status).toBe(201);
    expect(json.logo_uri).toBe('https://cdn.client.example/logo.png?v=2');
  });
});

describe('ATK-29 oversized and deeply nested bodies', () => {
  it('answers a 10 MB body with 413', async () => {
    const s = shared;
    const { response } = await register(
      s,
      JSON.stringify({ ...valid, client_name: 'x'.repeat(10 * 1024 * 1024) }),
    );
    expect(response.status).toBe(413);
  });

  it('answers 10 000-deep nesting with a fast 400', async () => {
    const s = shared;
    const deep = `{"redirect_uris":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const started = Date.now();
    const { response, json } = await register(s, deep);
    expect(response.status).toBe(400);
    expect(json.error).toBe('invalid_client_metadata');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses 10 000 redirect URIs', async () => {
    const s = shared;
    const { response, json } = await register(s, {
      ...valid,
      redirect_uris: Array.from({ length: 10_000 }, () => 'a'),
    });
    expect(response.status).toBe(400);
    expect(json.error).toBe('invalid_redirect_uri');
  });
});

describe('ATK-30 malformed member types', () => {
  it.each([
    ['a string', 'http://127.0.0.1:49152/cb'],
    ['null', null],
    ['a number', 42],
    ['an object', { 0: CB }],
    ['numbers in the array', [1, 2]],
    ['nested arrays', [[CB]]],
  ])('refuses redirect_uris as %s with invalid_client_metadata', async (_name, value) => {
    const s = shared;
    const { response, json } = await register(s, { ...valid, redirect_uris: value });
    expect(response.status).toBe(400);
    expect(json.error).toBe('invalid_client_metadata');
  });

  it('refuses a missing redirect_uris with invalid_client_metadata', async () => {
    const s = shared;
    const { json } = await register(s, { client_name: 'Agent' });
    expect(json).toMatchObject({
      error: 'invalid_client_metadata',
      error_description: 'redirect_uris: is required',
    });
  });

  it('keeps invalid_redirect_uri for well-formed URIs it refuses', async () => {
    const s = shared;
    for (const redirect_uris of [[], ['https://app.example.com/cb'], [`${CB}#x`]]) {
      const { json } = await register(s, { ...valid, redirect_uris });
      expect(json.error).toBe('invalid_redirect_uri');
    }
  });

  it('ignores __proto__ and constructor.prototype members without polluting anything', async () => {
    const s = shared;
    const body = `{"redirect_uris":["${CB}"],"__proto__":{"admin":true},"constructor":{"prototype":{"polluted":true}},"client_name":"Agent"}`;
    const { response, json } = await register(s, body);
    expect(response.status).toBe(201);
    expect(json).not.toHaveProperty('admin');
    expect(Object.keys(json)).not.toContain('__proto__');
    expect(Object.keys(json)).not.toContain('constructor');
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).admin).toBeUndefined();
  });

  it.each([
    ['grant_types', 'authorization_code'],
    ['contacts', 'admin@example.com'],
    ['client_name', 7],
    ['scope', ['openid']],
  ])('refuses %s of the wrong type', async (field, value) => {
    const s = shared;
    const { response, json } = await register(s, { ...valid, [field]: value });
    expect(response.status).toBe(400);
    expect(json.error).toBe('invalid_client_metadata');
  });
});
