/**
 * End to end with a real OAuth client library: openid-client v6 (on oauth4webapi) discovers the
 * server, registers, runs the code flow with PKCE, validates the ID token, calls UserInfo, rotates
 * its refresh token and trips reuse detection, over real HTTP through the Fetch and Express adapters.
 * The browser's part (consent page) is plain HTTP with the harness's login cookie.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExpressRouter } from '../../src/adapters/express.js';
import { createFetchHandler } from '../../src/adapters/fetch.js';
import { CB, consentFields, Harness } from '../helpers/harness.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

const ADAPTERS: Record<string, (h: Harness) => Listener> = {
  fetch: (h) => getRequestListener(createFetchHandler(h.server)),
  express: (h) => {
    const app = express();
    app.use(createExpressRouter(h.server));
    return app;
  },
};

/** Rejects unless `promise` fails with the OAuth error `code` in the response body. */
async function expectOAuthError(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(client.ResponseBodyError);
  expect((error as client.ResponseBodyError).error).toBe(code);
}

describe.each(Object.keys(ADAPTERS))('openid-client end to end through the %s adapter', (adapter) => {
  let http: Server;
  let issuer: string;
  let h: Harness;
  const execute = [client.allowInsecureRequests];

  beforeAll(async () => {
    // The issuer must be the URL the library fetches, so listen first and build the server after.
    let listener: Listener = (_req, res) => res.writeHead(503).end();
    http = createServer((req, res) => listener(req, res));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    h = await Harness.start({
      // openid-client checks iat/exp against the real clock.
      options: {
        issuer,
        resources: [
          { resource: issuer, scopes: ['openid', 'profile', 'email', 'courses:read'] },
          { resource: `${issuer}/mcp`, scopes: [] },
        ],
        clock: Date.now,
        // Reuse is detected at once, without waiting out the refresh grace window on the real clock.
        tokens: { refreshGraceSeconds: 0 },
      },
    });
    listener = ADAPTERS[adapter]!(h);
  });

  afterAll(async () => {
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await h.close();
  });

  /** The browser: signed in as `userId`, opens the authorization URL, allows, returns the redirect. */
  async function consent(url: URL, userId: string): Promise<URL> {
    h.logins.set(userId, Math.floor(Date.now() / 1000));
    const cookie = `user=${userId}`;
    const page = await fetch(url, { headers: { cookie }, redirect: 'manual' });
    expect(page.status).toBe(200);
    const html = await page.text();
    const action = /<form method="post" action="([^"]+)">/.exec(html)?.[1];
    expect(action).toBe(`${issuer}/oauth/authorize/decision`);
    const fields = consentFields({ status: page.status, headers: {}, body: html });
    const decided = await fetch(action!, {
      method: 'POST',
      headers: { cookie, origin: issuer, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, decision: 'allow' }),
      redirect: 'manual',
    });
    expect(decided.status).toBe(303);
    return new URL(decided.headers.get('location')!);
  }

  /** Builds an authorization URL with PKCE S256 (the library's helpers) and a fresh state. */
  async function authorizationRequest(config: client.Configuration, params: Record<string, string>) {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: CB,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      ...params,
    });
    return { url, verifier, state };
  }

  it('register → authorize → consent → token → userinfo → refresh → refresh reuse detected', async () => {
    // Dynamic registration (RFC 7591) at the endpoint the discovered metadata names.
    const registered = await client.dynamicClientRegistration(
      new URL(issuer),
      {
        redirect_uris: [CB],
        client_name: 'openid-client e2e',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
      client.None(),
      { execute },
    );
    const clientId = registered.clientMetadata().client_id;
    expect(clientId).toBeTypeOf('string');

    // Discovery from the issuer's OpenID configuration; the library checks its issuer.
    const config = await client.discovery(new URL(issuer), clientId, undefined, client.None(), { execute });
    client.enableNonRepudiationChecks(config);
    expect(config.serverMetadata().issuer).toBe(issuer);
    expect(config.serverMetadata().authorization_response_iss_parameter_supported).toBe(true);

    const nonce = client.randomNonce();
    const { url, verifier, state } = await authorizationRequest(config, {
      scope: 'openid profile email courses:read',
      nonce,
    });
    const callback = await consent(url, 'ada');
    expect(callback.searchParams.get('iss')).toBe(issuer);

    // Checks state, iss (RFC 9207), PKCE, and the ID token (signature, iss, aud, nonce, iat, exp).
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    expect(claims).toMatchObject({ iss: issuer, sub: 'ada', aud: clientId, nonce });
    expect(tokens.refresh_token).toBeTypeOf('string');

    const info = await client.fetchUserInfo(config, tokens.access_token, claims!.sub);
    expect(info).toMatchObject({ sub: 'ada', name: 'User ada', email: 'ada@example.com' });
    expect(info).not.toHaveProperty('phone_number');

    const rotated = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(rotated.refresh_token).toBeTypeOf('string');
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    expect((await client.fetchUserInfo(config, rotated.access_token, 'ada')).sub).toBe('ada');

    // Reuse of the rotated-out token: invalid_grant, and the whole grant is revoked (RFC 9700 §4.14.2).
    await expectOAuthError(client.refreshTokenGrant(config, tokens.refresh_token!), 'invalid_grant');
    await expectOAuthError(client.refreshTokenGrant(config, rotated.refresh_token!), 'invalid_grant');
    const dead = await client.fetchUserInfo(config, rotated.access_token, 'ada').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(dead).toBeInstanceOf(client.WWWAuthenticateChallengeError);
    expect((dead as client.WWWAuthenticateChallengeError).status).toBe(401);
  });

  it('the library refuses a callback with a wrong state or iss; the genuine one, without nonce, succeeds', async () => {
    const registered = await client.dynamicClientRegistration(
      new URL(issuer),
      { redirect_uris: [CB], token_endpoint_auth_method: 'none' },
      client.None(),
      { execute },
    );
    // dynamicClientRegistration discovers the server first: its result is a full configuration.
    const config = registered;
    const { url, verifier, state } = await authorizationRequest(config, { scope: 'openid' });
    const callback = await consent(url, 'grace');
    expect(callback.searchParams.get('state')).toBe(state);
    const mismatch = await client
      .authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: client.randomState(),
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(mismatch).toBeInstanceOf(client.ClientError);
    expect(String((mismatch as client.ClientError).cause)).toMatch(/state/);
    // RFC 9207: a callback claiming another issuer is refused by the library.
    const forged = new URL(callback);
    forged.searchParams.set('iss', 'https://evil.example');
    const mixUp = await client
      .authorizationCodeGrant(config, forged, { pkceCodeVerifier: verifier, expectedState: state })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(mixUp).toBeInstanceOf(client.ClientError);
    expect(String((mixUp as client.ClientError).cause)).toMatch(/iss/);
    // The same callback with the right state and no nonce (OIDC-02) succeeds.
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      idTokenExpected: true,
    });
    expect(tokens.claims()).toMatchObject({ sub: 'grace' });
    expect(tokens.claims()).not.toHaveProperty('nonce');
  });
});
