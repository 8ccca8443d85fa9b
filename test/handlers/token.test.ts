import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CB, form, Harness, ISSUER, json, pkce, type RegisteredClient } from '../helpers/harness.js';
import type { TestResponse } from '../helpers/transports.js';

let h: Harness;
let pub: RegisteredClient;
let conf: RegisteredClient;

beforeEach(async () => {
  h = await Harness.start();
  pub = await h.register();
  conf = await h.register({ token_endpoint_auth_method: 'client_secret_post' });
});
afterEach(() => h.close());

function expectError(response: TestResponse, error: string, status = 400) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(response.headers['cache-control']).toBe('no-store');
  const body = json(response);
  expect(body.error).toBe(error);
  if (body.error_description !== undefined)
    expect(body.error_description).toMatch(/^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/);
  return body;
}

async function userinfoStatus(accessToken: string): Promise<number> {
  const response = await h.send({
    method: 'GET',
    url: '/api/oauth/userinfo',
    headers: { authorization: `Bearer ${accessToken}` },
  });
  return response.status;
}

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

describe('token endpoint: authorization_code grant (RFC 6749 §4.1.3)', () => {
  it('TOK-01 exchanges a code for tokens: JSON, no-store, Bearer, expires_in, scope, refresh token', async () => {
    const { code, pkce: p } = await h.obtainCode(pub);
    const response = await h.exchange(pub, code, p);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers.pragma).toBe('no-cache');
    const body = json(response);
    expect(String(body.token_type).toLowerCase()).toBe('bearer');
    expect(body.expires_in).toBe(900);
    expect(body.scope).toBe('openid profile email courses:read');
    expect(typeof body.access_token).toBe('string');
    expect(body.refresh_token).toMatch(/^[A-Za-z0-9_-]{51}$/);
    expect(typeof body.id_token).toBe('string');
  });

  it('TOK-02 a confidential client authenticates with client_secret_post; missing or wrong secret → invalid_client', async () => {
    const { code, pkce: p } = await h.obtainCode(conf);
    expectError(await h.exchange(conf, code, p, { client_secret: undefined }), 'invalid_client');
    expectError(await h.exchange(conf, code, p, { client_secret: 'wrong' }), 'invalid_client');
    expect((await h.exchange(conf, code, p)).status).toBe(200);
  });

  it('ATK-24 a confidential code redeemed without the secret, or by a public client claiming its id, fails', async () => {
    const { code, pkce: p } = await h.obtainCode(conf);
    expectError(
      await h.token({
        grant_type: 'authorization_code',
        code,
        redirect_uri: CB,
        client_id: conf.client_id,
        code_verifier: p.verifier,
      }),
      'invalid_client',
    );
    // The code still works for the genuine client afterwards.
    expect((await h.exchange(conf, code, p)).status).toBe(200);
  });

  it('TOK-03 PKJ-05 failed Basic authentication → 401 with WWW-Authenticate: Basic (Basic turned off, and a wrong secret by default)', async () => {
    const off = await Harness.start({ options: { clientSecretBasic: false } });
    const offClient = await off.register({ token_endpoint_auth_method: 'client_secret_post' });
    const { code, pkce: p } = await off.obtainCode(offClient);
    const params = { grant_type: 'authorization_code', code, redirect_uri: CB, code_verifier: p.verifier };
    const disabled = await off.token(params, {
      authorization: basic(offClient.client_id, offClient.client_secret!),
    });
    expectError(disabled, 'invalid_client', 401);
    expect(disabled.headers['www-authenticate']).toMatch(/^Basic realm=/);
    await off.close();

    // client_secret_basic is on by default (RFC 6749 §2.3.1).
    const withBasic = await Harness.start();
    const client = await withBasic.register({ token_endpoint_auth_method: 'client_secret_basic' });
    const got = await withBasic.obtainCode(client);
    const base = {
      grant_type: 'authorization_code',
      code: got.code,
      redirect_uri: CB,
      code_verifier: got.pkce.verifier,
    };
    const wrong = await withBasic.token(base, { authorization: basic(client.client_id, 'wrong') });
    expectError(wrong, 'invalid_client', 401);
    expect(wrong.headers['www-authenticate']).toMatch(/^Basic /);
    expect(
      (await withBasic.token(base, { authorization: basic(client.client_id, client.client_secret!) })).status,
    ).toBe(200);
    await withBasic.close();
  });

  it("PKJ-05 Basic credentials encoded as authlib encodes them (Python's quote, then base64) authenticate a configured client", async () => {
    const clientId = 'agent/ci é';
    const clientSecret = 's3cret p@ss:+/!(é)~';
    const withClient = await Harness.start({
      options: {
        clients: [
          { clientId, clientSecret, redirectUris: [CB], tokenEndpointAuthMethod: 'client_secret_basic' },
        ],
      },
    });
    try {
      const client = { client_id: clientId, redirect_uris: [CB] } as RegisteredClient;
      const got = await withClient.obtainCode(client);
      // authlib 1.2: base64(quote(id) + ':' + quote(secret)), quote keeping '/' (computed with Python).
      const authlib = 'Basic YWdlbnQvY2klMjAlQzMlQTk6czNjcmV0JTIwcCU0MHNzJTNBJTJCLyUyMSUyOCVDMyVBOSUyOX4=';
      const response = await withClient.token(
        {
          grant_type: 'authorization_code',
          code: got.code,
          redirect_uri: CB,
          code_verifier: got.pkce.verifier,
        },
        { authorization: authlib },
      );
      expect(response.status, response.body).toBe(200);
    } finally {
      await withClient.close();
    }
  });

  it('TOK-04 PKJ-04 credentials in both the Basic header and the body → invalid_request', async () => {
    const withBasic = await Harness.start();
    const client = await withBasic.register({ token_endpoint_auth_method: 'client_secret_basic' });
    const got = await withBasic.obtainCode(client);
    const response = await withBasic.token(
      {
        grant_type: 'authorization_code',
        code: got.code,
        redirect_uri: CB,
        code_verifier: got.pkce.verifier,
        client_secret: client.client_secret,
      },
      { authorization: basic(client.client_id, client.client_secret!) },
    );
    expectError(response, 'invalid_request');
    await withBasic.close();
  });

  it('TOK-05 a client_secret (or code) in the URL query is refused', async () => {
    const { code, pkce: p } = await h.obtainCode(conf);
    const response = await h.send({
      method: 'POST',
      url: `/api/oauth/token?client_secret=${conf.client_secret}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form({
        grant_type: 'authorization_code',
        code,
        redirect_uri: CB,
        client_id: conf.client_id,
        code_verifier: p.verifier,
      }),
    });
    expectError(response, 'invalid_request');
  });

  it('TOK-06 GET → 405 with Allow: POST; a JSON body → 400 invalid_request', async () => {
    const get = await h.send({ method: 'GET', url: '/api/oauth/token' });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    const jsonBody = await h.send({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code' }),
    });
    expectError(jsonBody, 'invalid_request');
  });

  it('TOK-07 ATK-43 no grant_type → invalid_request; every other grant → unsupported_grant_type', async () => {
    expectError(await h.token({ client_id: pub.client_id }), 'invalid_request');
    for (const grant of [
      'client_credentials',
      'password',
      'implicit',
      'urn:ietf:params:oauth:grant-type:token-exchange',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
      'urn:ietf:params:oauth:grant-type:device_code',
      'garbage',
    ]) {
      expectError(await h.token({ grant_type: grant, client_id: pub.client_id }), 'unsupported_grant_type');
    }
  });

  it("TOK-08 ATK-07 a wrong code_verifier (another flow's) → invalid_grant", async () => {
    const first = await h.obtainCode(pub);
    const other = pkce();
    expectError(await h.exchange(pub, first.code, other), 'invalid_grant');
  });

  it('TOK-09 ATK-05 a missing code_verifier → invalid_request; a malformed one → invalid_request', async () => {
    const { code, pkce: p } = await h.obtainCode(pub);
    expectError(await h.exchange(pub, code, p, { code_verifier: undefined }), 'invalid_request');
    for (const bad of ['short', 'a'.repeat(129), `${'a'.repeat(42)}!`]) {
      expectError(await h.exchange(pub, code, p, { code_verifier: bad }), 'invalid_request');
    }
    expect((await h.exchange(pub, code, p)).status).toBe(200);
  });

  it('ATK-06 a verifier equal to the challenge string (a plain downgrade) → invalid_grant', async () => {
    const { code, pkce: p } = await h.obtainCode(pub);
    expectError(await h.exchange(pub, code, p, { code_verifier: p.challenge }), 'invalid_grant');
  });

  it('ATK-03 a replay with a wrong verifier first does not burn the code nor revoke anything', async () => {
    const { code, pkce: p } = await h.obtainCode(pub);
    expectError(await h.exchange(pub, code, pkce()), 'invalid_grant');
    const genuine = await h.exchange(pub, code, p);
    expect(genuine.status).toBe(200);
    expect(await userinfoStatus(json(genuine).access_token as string)).toBe(200);
  });

  it('TOK-10 ATK-23 a code of client A presented by client B → invalid_grant', async () => {
    const { code, pkce: p } = await h.obtainCode(pub);
    const other = await h.register();
    expectError(await h.exchange(other, code, p), 'invalid_grant');
  });

  it('TOK-11 a redirect_uri differing from the authorization request (another loopback port too) → invalid_grant', async () => {
    const { code, pkce: p } = await h.obtainCode(pub);
    expectError(
      await h.exchange(pub, code, p, { redirect_uri: 'http://127.0.0.1:49153/cb' }),
      'invalid_grant',
    );
    expectError(await h.exchange(pub, code, p, { redirect_uri: undefined }), 'invalid_grant');
    const port = await h.obtainCode(pub, { extra: { redirect_uri: 'http://127.0.0.1:61234/cb' } });
    expectError(await h.exchange(pub, port.code, port.pkce), 'invalid_grant');
    expect(
      (await h.exchange(pub, port.code, port.pkce, { redirect_uri: 'http://127.0.0.1:61234/cb' })).status,
    ).toBe(200);
  });

  it('TOK-12 AZ-26 an expired (after 60 s), unknown or garbage code → invalid_grant', async () => {
    const { code, pkce: p } = await h.obtainCode(pub);
    h.clock.advance(61);
    expectError(await h.exchange(pub, code, p), 'invalid_grant');
    expectError(await h.exchange(pub, 'A'.repeat(43), p), 'invalid_grant');
    expectError(await h.exchange(pub, '%%%', p), 'invalid_grant');
    expectError(await h.exchange(pub, 'x'.repeat(10_000), p), 'invalid_grant');
  });

  it('AZ-26 codes are 256-bit random, and stored only as hashes', async () => {
    const { code } = await h.obtainCode(pub);
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const { sha256 } = await import('../../src/core/crypto.js');
    expect(await h.storage.codes.get(code, h.clock.now())).toBeNull();
    const record = await h.storage.codes.get(await sha256(code), h.clock.now());
    expect(record?.clientId).toBe(pub.client_id);
    expect(JSON.stringify(record)).not.toContain(code);
  });

  it('TOK-13 ATK-01 a second redemption → invalid_grant, and everything the first one issued is revoked', async () => {
    const { code, pkce: p } = await h.obtainCode(pub);
    const first = json(await h.exchange(pub, code, p));
    expect(await userinfoStatus(first.access_token as string)).toBe(200);
    h.clock.advance(30);
    expectError(await h.exchange(pub, code, p), 'invalid_grant');
    expect(await userinfoStatus(first.access_token as string)).toBe(401);
    expectError(await h.refresh(pub, first.refresh_token as string), 'invalid_grant');
    expect(h.events.some((e) => e.type === 'code.replayed')).toBe(true);
  });

  it('ATK-02 twenty parallel redemptions of one code: exactly one succeeds', async () => {
    const { code, pkce: p } = await h.obtainCode(pub);
    const results = await Promise.all(Array.from({ length: 20 }, () => h.exchange(pub, code, p)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) expectError(r, 'invalid_grant');
  });

  it('TOK-14 ATK-32 a repeated parameter → invalid_request; empty values are absent; unknown parameters ignored', async () => {
    const { code, pkce: p } = await h.obtainCode(pub);
    const base = `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(CB)}&client_id=${pub.client_id}&code_verifier=${p.verifier}`;
    const send = (body: string, headers: Record<string, string | string[]> = {}) =>
      h.send({
        method: 'POST',
        url: '/api/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body,
      });
    expectError(await send(`${base}&code=other`), 'invalid_request');
    expectError(await send(`${base}&client_id=other`), 'invalid_request');
    expectError(await send(`${base}&grant_type=refresh_token`), 'invalid_request');
    expectError(await send(`${base}`, { authorization: ['Basic a', 'Basic b'] }), 'invalid_request');
    expectError(await send(base.replace(`code_verifier=${p.verifier}`, 'code_verifier=')), 'invalid_request');
    expect((await send(`${base}&extra=foobar&scope=`)).status).toBe(200);
  });

  it('ATK-31 malformed form bodies → 400 invalid_request, never 500', async () => {
    const send = (body: string | Uint8Array) =>
      h.send({
        method: 'POST',
        url: '/api/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
    expectError(await send('grant_type=authorization_code&code=%zz'), 'invalid_request');
    expectError(await send(new Uint8Array([0x63, 0x6f, 0x64, 0x65, 0x3d, 0xff, 0xfe])), 'invalid_request');
    expectError(await send('grant_type=authorization_code&code[]=x'), 'invalid_request');
    expectError(await send('grant_type=authorization_code&code[a]=x'), 'invalid_request');
    expectError(
      await send(`grant_type=authorization_code&code=${'x'.repeat(70 * 1024)}`),
      'invalid_request',
      413,
    );
    expectError(await send('&'.repeat(1000) + 'a=1&'.repeat(200)), 'invalid_request');
  });

  it('TOK-15 resource at the token endpoint narrows the audience; outside the grant → invalid_target', async () => {
    const both = await h.obtainCode(pub, { extra: { resource: undefined } });
    void both;
    const { code, pkce: p } = await h.obtainCode(pub, { extra: { resource: `${ISSUER}/mcp` } });
    expectError(await h.exchange(pub, code, p, { resource: 'https://other.example/api' }), 'invalid_target');
    const body = json(await h.exchange(pub, code, p, { resource: `${ISSUER}/mcp` }));
    const aud = JSON.parse(
      Buffer.from((body.access_token as string).split('.')[1]!, 'base64url').toString(),
    ).aud;
    expect(aud).toBe(`${ISSUER}/mcp`);
  });

  it('ATK-20 a grant for resource A cannot get a token for resource B', async () => {
    const { code, pkce: p } = await h.obtainCode(pub, { extra: { resource: `${ISSUER}/mcp` } });
    expectError(await h.exchange(pub, code, p, { resource: ISSUER }), 'invalid_target');
  });

  it('ATK-21 an extra scope in the code exchange never widens the grant', async () => {
    const { code, pkce: p } = await h.obtainCode(pub);
    const body = json(await h.exchange(pub, code, p, { scope: 'openid account:write' }));
    expect(body.scope).toBe('openid profile email courses:read');
  });

  it('TOK-16 every error is JSON with no-store and a restricted description', async () => {
    const response = await h.token({
      grant_type: 'authorization_code',
      client_id: pub.client_id,
      code: '"\\\n',
    });
    expectError(response, 'invalid_request');
  });

  it('TOK-17 a client registered without the refresh_token grant → unauthorized_client; it gets no refresh token', async () => {
    const noRefresh = await h.register({ grant_types: ['authorization_code'] });
    const { code, pkce: p } = await h.obtainCode(noRefresh);
    const body = json(await h.exchange(noRefresh, code, p));
    expect(body.refresh_token).toBeUndefined();
    expectError(await h.refresh(noRefresh, 'anything'), 'unauthorized_client');
  });

  it('ATK-25 an unknown client and a wrong secret answer the same invalid_client body', async () => {
    const unknown = await h.token({
      grant_type: 'authorization_code',
      code: 'x',
      client_id: 'nobody',
      client_secret: 'guess',
      code_verifier: pkce().verifier,
    });
    const wrong = await h.token({
      grant_type: 'authorization_code',
      code: 'x',
      client_id: conf.client_id,
      client_secret: 'guess',
      code_verifier: pkce().verifier,
    });
    expect(unknown.status).toBe(wrong.status);
    expect(unknown.body).toBe(wrong.body);
  });

  it('a public client presenting a secret → invalid_client', async () => {
    const { code, pkce: p } = await h.obtainCode(pub);
    expectError(await h.exchange(pub, code, p, { client_secret: 'made-up-secret' }), 'invalid_client');
  });

  it('emits typed events without any token, code or secret value', async () => {
    const { code, pkce: p } = await h.obtainCode(conf);
    const body = json(await h.exchange(conf, code, p));
    await h.refresh(conf, body.refresh_token as string);
    const types = h.events.map((e) => e.type);
    for (const type of [
      'client.registered',
      'consent.granted',
      'code.issued',
      'token.issued',
      'refresh.rotated',
    ]) {
      expect(types).toContain(type);
    }
    const serialized = JSON.stringify(h.events);
    for (const secret of [
      code,
      body.access_token,
      body.refresh_token,
      body.id_token,
      conf.client_secret,
      p.verifier,
    ]) {
      expect(serialized).not.toContain(secret as string);
    }
  });

  it('clears the expiry of a dynamically registered client once it completes a token request', async () => {
    const before = await h.storage.clients.get(pub.client_id, h.clock.now());
    expect(before?.expiresAt).toBeDefined();
    const { code, pkce: p } = await h.obtainCode(pub);
    await h.exchange(pub, code, p);
    const after = await h.storage.clients.get(pub.client_id, h.clock.now());
    expect(after?.expiresAt).toBeUndefined();
  });
});
