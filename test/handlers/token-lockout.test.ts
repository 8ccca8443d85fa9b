/**
 * ATK-25 and ABU-01 at the token endpoint: failed client authentications lock out only where a
 * person chose the secret (a configured client), and only the address that kept failing. Once an
 * address is over the limit it is refused before the secret is checked, so a correct guess from it
 * gets the same 429 as a wrong one (the limit is no oracle); the client's owner, from its own
 * address, is never locked out by a stranger. Generated 256-bit secrets have no lockout at all.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from '../../src/rate-limit/memory.js';
import { CB, Harness, json, type Pkce, type RegisteredClient } from '../helpers/harness.js';

const STRANGER = '198.51.100.66';
const OWNER = '203.0.113.10';

/** A configured client whose secret a person chose (the case a lockout exists for). */
const STATIC: RegisteredClient = {
  client_id: 'billing-app',
  client_secret: 'correct horse battery staple',
  redirect_uris: [CB],
};

let h: Harness | undefined;
afterEach(() => h?.close());

/** A harness whose client address is the `x-test-ip` header, with the default limits. */
async function harness(): Promise<Harness> {
  const server: Harness = await Harness.start({
    options: {
      // The limiter reads the harness's clock, so that a test can end a window.
      rateLimiter: createMemoryRateLimiter({ clock: () => server.clock.ms() }),
      clientIp: (request) => request.headers['x-test-ip'],
      clients: [{ clientId: STATIC.client_id, clientSecret: STATIC.client_secret!, redirectUris: [CB] }],
    },
  });
  return server;
}

function exchangeFrom(
  server: Harness,
  address: string,
  client: RegisteredClient,
  code: string,
  p: Pkce,
  secret = client.client_secret,
) {
  return server.token(
    {
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirect_uris[0],
      client_id: client.client_id,
      client_secret: secret,
      code_verifier: p.verifier,
    },
    { 'x-test-ip': address },
  );
}

describe('token endpoint: failed client authentication (ATK-25, ABU-01)', () => {
  it('ATK-25 after 10 wrong secrets for a configured client, that address is refused with 429 even with the right secret', async () => {
    h = await harness();
    const { code, pkce: p } = await h.obtainCode(STATIC);
    for (let i = 0; i < 10; i++) {
      const wrong = await exchangeFrom(h, STRANGER, STATIC, code, p, `wrong-guess-${i}`);
      expect(wrong.status).toBe(400);
      expect(json(wrong).error).toBe('invalid_client');
    }
    const locked = await exchangeFrom(h, STRANGER, STATIC, code, p);
    expect(locked.status).toBe(429);
    expect(json(locked).error).toBe('too_many_requests');
    expect(Number(locked.headers['retry-after'])).toBe(300);
    // The window ends: the right secret works again from that address.
    h.clock.advance(300);
    const fresh = await h.obtainCode(STATIC);
    expect((await exchangeFrom(h, STRANGER, STATIC, fresh.code, fresh.pkce)).status).toBe(200);
  });

  it('ABU-01 a stranger failing for a configured client from one address leaves its owner at another address unaffected', async () => {
    h = await harness();
    const { code, pkce: p } = await h.obtainCode(STATIC);
    for (let i = 0; i < 30; i++) await exchangeFrom(h, STRANGER, STATIC, 'junk-code', p, `guess-${i}`);
    expect((await exchangeFrom(h, STRANGER, STATIC, code, p)).status).toBe(429);
    const owner = await exchangeFrom(h, OWNER, STATIC, code, p);
    expect(owner.status).toBe(200);
    expect(json(owner).access_token).toEqual(expect.any(String));
  });

  it('ABU-01 wrong secrets for a registered client (generated 256-bit secret) lock nobody out', async () => {
    h = await harness();
    const client = await h.register({ token_endpoint_auth_method: 'client_secret_post' });
    const { code, pkce: p } = await h.obtainCode(client);
    for (let i = 0; i < 30; i++) {
      const wrong = await exchangeFrom(h, STRANGER, client, code, p, `guess-${i}`);
      expect(wrong.status).toBe(400);
      expect(json(wrong).error).toBe('invalid_client');
    }
    expect((await exchangeFrom(h, OWNER, client, code, p)).status).toBe(200);
  });

  it('ABU-01 unknown client ids are never counted, so a spray of them cannot fill the limiter', async () => {
    h = await harness();
    for (let i = 0; i < 20; i++) {
      const response = await h.token(
        { grant_type: 'refresh_token', refresh_token: 'x', client_id: `nobody-${i}`, client_secret: 's' },
        { 'x-test-ip': STRANGER },
      );
      expect(json(response).error).toBe('invalid_client');
    }
    const { code, pkce: p } = await h.obtainCode(STATIC);
    expect((await exchangeFrom(h, STRANGER, STATIC, code, p)).status).toBe(200);
  });
});
