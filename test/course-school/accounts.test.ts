/**
 * Accounts over HTTP: the login page (labelled form, CSRF, security headers of AZ-21/ATK-27),
 * the session cookie (ATK-28), open-redirect protection, the account page and sign-out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../examples/course-school/src/accounts/passwords.js';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { cookiesOf, hiddenField, login, startTestServer } from '../helpers/course-school.js';

let app: CourseSchoolServer;

beforeAll(async () => {
  app = await startTestServer();
});
afterAll(() => app.close());

function expectSecurityHeaders(response: Response) {
  expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
  const csp = response.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("default-src 'none'");
  expect(csp).not.toContain('unsafe-inline');
  expect(response.headers.get('x-frame-options')).toBe('DENY');
  expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  expect(response.headers.get('cache-control')).toBe('no-store');
}

describe('login page', () => {
  it('is a labelled form with email, password and a submit button, and the security headers', async () => {
    const response = await fetch(`${app.issuer}/login`);
    expect(response.status).toBe(200);
    expectSecurityHeaders(response);
    const html = await response.text();
    expect(html).toContain('<label for="email">Email</label>');
    expect(html).toMatch(/<input id="email" name="email" type="email"/);
    expect(html).toContain('<label for="password">Password</label>');
    expect(html).toMatch(/<input id="password" name="password" type="password"/);
    expect(html).toContain('<button type="submit">Sign in</button>');
    // No external assets: nothing is loaded from another origin.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('signs in and returns the browser to return_to with a session cookie (ATK-28)', async () => {
    const returnTo = `${app.issuer}/oauth/authorize?client_id=abc&state=xyz`;
    const { cookie, response } = await login(app.issuer, 'ada@example.com', 'ada-lovelace', returnTo);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(returnTo);
    expect(cookie).toBeDefined();
    const header = cookiesOf(response).get('cs_session')!.header;
    expect(header).toContain('HttpOnly');
    expect(header).toContain('SameSite=Lax');
    expect(header).toContain('Path=/');
    // http loopback issuer: browsers would drop a Secure cookie, so neither Secure nor __Host- here.
    expect(header).not.toContain('Secure');
  });

  it('refuses to redirect to another origin after login (open redirect)', async () => {
    for (const target of [
      'https://evil.example/steal',
      '//evil.example/x',
      '/\\evil.example',
      'javascript:alert(1)',
    ]) {
      const { response } = await login(app.issuer, 'grace@example.com', 'grace-hopper', target);
      expect(response.status).toBe(303);
      expect(response.headers.get('location'), target).toBe(`${app.issuer}/account`);
    }
  });

  it('answers a wrong password with 401 and no session, and escapes what it echoes', async () => {
    const { cookie, response } = await login(app.issuer, 'ada@example.com', 'wrong-password');
    expect(response.status).toBe(401);
    expect(cookie).toBeUndefined();
    expect(await response.text()).toContain('Wrong email or password.');
    const tricky = await login(app.issuer, '"><script>alert(1)</script>@x.example', 'x');
    const html = await tricky.response.text();
    expect(html).not.toContain('<script>alert(1)');
    expect(html).toContain('&quot;&gt;&lt;script&gt;');
  });

  it('refuses a login POST without the CSRF token, or from another site, with 403', async () => {
    const page = await fetch(`${app.issuer}/login`);
    const html = await page.text();
    const csrf = hiddenField(html, 'csrf_token');
    const loginCookie = `cs_login=${cookiesOf(page).get('cs_login')!.value}`;
    const attempt = (headers: Record<string, string>, token: string) =>
      fetch(`${app.issuer}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ email: 'ada@example.com', password: 'ada-lovelace', csrf_token: token }),
      });
    // Same-origin requests without the CSRF cookie, or with a forged token: the token decides.
    expect((await attempt({ origin: app.issuer }, csrf)).status).toBe(403);
    expect((await attempt({ cookie: loginCookie, origin: app.issuer }, 'forged')).status).toBe(403);
    // A form post with neither Origin nor Fetch Metadata is not a browser's: refused.
    expect((await attempt({ cookie: loginCookie }, csrf)).status).toBe(403);
    expect((await attempt({ cookie: loginCookie, origin: 'https://evil.example' }, csrf)).status).toBe(403);
    expect((await attempt({ cookie: loginCookie, 'sec-fetch-site': 'cross-site' }, csrf)).status).toBe(403);
    // Under `Referrer-Policy: no-referrer` browsers post `Origin: null`: the token decides.
    expect(
      (await attempt({ cookie: loginCookie, origin: 'null', 'sec-fetch-site': 'same-origin' }, csrf)).status,
    ).toBe(303);
  });

  it('slows password guessing: after ten failures in a row from one address, the next attempts are refused with 429', async () => {
    const statuses: number[] = [];
    let last: Response | undefined;
    // An unknown account is throttled like a known one (no enumeration by behaviour).
    for (let i = 0; i < 12; i++) {
      last = (await login(app.issuer, 'mallory@example.com', `guess-${i}`)).response;
      statuses.push(last.status);
    }
    // The eleventh failure is counted and blocks the (email, address) pair for an hour.
    expect(statuses).toEqual([...Array<number>(11).fill(401), 429]);
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await last?.text()).toContain('Too many sign-in attempts.');
  });
});

describe('account page', () => {
  it('sends a visitor who is not signed in to the login page, coming back here', async () => {
    const response = await fetch(`${app.issuer}/account`, { redirect: 'manual' });
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get('location')!);
    expect(location.pathname).toBe('/login');
    expect(location.searchParams.get('return_to')).toBe(`${app.issuer}/account`);
  });

  it('shows the signed-in user, the apps they authorized, and what their role may grant', async () => {
    const { cookie } = await login(app.issuer, 'grace@example.com', 'grace-hopper');
    const response = await fetch(`${app.issuer}/account`, { headers: { cookie: cookie! } });
    expect(response.status).toBe(200);
    expectSecurityHeaders(response);
    const html = await response.text();
    expect(html).toContain('Grace Hopper');
    expect(html).toContain('You have not authorized any app yet.');
    expect(html).toContain('<code>courses:read</code>');
    expect(html).not.toContain('<code>students:read</code>');
  });

  it('does not accept a tampered session cookie', async () => {
    const { cookie } = await login(app.issuer, 'ada@example.com', 'ada-lovelace');
    const tampered = `${cookie!.slice(0, -2)}xx`;
    const response = await fetch(`${app.issuer}/account`, {
      headers: { cookie: tampered },
      redirect: 'manual',
    });
    expect(response.status).toBe(303);
  });

  it('refuses to revoke without the session CSRF token, and reports an unknown grant', async () => {
    const { cookie } = await login(app.issuer, 'ada@example.com', 'ada-lovelace');
    const page = await (await fetch(`${app.issuer}/account`, { headers: { cookie: cookie! } })).text();
    const csrf = hiddenField(page, 'csrf_token');
    const revoke = (token: string) =>
      fetch(`${app.issuer}/account/apps/revoke`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie!, origin: app.issuer },
        body: new URLSearchParams({ csrf_token: token, grant_id: 'no-such-grant' }),
      });
    expect((await revoke('forged')).status).toBe(403);
    expect((await revoke(csrf)).status).toBe(404);
  });

  it('signs out with a CSRF-protected POST that ends the session', async () => {
    const { cookie } = await login(app.issuer, 'ada@example.com', 'ada-lovelace');
    const page = await (await fetch(`${app.issuer}/account`, { headers: { cookie: cookie! } })).text();
    const logout = (token: string) =>
      fetch(`${app.issuer}/logout`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie!, origin: app.issuer },
        body: new URLSearchParams({ csrf_token: token }),
      });
    expect((await logout('forged')).status).toBe(403);
    const out = await logout(hiddenField(page, 'csrf_token'));
    expect(out.status).toBe(303);
    expect(cookiesOf(out).get('cs_session')?.header).toContain('Max-Age=0');
    // The old cookie no longer opens the account page.
    expect(
      (await fetch(`${app.issuer}/account`, { headers: { cookie: cookie! }, redirect: 'manual' })).status,
    ).toBe(303);
  });
});

describe('https issuer', () => {
  it('uses the __Host- prefix and Secure on the session cookie', async () => {
    // Reached on its socket, not through a proxy: the socket's address is an allowed host.
    const secure = await startTestServer({ ISSUER: 'https://school.example', ALLOWED_HOSTS: '127.0.0.1' });
    // No demo accounts on an https issuer: the operator creates the accounts.
    expect(secure.demo).toBe(false);
    await secure.data.createUser({
      id: 'usr_owner',
      email: 'owner@school.example',
      name: 'Owner',
      role: 'owner',
      passwordHash: await hashPassword('a long owner password'),
      createdAt: Date.now(),
    });
    try {
      // The socket is plain http on loopback (behind a TLS proxy in production); the issuer is https.
      const base = `http://${secure.address}`;
      const page = await fetch(`${base}/login`);
      const html = await page.text();
      const loginCookie = cookiesOf(page).get('__Host-cs_login')!;
      expect(loginCookie.header).toContain('Secure');
      const response = await fetch(`${base}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie: `__Host-cs_login=${loginCookie.value}`,
          origin: 'https://school.example',
        },
        body: new URLSearchParams({
          email: 'owner@school.example',
          password: 'a long owner password',
          csrf_token: hiddenField(html, 'csrf_token'),
          return_to: hiddenField(html, 'return_to'),
        }),
      });
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toBe('https://school.example/account');
      const session = cookiesOf(response).get('__Host-cs_session')!.header;
      expect(session).toContain('Secure');
      expect(session).toContain('Path=/');
      expect(session).not.toContain('Domain=');
    } finally {
      await secure.close();
    }
  });
});
