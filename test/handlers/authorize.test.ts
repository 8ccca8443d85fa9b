import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PAGE_STYLE, PAGE_STYLE_HASH } from '../../src/pages/html.js';
import {
  CB,
  consentFields,
  form,
  Harness,
  ISSUER,
  json,
  type Pkce,
  pkce,
  type RegisteredClient,
  redirectParams,
} from '../helpers/harness.js';
import type { TestResponse } from '../helpers/transports.js';

let h: Harness;
let client: RegisteredClient;
let p: Pkce;

beforeEach(async () => {
  h = await Harness.start();
  client = await h.register();
  p = pkce();
});
afterEach(() => h.close());

/** A 400 (or other) HTML page that must not redirect anywhere. */
function expectPage(response: TestResponse, status = 400) {
  expect(response.status).toBe(status);
  expect(response.headers.location).toBeUndefined();
  expect(response.headers['content-type']).toMatch(/^text\/html/);
}

function expectErrorRedirect(response: TestResponse, error: string, state: string | null = 'st-123') {
  expect([302, 303]).toContain(response.status);
  const location = response.headers.location!;
  expect(location.startsWith(`${CB}?`)).toBe(true);
  const params = redirectParams(response);
  expect(params.get('error')).toBe(error);
  expect(params.get('state')).toBe(state);
  expect(params.get('iss')).toBe(ISSUER);
  expect(params.get('code')).toBeNull();
  return params;
}

/** A raw authorization URL from parameter pairs (repeats allowed). */
function rawUrl(pairs: [string, string][]): string {
  return `/oauth/authorize?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`;
}

function basePairs(overrides: Record<string, string | null> = {}): [string, string][] {
  const base: Record<string, string> = {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: CB,
    scope: 'openid courses:read',
    state: 'st-123',
    code_challenge: p.challenge,
    code_challenge_method: 'S256',
  };
  const merged: Record<string, string | null> = { ...base, ...overrides };
  return Object.entries(merged).filter((e): e is [string, string] => e[1] !== null);
}

describe('authorization endpoint: consent and login (RFC 6749 §4.1.1, §10.2)', () => {
  it('AZ-01 shows a consent page naming the client, its id, the redirect host:port and each scope in words', async () => {
    const named = await h.register({ client_name: 'Course CLI' });
    const page = await h.authorize(h.authorizeUrl(named, p), h.login('ada'));
    expect(page.status).toBe(200);
    expect(page.headers.location).toBeUndefined();
    expect(page.body).toContain('Course CLI');
    expect(page.body).toContain(named.client_id);
    expect(page.body).toContain('127.0.0.1:49152');
    expect(page.body).toContain('Read access to courses');
    expect(page.body).toContain('OpenID Connect authentication');
    expect(page.body).toMatch(/<button[^>]*value="allow"[^>]*>Allow<\/button>/);
    expect(page.body).toMatch(/<button[^>]*value="deny"[^>]*>Deny<\/button>/);
  });

  it('AZ-02 without a session redirects to the login page, then resumes the same request after login', async () => {
    const first = await h.authorize(h.authorizeUrl(client, p));
    expect(first.status).toBe(303);
    const login = new URL(first.headers.location!, ISSUER);
    expect(login.pathname).toBe('/login');
    const returnTo = login.searchParams.get('return_to')!;
    expect(returnTo.startsWith(`${ISSUER}/oauth/authorize?request_id=`)).toBe(true);
    // Nothing reaches the client without a user.
    expect(first.headers.location).not.toContain('code=');
    const resumed = await h.authorize(returnTo.slice(ISSUER.length), h.login('ada'));
    expect(resumed.status).toBe(200);
    const done = await h.decide(consentFields(resumed), 'allow', h.login('ada'));
    expect(redirectParams(done).get('code')).toBeTruthy();
    expect(redirectParams(done).get('state')).toBe('st-123');
  });

  it('AZ-03 AZ-23 approving answers 303 to the redirect URI with code, the exact state and iss; no token in the URL', async () => {
    const cookie = h.login('ada');
    const page = await h.authorize(h.authorizeUrl(client, p), cookie);
    const response = await h.decide(consentFields(page), 'allow', cookie);
    expect(response.status).toBe(303);
    const location = response.headers.location!;
    expect(location.startsWith(`${CB}?`)).toBe(true);
    const params = redirectParams(response);
    expect(params.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get('state')).toBe('st-123');
    expect(params.get('iss')).toBe(ISSUER);
    expect(location).not.toMatch(/access_token|id_token|#/);
  });

  it('AZ-04 denying redirects with access_denied, state and iss', async () => {
    const cookie = h.login('ada');
    const page = await h.authorize(h.authorizeUrl(client, p), cookie);
    const response = await h.decide(consentFields(page), 'deny', cookie);
    expect(response.status).toBe(303);
    expectErrorRedirect(response, 'access_denied');
    expect(h.events.some((e) => e.type === 'consent.denied')).toBe(true);
  });

  it('AZ-24 asks a public loopback client again even after an earlier consent (RFC 8252 §8.6)', async () => {
    await h.obtainCode(client);
    const again = await h.authorize(h.authorizeUrl(client, pkce()), h.login('ada'));
    expect(again.status).toBe(200);
    expect(again.body).toContain('Allow');
  });

  it('remembers consent for a confidential client and then redirects without asking; prompt=consent asks anyway', async () => {
    const confidential = await h.register({ token_endpoint_auth_method: 'client_secret_post' });
    await h.obtainCode(confidential);
    const cookie = h.login('ada');
    const silent = await h.authorize(h.authorizeUrl(confidential, pkce()), cookie);
    expect(silent.status).toBe(303);
    expect(redirectParams(silent).get('code')).toBeTruthy();
    const wider = await h.authorize(
      h.authorizeUrl(confidential, pkce(), { scope: 'openid courses:read courses:write' }),
      cookie,
    );
    expect(wider.status).toBe(200);
    const forced = await h.authorize(h.authorizeUrl(confidential, pkce(), { prompt: 'consent' }), cookie);
    expect(forced.status).toBe(200);
  });
});

describe('authorization endpoint: client and redirect URI validation never redirect (RFC 6749 §4.1.2.1)', () => {
  it('AZ-05 unknown or missing client_id → 400 page, no Location', async () => {
    expectPage(await h.authorize(rawUrl(basePairs({ client_id: 'nope' })), h.login('ada')));
    expectPage(await h.authorize(rawUrl(basePairs({ client_id: null })), h.login('ada')));
  });

  it('AZ-06 ATK-09 a redirect_uri that is not registered → 400 page, never a redirect to it', async () => {
    const response = await h.authorize(
      rawUrl(basePairs({ redirect_uri: 'https://evil.example/cb' })),
      h.login('ada'),
    );
    expectPage(response);
    expect(response.body).not.toContain('evil.example');
    // Unknown client plus attacker redirect: still a page.
    expectPage(
      await h.authorize(rawUrl(basePairs({ client_id: 'x', redirect_uri: 'https://evil.example/cb' }))),
    );
  });

  it('AZ-07 accepts another loopback port and sends the code to that port', async () => {
    const other = 'http://127.0.0.1:61234/cb';
    const { params } = await h.obtainCode(client, { extra: { redirect_uri: other } });
    expect(params.get('code')).toBeTruthy();
    const cookie = h.login('ada');
    const page = await h.authorize(h.authorizeUrl(client, pkce(), { redirect_uri: other }), cookie);
    const response = await h.decide(consentFields(page), 'allow', cookie);
    expect(response.headers.location!.startsWith('http://127.0.0.1:61234/cb?')).toBe(true);
  });

  it('AZ-08 an omitted redirect_uri works only with exactly one registered URI and without openid', async () => {
    const ok = await h.authorize(
      rawUrl(basePairs({ redirect_uri: null, scope: 'courses:read' })),
      h.login('ada'),
    );
    expect(ok.status).toBe(200);
    expectPage(
      await h.authorize(
        rawUrl(basePairs({ redirect_uri: null, scope: 'openid courses:read' })),
        h.login('ada'),
      ),
    );
    const two = await h.register({ redirect_uris: [CB, 'http://127.0.0.1:49153/other'] });
    expectPage(
      await h.authorize(
        rawUrl(basePairs({ client_id: two.client_id, redirect_uri: null, scope: 'courses:read' })),
        h.login('ada'),
      ),
    );
  });

  it('AZ-09 keeps a registered query and appends; a changed or added query → 400 page', async () => {
    const withQuery = await h.register({ redirect_uris: [`${CB}?x=1`] });
    const { params } = await h.obtainCode(withQuery, { extra: { redirect_uri: `${CB}?x=1` } });
    expect(params.get('x')).toBe('1');
    expect(params.get('code')).toBeTruthy();
    for (const changed of [`${CB}?x=2`, `${CB}?x=1&y=2`, CB]) {
      expectPage(
        await h.authorize(
          rawUrl(basePairs({ client_id: withQuery.client_id, redirect_uri: changed })),
          h.login('ada'),
        ),
      );
    }
    expectPage(await h.authorize(rawUrl(basePairs({ redirect_uri: `${CB}?x=1` })), h.login('ada')));
  });

  it('ATK-08 redirect_uri variants of the registered one → 400 page', async () => {
    for (const variant of [
      `${CB}/`,
      'http://127.0.0.1:49152/CB',
      'http://127.0.0.1:49152/cb/../x',
      'http://127.0.0.1:49152/cb%2F..',
      'http://127.0.0.1:49152/cb;x',
      `${CB}?`,
      `${CB}?x=1`,
      `${CB}#f`,
    ]) {
      expectPage(await h.authorize(rawUrl(basePairs({ redirect_uri: variant })), h.login('ada')));
    }
  });

  it('ATK-10 loopback ports: 0, 65536, leading zeros and non-digits refused; an omitted port follows the port-agnostic rule', async () => {
    for (const port of [':0', ':65536', ':049152', ':abc', ':']) {
      expectPage(
        await h.authorize(rawUrl(basePairs({ redirect_uri: `http://127.0.0.1${port}/cb` })), h.login('ada')),
      );
    }
    const { params } = await h.obtainCode(client, { extra: { redirect_uri: 'http://127.0.0.1/cb' } });
    expect(params.get('code')).toBeTruthy();
  });

  it('ATK-11 other loopback host forms and tricks are refused', async () => {
    for (const variant of [
      'http://localhost:49152/cb',
      'http://[::1]:49152/cb',
      'http://127.0.0.2:49152/cb',
      'http://127.1:49152/cb',
      'http://2130706433:49152/cb',
      'http://0x7f.0.0.1:49152/cb',
      'http://[::ffff:127.0.0.1]:49152/cb',
      'http://127.0.0.1.nip.io:49152/cb',
      'http://127.0.0.1:1@evil.example/cb',
      'http://evil.example#@127.0.0.1:49152/cb',
      'http:\\\\127.0.0.1:49152/cb',
    ]) {
      expectPage(await h.authorize(rawUrl(basePairs({ redirect_uri: variant })), h.login('ada')));
    }
    // And the reverse: a client registered with localhost does not match 127.0.0.1.
    const local = await h.register({ redirect_uris: ['http://localhost:49152/cb'] });
    expectPage(
      await h.authorize(rawUrl(basePairs({ client_id: local.client_id, redirect_uri: CB })), h.login('ada')),
    );
  });

  it('ATK-12 ATK-13 ATK-14 scheme, case, unicode, encoded and control-character variants are refused', async () => {
    for (const variant of [
      'https://127.0.0.1:49152/cb',
      'HTTP://127.0.0.1:49152/cb',
      'http://１２７.０.０.１:49152/cb',
      'http://%31%32%37.0.0.1:49152/cb',
      'http://127.0.0.1:49152/c\tb',
      'http://127.0.0.1:49152/cb\n',
      'http://127.0.0.1:49152/сb',
      'http://127.0.0.1:49152/cb\u202e',
      `${CB}#x`,
      `${CB}%23x`,
    ]) {
      expectPage(await h.authorize(rawUrl(basePairs({ redirect_uri: variant })), h.login('ada')));
    }
    const success = await h.obtainCode(client);
    expect(success.params.toString()).not.toContain('#');
  });
});

describe('authorization endpoint: request errors redirect with error, state and iss', () => {
  it('AZ-10 a missing code_challenge → invalid_request', async () => {
    expectErrorRedirect(
      await h.authorize(rawUrl(basePairs({ code_challenge: null })), h.login('ada')),
      'invalid_request',
    );
  });

  it('AZ-11 ATK-06 an absent, plain or unknown code_challenge_method → invalid_request naming the method', async () => {
    const absent = expectErrorRedirect(
      await h.authorize(rawUrl(basePairs({ code_challenge_method: null })), h.login('ada')),
      'invalid_request',
    );
    expect(absent.get('error_description')).toMatch(/S256/);
    const plain = expectErrorRedirect(
      await h.authorize(
        rawUrl(basePairs({ code_challenge_method: 'plain', code_challenge: p.verifier })),
        h.login('ada'),
      ),
      'invalid_request',
    );
    expect(plain.get('error_description')).toMatch(/plain/);
    const unknown = expectErrorRedirect(
      await h.authorize(rawUrl(basePairs({ code_challenge_method: 'S512' })), h.login('ada')),
      'invalid_request',
    );
    expect(unknown.get('error_description')).toMatch(/S512/);
  });

  it('AZ-12 a code_challenge of the wrong length or alphabet → invalid_request', async () => {
    for (const bad of ['short', 'a'.repeat(129), `${'a'.repeat(42)}!`, `${'a'.repeat(42)} `]) {
      expectErrorRedirect(
        await h.authorize(rawUrl(basePairs({ code_challenge: bad })), h.login('ada')),
        'invalid_request',
      );
    }
  });

  it('AZ-13 ATK-43 a missing response_type → invalid_request; any other than code → unsupported_response_type', async () => {
    expectErrorRedirect(
      await h.authorize(rawUrl(basePairs({ response_type: null })), h.login('ada')),
      'invalid_request',
    );
    for (const type of ['token', 'id_token', 'code id_token', 'garbage']) {
      expectErrorRedirect(
        await h.authorize(rawUrl(basePairs({ response_type: type })), h.login('ada')),
        'unsupported_response_type',
      );
    }
  });

  it('AZ-14 an unknown scope → invalid_scope; an omitted scope → invalid_scope (no default scopes configured)', async () => {
    expectErrorRedirect(
      await h.authorize(rawUrl(basePairs({ scope: 'openid courses:delete' })), h.login('ada')),
      'invalid_scope',
    );
    expectErrorRedirect(
      await h.authorize(rawUrl(basePairs({ scope: null })), h.login('ada')),
      'invalid_scope',
    );
  });

  it('AZ-15 a repeated parameter → invalid_request; a repeated client_id or redirect_uri → 400 page; resource may repeat', async () => {
    for (const name of ['scope', 'code_challenge', 'response_type']) {
      const pairs = basePairs();
      pairs.push([name, pairs.find(([k]) => k === name)![1]]);
      expectErrorRedirect(await h.authorize(rawUrl(pairs), h.login('ada')), 'invalid_request');
    }
    const twoStates = [...basePairs(), ['state', 'other'] as [string, string]];
    expectErrorRedirect(await h.authorize(rawUrl(twoStates), h.login('ada')), 'invalid_request', null);
    expectPage(await h.authorize(rawUrl([...basePairs(), ['client_id', client.client_id]]), h.login('ada')));
    expectPage(await h.authorize(rawUrl([...basePairs(), ['redirect_uri', CB]]), h.login('ada')));
    const twoResources: [string, string][] = [
      ...basePairs(),
      ['resource', ISSUER],
      ['resource', `${ISSUER}/mcp`],
    ];
    expect((await h.authorize(rawUrl(twoResources), h.login('ada'))).status).toBe(200);
  });

  it('AZ-16 empty values count as absent', async () => {
    const cookie = h.login('ada');
    const page = await h.authorize(rawUrl(basePairs({ state: '' })), cookie);
    expect(page.status).toBe(200);
    const done = await h.decide(consentFields(page), 'allow', cookie);
    expect(redirectParams(done).has('state')).toBe(false);
    expectErrorRedirect(
      await h.authorize(rawUrl(basePairs({ code_challenge: '' })), h.login('ada')),
      'invalid_request',
    );
  });

  it('AZ-17 unknown parameters are ignored', async () => {
    const response = await h.authorize(rawUrl([...basePairs(), ['extra', 'foobar']]), h.login('ada'));
    expect(response.status).toBe(200);
  });

  it('AZ-18 ATK-16 state comes back byte-identical, whatever it contains', async () => {
    for (const state of ['a+b%2Bc&=', 'x'.repeat(1024), 'état ☃ 東京', '<script>alert(1)</script>"\'']) {
      const cookie = h.login('ada');
      const page = await h.authorize(rawUrl(basePairs({ state })), cookie);
      expect(page.body).not.toContain('<script>alert(1)');
      const done = await h.decide(consentFields(page), 'allow', cookie);
      expect(redirectParams(done).get('state')).toBe(state);
    }
  });

  it('AZ-19 a served resource is accepted and bound to the tokens; relative, fragment or unknown → invalid_target', async () => {
    const { code } = await h.obtainCode(client, { pkce: p, extra: { resource: `${ISSUER}/mcp` } });
    const tokens = json(await h.exchange(client, code, p));
    const claims = JSON.parse(
      Buffer.from((tokens.access_token as string).split('.')[1]!, 'base64url').toString(),
    );
    expect(claims.aud).toBe(`${ISSUER}/mcp`);
    for (const bad of ['/mcp', `${ISSUER}/mcp#frag`, 'https://other.example/api']) {
      expectErrorRedirect(
        await h.authorize(rawUrl(basePairs({ resource: bad })), h.login('ada')),
        'invalid_target',
      );
    }
  });

  it('AZ-20 ATK-15 error redirects carry iss, and error_description stays in the RFC 6749 charset', async () => {
    const response = await h.authorize(
      rawUrl(basePairs({ scope: 'openid "quoted\\scope"' })),
      h.login('ada'),
    );
    const params = expectErrorRedirect(response, 'invalid_scope');
    const description = params.get('error_description')!;
    expect(description).toMatch(/^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/);
    const metadata = json(await h.send({ method: 'GET', url: '/.well-known/oauth-authorization-server' }));
    expect(params.get('iss')).toBe(metadata.issuer);
  });

  it('OIDC-05 request and request_uri → request_not_supported / request_uri_not_supported', async () => {
    expectErrorRedirect(
      await h.authorize(rawUrl([...basePairs(), ['request', 'eyJhbGciOiJub25lIn0.e30.']]), h.login('ada')),
      'request_not_supported',
    );
    expectErrorRedirect(
      await h.authorize(
        rawUrl([...basePairs(), ['request_uri', 'https://client.example/req']]),
        h.login('ada'),
      ),
      'request_uri_not_supported',
    );
  });

  it('ATK-48 oversized state and scope answer 4xx without reflecting them', async () => {
    const hugeState = await h.authorize(rawUrl(basePairs({ state: 's'.repeat(64 * 1024) })), h.login('ada'));
    expect(hugeState.status).toBeGreaterThanOrEqual(300);
    expect(hugeState.status).toBeLessThan(500);
    expect(hugeState.headers.location ?? '').not.toContain('s'.repeat(1000));
    const hugeScope = await h.authorize(rawUrl(basePairs({ scope: 'a'.repeat(100_000) })), h.login('ada'));
    expectErrorRedirect(hugeScope, 'invalid_scope');
    expect(hugeScope.headers.location!.length).toBeLessThan(2000);
  });
});

describe('authorization endpoint: OpenID Connect prompts and max_age (OIDC Core §3.1.2.1)', () => {
  it('OIDC-04 prompt=none without a session → login_required; with a session but no consent → consent_required', async () => {
    expectErrorRedirect(await h.authorize(rawUrl(basePairs({ prompt: 'none' }))), 'login_required');
    expectErrorRedirect(
      await h.authorize(rawUrl(basePairs({ prompt: 'none' })), h.login('ada')),
      'consent_required',
    );
    expectErrorRedirect(
      await h.authorize(rawUrl(basePairs({ prompt: 'none login' })), h.login('ada')),
      'invalid_request',
    );
  });

  it('OIDC-04 prompt=none with a session and remembered consent issues a code silently', async () => {
    const confidential = await h.register({ token_endpoint_auth_method: 'client_secret_post' });
    await h.obtainCode(confidential);
    const response = await h.authorize(
      h.authorizeUrl(confidential, pkce(), { prompt: 'none' }),
      h.login('ada'),
    );
    expect(redirectParams(response).get('code')).toBeTruthy();
  });

  it('OIDC-04 prompt=login forces a fresh login even with a session, and resumes after it', async () => {
    const cookie = h.login('ada');
    h.clock.advance(30);
    const first = await h.authorize(h.authorizeUrl(client, p, { prompt: 'login' }), cookie);
    expect(first.status).toBe(303);
    const login = new URL(first.headers.location!, ISSUER);
    expect(login.pathname).toBe('/login');
    expect(login.searchParams.get('reauthenticate')).toBe('1');
    const returnTo = login.searchParams.get('return_to')!.slice(ISSUER.length);
    // Coming back without logging in again goes back to the login page.
    const stale = await h.authorize(returnTo, cookie);
    expect(new URL(stale.headers.location!, ISSUER).pathname).toBe('/login');
    h.clock.advance(5);
    const fresh = await h.authorize(returnTo, h.login('ada'));
    expect(fresh.status).toBe(200);
  });

  it('OIDC-04 max_age forces a login when the session is older, and auth_time reports the login', async () => {
    h.login('ada');
    const cookie = 'user=ada';
    h.clock.advance(120);
    const old = await h.authorize(h.authorizeUrl(client, p, { max_age: '60' }), cookie);
    expect(new URL(old.headers.location!, ISSUER).pathname).toBe('/login');
    const young = await h.authorize(h.authorizeUrl(client, pkce(), { max_age: '600' }), cookie);
    expect(young.status).toBe(200);
    expectErrorRedirect(
      await h.authorize(h.authorizeUrl(client, p, { max_age: '-1' }), cookie),
      'invalid_request',
    );
  });

  it('OIDC-04 display, ui_locales, claims_locales, acr_values and login_hint are accepted', async () => {
    const first = await h.authorize(
      h.authorizeUrl(client, p, {
        display: 'popup',
        ui_locales: 'fr-CA en',
        claims_locales: 'fr',
        acr_values: 'urn:mace:incommon:iap:silver',
        login_hint: 'ada@example.com',
      }),
    );
    expect(first.status).toBe(303);
    expect(new URL(first.headers.location!, ISSUER).searchParams.get('login_hint')).toBe('ada@example.com');
    const page = await h.authorize(
      h.authorizeUrl(client, p, { display: 'page', ui_locales: 'fr-CA en' }),
      h.login('ada'),
    );
    expect(page.status).toBe(200);
    expect(page.body).toContain('lang="fr-CA"');
  });

  it('a resumed request belongs to the first user who signed in; another user cannot take it over', async () => {
    const first = await h.authorize(h.authorizeUrl(client, p));
    const returnTo = new URL(first.headers.location!, ISSUER).searchParams
      .get('return_to')!
      .slice(ISSUER.length);
    const page = await h.authorize(returnTo, h.login('ada'));
    expect(page.status).toBe(200);
    const hijack = await h.authorize(returnTo, h.login('mallory'));
    expectErrorRedirect(hijack, 'access_denied');
  });

  it('an unknown or already completed request_id shows a page', async () => {
    expectPage(await h.authorize('/oauth/authorize?request_id=unknown', h.login('ada')));
  });
});

describe('consent form security (RFC 6749 §10.12, §10.13; RFC 9700 §4.16)', () => {
  async function openConsent() {
    const cookie = h.login('ada');
    const page = await h.authorize(h.authorizeUrl(client, p), cookie);
    return { cookie, page, fields: consentFields(page) };
  }

  it('AZ-21 ATK-27 ATK-44 consent and error pages forbid framing, referrers, caching and outside resources', async () => {
    const { page } = await openConsent();
    const error = await h.authorize(rawUrl(basePairs({ client_id: 'nope' })));
    for (const response of [page, error]) {
      const csp = response.headers['content-security-policy']!;
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("default-src 'none'");
      expect(response.headers['x-frame-options']).toBe('DENY');
      expect(response.headers['referrer-policy']).toBe('no-referrer');
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.body).not.toMatch(/(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i);
      expect(response.body).not.toMatch(/<script/i);
    }
    // The consent form may post to the issuer and be redirected to the client's loopback origin only.
    expect(page.headers['content-security-policy']).toContain("form-action 'self' http://127.0.0.1:49152");
  });

  it('the inline style is exactly the one whose hash the CSP allows', () => {
    const hash = createHash('sha256').update(PAGE_STYLE).digest('base64');
    expect(PAGE_STYLE_HASH).toBe(`'sha256-${hash}'`);
  });

  it('ATK-45 escapes a hostile client_name on the consent page', async () => {
    const hostile = await h.register({ client_name: '<img src=x onerror=alert(1)>"\'&' });
    const page = await h.authorize(h.authorizeUrl(hostile, p), h.login('ada'));
    expect(page.body).not.toContain('<img src=x');
    expect(page.body).toContain('&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;');
  });

  it('ATK-42 shows the redirect host:port with a loopback warning', async () => {
    const { page } = await openConsent();
    expect(page.body).toMatch(/a program on this computer/);
    expect(page.body).toContain('<code>127.0.0.1:49152</code>');
  });

  it('AZ-22 ATK-26 a missing, foreign or mismatched CSRF token, or a cross-site Origin, issues no code', async () => {
    const a = await openConsent();
    const codes = () => h.events.filter((e) => e.type === 'code.issued').length;
    const before = codes();
    const { csrf_token: _omit, ...noToken } = a.fields;
    expect((await h.decide(noToken, 'allow', a.cookie)).status).toBe(400);
    expect((await h.decide({ ...a.fields, csrf_token: 'forged' }, 'allow', a.cookie)).status).toBe(403);
    const crossSite = await h.decide(a.fields, 'allow', a.cookie, { origin: 'https://evil.example' });
    expect(crossSite.status).toBe(403);
    expect((await h.decide(a.fields, 'allow', a.cookie, { 'sec-fetch-site': 'cross-site' })).status).toBe(
      403,
    );
    // Another user's session with this user's form.
    expect((await h.decide(a.fields, 'allow', h.login('mallory'))).status).toBe(403);
    // This session's token with another request's id.
    const b = await openConsent();
    expect(
      (await h.decide({ ...a.fields, request_id: b.fields.request_id! }, 'allow', a.cookie)).status,
    ).toBe(403);
    // Not signed in.
    expect((await h.decide(a.fields, 'allow', '')).status).toBe(403);
    expect(codes()).toBe(before);
    for (const response of [crossSite]) expect(response.headers.location).toBeUndefined();
    // The genuine submission still works, once.
    const ok = await h.decide(a.fields, 'allow', a.cookie);
    expect(redirectParams(ok).get('code')).toBeTruthy();
    expect((await h.decide(a.fields, 'allow', a.cookie)).status).toBe(400);
  });

  it('AZ-22 a same-origin post with Origin: null (sent under Referrer-Policy: no-referrer) is decided by the CSRF token', async () => {
    // Browsers post `Origin: null` from a page with `Referrer-Policy: no-referrer`, as the consent page is.
    const a = await openConsent();
    const forged = await h.decide({ ...a.fields, csrf_token: 'forged' }, 'allow', a.cookie, {
      origin: 'null',
    });
    expect(forged.status).toBe(403);
    const crossSite = await h.decide(a.fields, 'allow', a.cookie, {
      origin: 'null',
      'sec-fetch-site': 'cross-site',
    });
    expect(crossSite.status).toBe(403);
    const ok = await h.decide(a.fields, 'allow', a.cookie, {
      origin: 'null',
      'sec-fetch-site': 'same-origin',
    });
    expect(ok.status).toBe(303);
    expect(redirectParams(ok).get('code')).toBeTruthy();
  });

  it('AZ-22 the form is bound to the host session when the host reports one', async () => {
    const cookie = `${h.login('ada')}; session=s1`;
    const page = await h.authorize(h.authorizeUrl(client, p), cookie);
    const other = await h.decide(consentFields(page), 'allow', `${h.login('ada')}; session=s2`);
    expect(other.status).toBe(403);
  });

  it('ATK-22 scopes added to the consent form are ignored: the grant is what was requested and allowed', async () => {
    const { cookie, fields } = await openConsent();
    const response = await h.send({
      method: 'POST',
      url: '/oauth/authorize/decision',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: ISSUER },
      body: form({ ...fields, decision: 'allow', scope: 'openid courses:read account:write' }),
    });
    const code = redirectParams(response).get('code')!;
    const tokens = json(await h.exchange(client, code, p));
    expect(tokens.scope).toBe('openid profile email courses:read');
  });

  it('the user may grant only what the scope policy allows them', async () => {
    const restricted = await Harness.start({
      options: {
        scopePolicy: (await import('../../src/scopes/policy.js')).createScopePolicy({
          registry: (await import('../fixtures/course-school-scopes.js')).courseSchoolScopes,
          grantable: (userId, _client, scope) =>
            userId === 'grace' ? scope.filter((s) => !s.endsWith(':write')) : scope,
        }),
      },
    });
    const c = await restricted.register();
    const { code, pkce: q } = await restricted.obtainCode(c, {
      user: 'grace',
      extra: { scope: 'openid courses:read courses:write' },
    });
    expect(json(await restricted.exchange(c, code, q)).scope).toBe('openid courses:read');
    const denied = await restricted.authorize(
      restricted.authorizeUrl(c, pkce(), { scope: 'courses:write' }),
      restricted.login('grace'),
    );
    expect(redirectParams(denied).get('error')).toBe('access_denied');
    await restricted.close();
  });

  it('AZ-25 sends no CORS headers, even to a request with an Origin', async () => {
    const response = await h.send({
      method: 'GET',
      url: h.authorizeUrl(client, p),
      headers: { origin: 'https://evil.example', cookie: h.login('ada') },
    });
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });
});
