/**
 * Cookies of the reference server (ABU-06). On an `http://` loopback issuer, a page on another
 * local port can set cookies for this host (cookies ignore ports): a second `cs_session` with a
 * longer Path is sent first, and would sign the victim into the attacker's account. A request
 * carrying two session (or login) cookies of one name is refused before the library and the pages
 * read either. The login form's CSRF pair expires ten minutes after the form was served.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { LOGIN_FORM_TTL_SECONDS } from '../../examples/course-school/src/pages/login.js';
import { cookiesOf, hiddenField, login, startTestServer } from '../helpers/course-school.js';

let app: CourseSchoolServer;
beforeAll(async () => {
  app = await startTestServer();
});
afterAll(() => app.close());
afterEach(() => {
  vi.useRealTimers();
});

describe('two cookies of one name', () => {
  it('a request with two session cookies is refused 400, on the pages and at the authorization endpoint', async () => {
    const victim = await login(app.issuer, 'ada@example.com', 'ada-lovelace');
    const attacker = await login(app.issuer, 'grace@example.com', 'grace-hopper');
    expect(victim.cookie).toBeDefined();
    expect(attacker.cookie).toBeDefined();
    // The planted cookie (longer Path) comes first, as a browser sends it.
    const both = `${attacker.cookie}; ${victim.cookie}`;
    for (const path of ['/account', '/oauth/authorize?response_type=code&client_id=x', '/login']) {
      const response = await fetch(`${app.issuer}${path}`, { headers: { cookie: both }, redirect: 'manual' });
      expect(response.status, path).toBe(400);
      expect(await response.text()).toContain('two sign-in cookies');
    }
    // Each cookie alone is its own account, as before.
    const page = await fetch(`${app.issuer}/account`, {
      headers: { cookie: victim.cookie! },
      redirect: 'manual',
    });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('ada@example.com');
  });

  it('two login cookies are refused too; other cookies of one name are not our business', async () => {
    const twice = await fetch(`${app.issuer}/login`, { headers: { cookie: 'cs_login=a; cs_login=b' } });
    expect(twice.status).toBe(400);
    const other = await fetch(`${app.issuer}/login`, { headers: { cookie: 'theme=dark; theme=light' } });
    expect(other.status).toBe(200);
  });
});

describe('the login CSRF pair expires', () => {
  async function postLogin(form: Response, html: string) {
    const cookie = [...cookiesOf(form)].map(([name, c]) => `${name}=${c.value}`).join('; ');
    return fetch(`${app.issuer}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie,
        origin: new URL(app.issuer).origin,
      },
      body: new URLSearchParams({
        email: 'ada@example.com',
        password: 'ada-lovelace',
        csrf_token: hiddenField(html, 'csrf_token'),
        return_to: hiddenField(html, 'return_to'),
      }),
    });
  }

  it(`a form posted more than ${LOGIN_FORM_TTL_SECONDS / 60} minutes after it was served is refused 403`, async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const form = await fetch(`${app.issuer}/login`);
    const html = await form.text();
    expect(cookiesOf(form).get('cs_login')?.header).toContain(`Max-Age=${LOGIN_FORM_TTL_SECONDS}`);
    vi.setSystemTime(Date.now() + LOGIN_FORM_TTL_SECONDS * 1000 + 1000);
    const late = await postLogin(form, html);
    expect(late.status).toBe(403);
    expect(await late.text()).toContain('The form expired');
  });

  it('the same form posted within the window signs in', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const form = await fetch(`${app.issuer}/login`);
    const html = await form.text();
    vi.setSystemTime(Date.now() + (LOGIN_FORM_TTL_SECONDS - 60) * 1000);
    const inTime = await postLogin(form, html);
    expect(inTime.status).toBe(303);
  });
});
