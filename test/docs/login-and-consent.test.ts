/**
 * What docs/login-and-consent.md says about the login round trip and custom consent pages, checked
 * with the guide's own code (docs/snippets/login-and-consent.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  consentPage,
  options,
  safeReturnTo,
  styledConsentPage,
} from '../../docs/snippets/login-and-consent.js';
import { consentFields, Harness, ISSUER, json, pkce, redirectParams } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('docs/login-and-consent.md', () => {
  it('a string loginUrl gets return_to, and reauthenticate=1 for prompt=login', async () => {
    harness = await Harness.start();
    const h = harness;
    const client = await h.register();
    const first = await h.authorize(h.authorizeUrl(client, pkce(), { login_hint: 'ada@example.com' }));
    expect(first.status).toBe(303);
    const login = new URL(first.headers.location!);
    expect(`${login.origin}${login.pathname}`).toBe(`${ISSUER}/login`);
    const returnTo = login.searchParams.get('return_to')!;
    expect(returnTo.startsWith(`${ISSUER}/oauth/authorize?request_id=`)).toBe(true);
    expect(login.searchParams.get('login_hint')).toBe('ada@example.com');

    // Back from the login page: the stored request resumes at the consent page.
    const cookie = h.login('ada');
    const resumed = await h.authorize(returnTo.slice(ISSUER.length), cookie);
    expect(resumed.status).toBe(200);

    // prompt=login: signed in, but not since the request started.
    h.clock.advance(5);
    const again = await h.authorize(h.authorizeUrl(client, pkce(), { prompt: 'login' }), cookie);
    expect(new URL(again.headers.location!).searchParams.get('reauthenticate')).toBe('1');
  });

  it('a loginUrl function receives the context', async () => {
    harness = await Harness.start({ options: { loginUrl: options.loginUrl } });
    const h = harness;
    const client = await h.register();
    const response = await h.authorize(
      h.authorizeUrl(client, pkce(), { login_hint: 'ada@example.com', ui_locales: 'fr en' }),
    );
    const url = new URL(response.headers.location!);
    expect(url.origin + url.pathname).toBe('https://accounts.example.com/sign-in');
    expect(url.searchParams.get('continue')).toMatch(/\/oauth\/authorize\?request_id=/);
    expect(url.searchParams.get('email')).toBe('ada@example.com');
    expect(url.searchParams.get('lang')).toBe('fr');
  });

  it('max_age: an older sign-in sends the browser to log in again', async () => {
    harness = await Harness.start();
    const h = harness;
    const client = await h.register();
    const cookie = h.login('ada');
    h.clock.advance(120);
    const stale = await h.authorize(h.authorizeUrl(client, pkce(), { max_age: '60' }), cookie);
    expect(new URL(stale.headers.location!).searchParams.get('reauthenticate')).toBe('1');
    const fresh = await h.authorize(h.authorizeUrl(client, pkce(), { max_age: '600' }), cookie);
    expect(fresh.status).toBe(200);
  });

  it('safeReturnTo refuses anything but the authorization endpoint', () => {
    expect(safeReturnTo('https://auth.example.com/oauth/authorize?request_id=x')).toBe(
      'https://auth.example.com/oauth/authorize?request_id=x',
    );
    expect(safeReturnTo('https://evil.example/oauth/authorize?')).toBe('/');
    expect(safeReturnTo('https://auth.example.com.evil.example/')).toBe('/');
  });

  it('a page returned as a string gets the library headers and completes the flow', async () => {
    harness = await Harness.start({ options: { consent: { render: consentPage } } });
    const h = harness;
    const client = await h.register({ client_name: '<script>alert(1)</script>' });
    const p = pkce();
    const cookie = h.login('ada');
    const page = await h.authorize(h.authorizeUrl(client, p), cookie);
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('<script>');
    expect(page.body).toContain('(unverified name)');
    expect(page.body).toContain('A program on this computer');
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['content-security-policy']).toContain("form-action 'self' http://127.0.0.1:49152");
    expect(page.headers['x-frame-options']).toBe('DENY');
    const decided = await h.decide(consentFields(page), 'allow', cookie);
    expect(decided.status).toBe(303);
    const code = redirectParams(decided).get('code')!;
    expect(json(await h.exchange(client, code, p)).token_type).toBe('Bearer');
  });

  it('a whole response keeps its own headers', async () => {
    harness = await Harness.start({ options: { consent: { render: styledConsentPage } } });
    const h = harness;
    const client = await h.register();
    const cookie = h.login('ada');
    const page = await h.authorize(h.authorizeUrl(client, pkce()), cookie);
    expect(page.headers['content-security-policy']).toContain("style-src 'self'");
    expect(page.body).toContain('/assets/consent.css');
    expect((await h.decide(consentFields(page), 'deny', cookie)).headers.location).toContain(
      'error=access_denied',
    );
  });
});
