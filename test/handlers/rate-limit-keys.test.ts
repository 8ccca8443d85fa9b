/**
 * ABU-01 and ABU-03: every limit is keyed so that only the abuser pays. A stranger's flood from
 * one address (junk token requests naming a public client, wrong secrets for an introspection
 * caller, introspection and UserInfo floods) gets the stranger 429s, and leaves the real client's
 * next request from another address unaffected. Every endpoint has a per-address limit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RateLimits } from '../../src/rate-limit/limits.js';
import { createMemoryRateLimiter } from '../../src/rate-limit/memory.js';
import { INTROSPECT, RS_CALLER, USERINFO } from '../helpers/endpoints.js';
import { CB, consentFields, form, Harness, json, pkce } from '../helpers/harness.js';
import { TEST_KEYS } from '../helpers/keys.js';

const STRANGER = '198.51.100.66';
const OWNER = '203.0.113.10';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

let h: Harness | undefined;
afterEach(() => h?.close());

function harness(limits?: RateLimits): Promise<Harness> {
  return Harness.start({
    options: {
      keys: TEST_KEYS,
      rateLimiter: createMemoryRateLimiter(limits === undefined ? {} : { limits }),
      clientIp: (request) => request.headers['x-test-ip'],
      introspection: { callers: [RS_CALLER] },
    },
  });
}

function introspectFrom(server: Harness, address: string, credentials: Record<string, string | undefined>) {
  return server.send({
    method: 'POST',
    url: INTROSPECT,
    headers: { ...FORM, 'x-test-ip': address },
    body: form({ token: 'some-token', ...credentials }),
  });
}

const RS = { client_id: RS_CALLER.clientId, client_secret: RS_CALLER.clientSecret };

describe('ABU-01 a public client_id is no budget strangers can spend', () => {
  it('junk token requests naming a public client push only their own address to 429; the real user exchanges a code from another address', async () => {
    h = await harness({ token: { points: 5, durationSeconds: 60 } });
    const client = await h.register();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const junk = await h.token(
        {
          grant_type: 'authorization_code',
          code: `junk-${i}`,
          redirect_uri: CB,
          client_id: client.client_id,
          code_verifier: pkce().verifier,
        },
        { 'x-test-ip': STRANGER },
      );
      statuses.push(junk.status);
    }
    expect(statuses.slice(0, 5)).toEqual([400, 400, 400, 400, 400]);
    expect(statuses.slice(5).every((s) => s === 429)).toBe(true);

    const { code, pkce: p } = await h.obtainCode(client);
    const real = await h.token(
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: CB,
        client_id: client.client_id,
        code_verifier: p.verifier,
      },
      { 'x-test-ip': OWNER },
    );
    expect(real.status).toBe(200);
  });

  it('a confidential client that proved its secret has a budget of its own, wherever it calls from', async () => {
    h = await harness({ token: { points: 3, durationSeconds: 60 } });
    const client = await h.register({ token_endpoint_auth_method: 'client_secret_post' });
    const refreshFrom = (address: string) =>
      h!.token(
        {
          grant_type: 'refresh_token',
          refresh_token: 'not-a-token',
          client_id: client.client_id,
          client_secret: client.client_secret,
        },
        { 'x-test-ip': address },
      );
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await refreshFrom(`192.0.2.${i + 1}`)).status);
    expect(statuses).toEqual([400, 400, 400, 429]);
  });
});

describe('ABU-01 / ABU-03 introspection', () => {
  it('wrong secrets for a configured caller lock out only the failing address; the real resource server still introspects', async () => {
    h = await harness();
    for (let i = 0; i < 10; i++) {
      const wrong = await introspectFrom(h, STRANGER, {
        client_id: RS_CALLER.clientId,
        client_secret: `x${i}`,
      });
      expect(wrong.status).toBe(401);
    }
    // The stranger is refused before the secret is checked: even the right one gets 429.
    const locked = await introspectFrom(h, STRANGER, RS);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    const real = await introspectFrom(h, OWNER, RS);
    expect(real.status).toBe(200);
    expect(json(real)).toEqual({ active: false });
  });

  it('ABU-03 an address flooding introspection is refused after 600 requests a minute, with or without credentials', async () => {
    h = await harness();
    let served = 0;
    let refused = 0;
    for (let i = 0; i < 620; i++) {
      const response = await introspectFrom(h, STRANGER, i % 2 === 0 ? {} : RS);
      if (response.status === 429) refused++;
      else served++;
    }
    expect(served).toBe(600);
    expect(refused).toBe(20);
    expect((await introspectFrom(h, OWNER, RS)).status).toBe(200);
  });
});

describe('ABU-03 every endpoint has a per-address limit (429 + Retry-After)', () => {
  const one = { points: 1, durationSeconds: 60 };

  it.each([
    [
      'userinfo',
      { userinfo: one },
      { method: 'GET', url: USERINFO, headers: { authorization: 'Bearer junk' } },
    ],
    ['revoke', { revoke: one }, { method: 'POST', url: '/api/oauth/revoke', headers: FORM, body: 'token=x' }],
    ['register', { register: one }, { method: 'POST', url: '/api/oauth/register', headers: FORM, body: '' }],
    ['authorize', { authorize: one }, { method: 'GET', url: '/oauth/authorize?client_id=x' }],
    [
      'the consent decision',
      { authorize: one },
      { method: 'POST', url: '/oauth/authorize/decision', headers: FORM, body: 'decision=allow' },
    ],
    [
      'token',
      { token: one },
      { method: 'POST', url: '/api/oauth/token', headers: FORM, body: 'grant_type=x' },
    ],
    ['introspect', { introspect: one }, { method: 'POST', url: INTROSPECT, headers: FORM, body: 'token=x' }],
  ] as const)('%s', async (_name, limits, request) => {
    h = await harness(limits as RateLimits);
    const send = (address: string) =>
      h!.send({
        ...request,
        headers: { ...('headers' in request ? request.headers : {}), 'x-test-ip': address },
      });
    expect((await send(STRANGER)).status).not.toBe(429);
    const refused = await send(STRANGER);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await send(OWNER)).status).not.toBe(429);
  });

  it('a UserInfo flood from one address leaves another address served', async () => {
    h = await harness({ userinfo: { points: 3, durationSeconds: 60 } });
    const client = await h.register();
    const { code, pkce: p } = await h.obtainCode(client);
    const tokens = json(await h.exchange(client, code, p));
    for (let i = 0; i < 5; i++) {
      await h.send({
        method: 'GET',
        url: USERINFO,
        headers: { authorization: 'Bearer junk', 'x-test-ip': STRANGER },
      });
    }
    const real = await h.send({
      method: 'GET',
      url: USERINFO,
      headers: { authorization: `Bearer ${tokens.access_token as string}`, 'x-test-ip': OWNER },
    });
    expect(real.status).toBe(200);
  });

  it('a consent decision is counted in the authorize bucket of its address', async () => {
    h = await harness({ authorize: { points: 2, durationSeconds: 60 } });
    const client = await h.register();
    const cookie = h.login('ada');
    const page = await h.send({
      method: 'GET',
      url: h.authorizeUrl(client, pkce()),
      headers: { cookie, 'x-test-ip': OWNER },
    });
    expect(page.status).toBe(200);
    const decided = await h.decide(consentFields(page), 'allow', cookie, { 'x-test-ip': OWNER });
    expect(decided.status).toBe(303);
    const third = await h.decide(consentFields(page), 'allow', cookie, { 'x-test-ip': OWNER });
    expect(third.status).toBe(429);
  });
});
