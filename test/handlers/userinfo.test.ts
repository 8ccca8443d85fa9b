import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseBearerChallenge } from '../helpers/challenge.js';
import { expectInvalidToken, USERINFO } from '../helpers/endpoints.js';
import { form, Harness, ISSUER, json } from '../helpers/harness.js';
import { TEST_KEYS } from '../helpers/keys.js';
import { type TestRequest, type TestResponse, TRANSPORTS } from '../helpers/transports.js';

function get(h: Harness, headers: Record<string, string | string[]> = {}, url = USERINFO) {
  return h.send({ method: 'GET', url, headers });
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

async function accessToken(h: Harness, scope?: string): Promise<string> {
  const { body } = await h.tokens({}, scope === undefined ? {} : { scope });
  return body.access_token as string;
}

function expectBareChallenge(response: TestResponse): void {
  expect(response.status).toBe(401);
  expect(response.headers['www-authenticate']).toBe('Bearer');
}

describe('UserInfo endpoint (OIDC Core §5.3)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await Harness.start({ options: { keys: TEST_KEYS } });
  });
  afterEach(async () => {
    await h.close();
  });

  it('UI-01: GET with a Bearer token carrying openid answers 200 JSON with sub (OIDC Core §5.3.2)', async () => {
    const response = await get(h, bearer(await accessToken(h)));
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(json(response).sub).toBe('ada');
  });

  describe('UI-02: claims follow the granted scopes (OIDC Core §5.4)', () => {
    it('profile and email release their claims and nothing else (phone_number never)', async () => {
      const body = json(await get(h, bearer(await accessToken(h, 'openid profile email courses:read'))));
      expect(body).toEqual({
        sub: 'ada',
        name: 'User ada',
        given_name: 'User',
        family_name: 'ada',
        email: 'ada@example.com',
        email_verified: true,
      });
      expect(body).not.toHaveProperty('phone_number');
    });

    it('openid alone releases only sub', async () => {
      expect(json(await get(h, bearer(await accessToken(h, 'openid'))))).toEqual({ sub: 'ada' });
    });

    it('email without profile releases email and email_verified only', async () => {
      expect(json(await get(h, bearer(await accessToken(h, 'openid email'))))).toEqual({
        sub: 'ada',
        email: 'ada@example.com',
        email_verified: true,
      });
    });

    it('profile without email releases no email claim', async () => {
      const body = json(await get(h, bearer(await accessToken(h, 'openid profile'))));
      expect(Object.keys(body).sort()).toEqual(['family_name', 'given_name', 'name', 'sub']);
    });

    it('omits missing claims (never null), keeps false values, and never lets claims replace sub', async () => {
      await h.close();
      h = await Harness.start({
        options: {
          keys: TEST_KEYS,
          claims: () => ({
            sub: 'mallory',
            name: null,
            given_name: undefined,
            family_name: 'Lovelace',
            email: null,
            email_verified: false,
            phone_number: '+1 555',
          }),
        },
      });
      const response = await get(h, bearer(await accessToken(h, 'openid profile email')));
      expect(response.status).toBe(200);
      expect(json(response)).toEqual({ sub: 'ada', family_name: 'Lovelace', email_verified: false });
      expect(response.body).not.toContain('null');
    });
  });

  describe('UI-03: POST (OIDC Core §5.3.1; RFC 6750 §2.2)', () => {
    it('accepts the token in the Authorization header', async () => {
      const response = await h.send({ method: 'POST', url: USERINFO, headers: bearer(await accessToken(h)) });
      expect(response.status).toBe(200);
      expect(json(response).sub).toBe('ada');
    });

    it('accepts the token as access_token in a form body', async () => {
      const response = await h.send({
        method: 'POST',
        url: USERINFO,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form({ access_token: await accessToken(h) }),
      });
      expect(response.status).toBe(200);
      expect(json(response).sub).toBe('ada');
    });

    it('refuses a form-body token that is not a valid token', async () => {
      const response = await h.send({
        method: 'POST',
        url: USERINFO,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form({ access_token: 'not-a-token' }),
      });
      expectInvalidToken(response);
    });
  });

  describe('UI-04: no token (RFC 6750 §3.1)', () => {
    it('GET answers 401 with a bare Bearer challenge, no error attribute', async () => {
      const response = await get(h);
      expectBareChallenge(response);
    });

    it('POST with an empty form answers the same', async () => {
      const response = await h.send({
        method: 'POST',
        url: USERINFO,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: '',
      });
      expectBareChallenge(response);
    });
  });

  describe('UI-05: invalid tokens answer 401 invalid_token (RFC 6750 §3.1)', () => {
    it('expired: valid until its expiry, refused from the second it expires', async () => {
      const token = await accessToken(h);
      h.clock.advance(899);
      expect((await get(h, bearer(token))).status).toBe(200);
      h.clock.advance(1);
      expectInvalidToken(await get(h, bearer(token)));
    });

    it('revoked through the revocation endpoint', async () => {
      const { client, body } = await h.tokens();
      const token = body.access_token as string;
      const revoked = await h.send({
        method: 'POST',
        url: '/api/oauth/revoke',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form({ token, client_id: client.client_id }),
      });
      expect(revoked.status).toBe(200);
      expectInvalidToken(await get(h, bearer(token)));
    });

    it('unknown (well-formed, never issued)', async () => {
      expectInvalidToken(await get(h, bearer('A'.repeat(43))));
    });

    it('malformed (characters outside b64token)', async () => {
      expectInvalidToken(await get(h, bearer('abc$def')));
      expectInvalidToken(await get(h, { authorization: 'Bearer abc def' }));
    });

    it('a JWT with a tampered payload', async () => {
      const token = await accessToken(h);
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
      const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'mallory' })).toString('base64url');
      expectInvalidToken(await get(h, bearer(`${header}.${forged}.${signature}`)));
    });
  });

  it('UI-06: a valid token without openid answers 403 insufficient_scope with scope="openid"', async () => {
    const response = await get(h, bearer(await accessToken(h, 'profile courses:read')));
    expect(response.status).toBe(403);
    expect(json(response).error).toBe('insufficient_scope');
    const challenge = parseBearerChallenge(response.headers['www-authenticate']);
    expect(challenge.params.error).toBe('insufficient_scope');
    expect(challenge.params.scope).toBe('openid');
  });

  describe('UI-07: token placement (OAuth 2.1 §5.1; RFC 6750 §2)', () => {
    it('ignores ?access_token= and answers like no token', async () => {
      const token = await accessToken(h);
      expectBareChallenge(await get(h, {}, `${USERINFO}?access_token=${token}`));
      const post = await h.send({ method: 'POST', url: `${USERINFO}?access_token=${token}` });
      expectBareChallenge(post);
    });

    it('the query token neither replaces nor conflicts with a header token', async () => {
      const response = await get(h, bearer(await accessToken(h)), `${USERINFO}?access_token=garbage`);
      expect(response.status).toBe(200);
    });

    it('header and body token together answer 400 invalid_request', async () => {
      const token = await accessToken(h);
      const response = await h.send({
        method: 'POST',
        url: USERINFO,
        headers: { ...bearer(token), 'content-type': 'application/x-www-form-urlencoded' },
        body: form({ access_token: token }),
      });
      expect(response.status).toBe(400);
      expect(json(response).error).toBe('invalid_request');
      expect(parseBearerChallenge(response.headers['www-authenticate']).params.error).toBe('invalid_request');
    });
  });

  it('UI-08: sub equals the ID token sub, and the response is not cacheable (OIDC Core §5.3.2)', async () => {
    const { body } = await h.tokens();
    const jwks = json(
      await h.send({ method: 'GET', url: '/.well-known/jwks.json' }),
    ) as unknown as JSONWebKeySet;
    const { payload } = await jwtVerify(body.id_token as string, createLocalJWKSet(jwks), {
      issuer: ISSUER,
      currentDate: new Date(h.clock.ms()),
    });
    const response = await get(h, bearer(body.access_token as string));
    expect(response.status).toBe(200);
    expect(json(response).sub).toBe(payload.sub);
    expect(response.headers['cache-control']).toBe('no-store');
  });

  describe('ATK-33: tokens that are not access tokens are refused as Bearer (OAuth 2.1 §1.3.2)', () => {
    it('a refresh token', async () => {
      const { body } = await h.tokens();
      expectInvalidToken(await get(h, bearer(body.refresh_token as string)));
    });

    it('an ID token', async () => {
      const { body } = await h.tokens();
      expectInvalidToken(await get(h, bearer(body.id_token as string)));
    });

    it('an authorization code, before and after redemption', async () => {
      const client = await h.register();
      const { code, pkce } = await h.obtainCode(client);
      expectInvalidToken(await get(h, bearer(code)));
      expect((await h.exchange(client, code, pkce)).status).toBe(200);
      expectInvalidToken(await get(h, bearer(code)));
    });
  });
});

describe.each(['express', 'fetch', 'node'] as const)('UserInfo over HTTP through the %s adapter', (name) => {
  let h: Harness;
  beforeEach(async () => {
    h = await Harness.start({ options: { keys: TEST_KEYS } });
    h.transport = await TRANSPORTS[name](h.server);
  });
  afterEach(async () => {
    await h.close();
  });

  const send = (request: TestRequest) => h.send(request);

  it('UI-01 / UI-03: GET and POST with the header answer 200 with sub', async () => {
    const token = await accessToken(h);
    for (const method of ['GET', 'POST']) {
      const response = await send({ method, url: USERINFO, headers: bearer(token) });
      expect(response.status, method).toBe(200);
      expect(json(response).sub).toBe('ada');
      expect(response.headers['cache-control']).toBe('no-store');
    }
  });

  it('UI-04 / UI-07: no token and a query token both get the bare challenge', async () => {
    const token = await accessToken(h);
    expectBareChallenge(await send({ method: 'GET', url: USERINFO }));
    expectBareChallenge(await send({ method: 'GET', url: `${USERINFO}?access_token=${token}` }));
  });

  it('UI-03 / UI-07: a form-body token works; header and body together answer 400', async () => {
    const token = await accessToken(h);
    const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' };
    const body = await send({
      method: 'POST',
      url: USERINFO,
      headers: formHeaders,
      body: form({ access_token: token }),
    });
    expect(body.status).toBe(200);
    expect(json(body).sub).toBe('ada');
    const both = await send({
      method: 'POST',
      url: USERINFO,
      headers: { ...formHeaders, ...bearer(token) },
      body: form({ access_token: token }),
    });
    expect(both.status).toBe(400);
    expect(json(both).error).toBe('invalid_request');
  });

  it('two Authorization headers answer 400 invalid_request, never 200 (RFC 6750 §2)', async () => {
    const token = await accessToken(h);
    const response = await send({
      method: 'GET',
      url: USERINFO,
      headers: { authorization: [`Bearer ${token}`, `Bearer ${token}`] },
    });
    expect(response.status).toBe(400);
    expect(json(response).error).toBe('invalid_request');
  });
});
