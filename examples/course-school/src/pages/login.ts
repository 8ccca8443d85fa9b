/**
 * The login page (`loginUrl` of the library): the authorization endpoint sends browsers here with
 * `return_to`; after a good password they go back there. The form is protected against CSRF by a
 * token bound to a short-lived cookie (there is no session yet), and by an Origin check.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { LoginThrottle } from '../accounts/login-throttle.js';
import { verifyNothing, verifyPassword } from '../accounts/passwords.js';
import { type SessionManager, safeEqual } from '../accounts/sessions.js';
import type { DataStore } from '../data/store.js';
import { readForm } from '../http/body.js';
import { readCookie, serializeCookie } from '../http/cookies.js';
import { crossSite, type Endpoint } from '../http/endpoint.js';
import { type HttpResponse, seeOther } from '../http/response.js';
import { DEMO_ACCOUNTS } from '../seed.js';
import { html, page } from './html.js';
import { safeReturnTo } from './return-to.js';

/** What the login pages need. */
export interface LoginDeps {
  readonly data: DataStore;
  readonly sessions: SessionManager;
  readonly issuer: string;
  now(): number;
}

/** The path of the login page. */
export const LOGIN_PATH = '/login';

/** The login and logout endpoints. */
export function loginEndpoints(deps: LoginDeps): { show: Endpoint; submit: Endpoint; logout: Endpoint } {
  const throttle = new LoginThrottle();
  const home = `${deps.issuer}/account`;
  const csrfCookie = deps.sessions.secure ? '__Host-cs_login' : 'cs_login';
  const cookie = (value: string, maxAge: number) =>
    serializeCookie(csrfCookie, value, {
      httpOnly: true,
      secure: deps.sessions.secure,
      sameSite: 'Lax',
      maxAge,
    });
  const tokenFor = (nonce: string) => deps.sessions.sign(`login:${nonce}`);

  function form(options: {
    returnTo: string;
    email: string;
    error?: string;
    status?: number;
    nonce?: string;
    reauthenticate?: boolean;
  }): HttpResponse {
    const nonce = options.nonce ?? randomBytes(18).toString('base64url');
    const body = html`<h1>Sign in</h1>
<div class="card">
${options.reauthenticate ? html`<p>The application asked you to confirm it is you: sign in again.</p>` : ''}
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
<form method="post" action="${LOGIN_PATH}">
<input type="hidden" name="csrf_token" value="${tokenFor(nonce)}">
<input type="hidden" name="return_to" value="${options.returnTo}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${options.email}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="200">
<button type="submit">Sign in</button>
</form>
</div>
<div class="card muted"><p>Demo accounts of this reference server:</p><ul>${DEMO_ACCOUNTS.map(
      (a) =>
        html`<li><code>${a.email}</code> / <code>${a.password}</code> (${a.role === 'owner' ? 'school owner' : 'student'})</li>`,
    )}</ul></div>`;
    return page('Sign in', body, {
      ...(options.status === undefined ? {} : { status: options.status }),
      headers: { 'set-cookie': cookie(nonce, 1800) },
    });
  }

  return {
    async show({ query }) {
      return form({
        returnTo: safeReturnTo(query.get('return_to'), deps.issuer, home),
        email: query.get('login_hint') ?? '',
        reauthenticate: query.get('reauthenticate') === '1',
      });
    },

    async submit({ req }) {
      const fields = await readForm(req);
      const returnTo = safeReturnTo(fields.get('return_to'), deps.issuer, home);
      const email = (fields.get('email') ?? '').trim().toLowerCase().slice(0, 254);
      const nonce = readCookie(req.headers.cookie, csrfCookie);
      const token = fields.get('csrf_token') ?? '';
      if (crossSite(req, deps.issuer) || nonce === undefined || !safeEqual(token, tokenFor(nonce))) {
        return form({
          returnTo,
          email,
          status: 403,
          error: 'The form expired or came from another site. Please try again.',
        });
      }
      const now = deps.now();
      const wait = throttle.retryAfter(email, now);
      if (wait > 0) {
        const response = form({
          returnTo,
          email,
          status: 429,
          error: `Too many attempts. Try again in ${Math.ceil(wait / 60)} minutes.`,
        });
        return { ...response, headers: { ...response.headers, 'retry-after': String(wait) } };
      }
      const password = fields.get('password') ?? '';
      const user = await deps.data.getUserByEmail(email);
      const ok =
        user === null ? await verifyNothing(password) : await verifyPassword(password, user.passwordHash);
      if (user === null || !ok) {
        throttle.fail(email, now);
        return form({ returnTo, email, status: 401, error: 'Wrong email or password.' });
      }
      throttle.succeed(email);
      const { setCookie } = await deps.sessions.create(user, now);
      return seeOther(returnTo, { 'set-cookie': [setCookie, cookie('', 0)] });
    },

    async logout({ req }) {
      const fields = await readForm(req);
      const signedIn = await deps.sessions.read(req.headers.cookie, deps.now());
      if (signedIn === null) return seeOther(`${deps.issuer}/`);
      if (
        crossSite(req, deps.issuer) ||
        !safeEqual(fields.get('csrf_token') ?? '', signedIn.session.csrfToken)
      ) {
        return page(
          'Sign out',
          html`<h1>Sign out</h1><p class="error">The form expired. Go back and try again.</p>`,
          {
            status: 403,
          },
        );
      }
      return seeOther(`${deps.issuer}/`, { 'set-cookie': await deps.sessions.destroy(signedIn) });
    },
  };
}
