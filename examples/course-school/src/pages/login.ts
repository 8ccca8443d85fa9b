/**
 * The login page (`loginUrl` of the library): the authorization endpoint sends browsers here with
 * `return_to`; after a good password they go back there. The form is protected against CSRF by
 * Hono's CSRF middleware (Origin / Fetch Metadata, in `pages/app.ts`) and by a signed double-submit
 * token: a random nonce in a signed, HttpOnly cookie and in the form (there is no session yet),
 * which expires ten minutes after the form was served.
 * Attempts go through the login guard (`accounts/login-guard.ts`).
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { deleteCookie, generateSignedCookie, getSignedCookie } from 'hono/cookie';
import { html } from 'hono/html';
import { validator } from 'hono/validator';
import { z } from 'zod';
import type { LoginGuard } from '../accounts/login-guard.js';
import { verifyLogin } from '../accounts/passwords.js';
import { type SessionManager, safeEqual } from '../accounts/sessions.js';
import { text } from '../api/schemas.js';
import type { DataStore } from '../data/store.js';
import type { DemoAccount } from '../seed.js';
import { badRequest, type Html, type PageOptions, page } from './layout.js';
import { safeReturnTo } from './return-to.js';

/** What the login pages need. */
export interface LoginDeps {
  readonly data: DataStore;
  readonly sessions: SessionManager;
  readonly issuer: string;
  readonly guard: LoginGuard;
  /** The rate-limit key of the request's client (trusted proxies taken into account). */
  clientKey(c: Context): string;
  /** The demo accounts to list on the page; empty when demo data is off. */
  readonly demoAccounts: readonly DemoAccount[];
  now(): number;
}

/** The path of the login page. */
export const LOGIN_PATH = '/login';

/** How long a login form may be posted after it was served, in seconds: its CSRF pair expires then. */
export const LOGIN_FORM_TTL_SECONDS = 600;

/** The name of the login form's CSRF cookie (`__Host-` on an https issuer). */
export function loginCookieName(secure: boolean): string {
  return secure ? '__Host-cs_login' : 'cs_login';
}

/**
 * The nonce of a login form: when it was served (epoch ms) and 18 random bytes. It goes in the
 * form and, signed, in the cookie, so the time cannot be changed.
 */
function newNonce(now: number): string {
  return `${now}.${randomBytes(18).toString('base64url')}`;
}

/** Whether a nonce from the signed cookie was served within {@link LOGIN_FORM_TTL_SECONDS} of `now`. */
function nonceFresh(nonce: string, now: number): boolean {
  const issued = Number(nonce.slice(0, nonce.indexOf('.')));
  return Number.isSafeInteger(issued) && issued <= now && now - issued <= LOGIN_FORM_TTL_SECONDS * 1000;
}

/**
 * Fields of the login form. A field sent twice arrives as an array and is refused (400), and so is
 * one holding NUL, an unpaired surrogate or a non-character (ABU-05: before the email reaches the
 * database, which cannot store NUL); a missing one is empty, so a missing token is refused like a
 * wrong one (403).
 */
const loginForm = z.object({
  email: text().max(1000).default(''),
  password: text().max(1000).default(''),
  csrf_token: text().max(100).default(''),
  return_to: text().max(8000).optional(),
});

/** Fields of the forms of a session (sign-out, revoke), checked like the login form's. */
export const sessionForm = z.object({
  csrf_token: text().max(100).default(''),
  grant_id: text().max(200).optional(),
});

/**
 * A form validator that refuses a malformed form with a 400 page naming the first problem
 * (`email contains U+0000, which is not accepted (...)`).
 */
export function formOf<S extends z.ZodType>(schema: S) {
  return validator('form', (value, c) => {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data as z.output<S>;
    const issue = parsed.error.issues[0];
    const problem = issue === undefined ? '' : `: ${issue.path.map(String).join('.')} ${issue.message}`;
    return badRequest(c, `The form was not filled in as expected${problem}.`);
  });
}

/** Adds `GET /login`, `POST /login` and `POST /logout`. */
export function addLoginPages(app: Hono, deps: LoginDeps): void {
  const home = `${deps.issuer}/account`;
  const csrfCookie = loginCookieName(deps.sessions.secure);
  const { secret } = deps.sessions;

  async function form(
    c: Context,
    options: { returnTo: string; email: string; error?: string; reauthenticate?: boolean } & PageOptions,
  ): Promise<Response> {
    const nonce = newNonce(deps.now());
    const demo: Html | string =
      deps.demoAccounts.length === 0
        ? ''
        : html`<div class="card muted"><p>Demo accounts of this reference server:</p><ul>${deps.demoAccounts.map(
            (a) =>
              html`<li><code>${a.email}</code> / <code>${a.password}</code> (${a.role === 'owner' ? 'school owner' : 'student'})</li>`,
          )}</ul></div>`;
    const body = html`<h1>Sign in</h1>
<div class="card">
${options.reauthenticate ? html`<p>The application asked you to confirm it is you: sign in again.</p>` : ''}
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
<form method="post" action="${LOGIN_PATH}">
<input type="hidden" name="csrf_token" value="${nonce}">
<input type="hidden" name="return_to" value="${options.returnTo}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${options.email}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="200">
<button type="submit">Sign in</button>
</form>
</div>
${demo}`;
    const cookie = await generateSignedCookie(
      csrfCookie,
      nonce,
      secret,
      deps.sessions.cookieOptions(LOGIN_FORM_TTL_SECONDS),
    );
    return page(c, 'Sign in', body, {
      ...options,
      headers: { ...options.headers, 'set-cookie': cookie },
    });
  }

  app.get(LOGIN_PATH, (c) =>
    form(c, {
      returnTo: safeReturnTo(c.req.query('return_to'), deps.issuer, home),
      email: c.req.query('login_hint') ?? '',
      reauthenticate: c.req.query('reauthenticate') === '1',
    }),
  );

  app.post(LOGIN_PATH, formOf(loginForm), async (c) => {
    const fields = c.req.valid('form');
    const returnTo = safeReturnTo(fields.return_to, deps.issuer, home);
    const email = fields.email.trim().toLowerCase().slice(0, 254);
    const nonce = await getSignedCookie(c, secret, csrfCookie);
    if (typeof nonce !== 'string' || !safeEqual(fields.csrf_token, nonce) || !nonceFresh(nonce, deps.now())) {
      return form(c, {
        returnTo,
        email,
        status: 403,
        error: 'The form expired or came from another site. Please try again.',
      });
    }
    const outcome = await deps.guard.attempt(email, deps.clientKey(c), () =>
      verifyLogin(deps.data, email, fields.password),
    );
    switch (outcome.kind) {
      case 'throttled':
        return form(c, {
          returnTo,
          email,
          status: 429,
          headers: { 'retry-after': String(outcome.retryAfterSeconds) },
          error: `Too many sign-in attempts. Try again in ${Math.ceil(outcome.retryAfterSeconds / 60)} minutes.`,
        });
      case 'busy':
        return form(c, {
          returnTo,
          email,
          status: 503,
          headers: { 'retry-after': String(outcome.retryAfterSeconds) },
          error: 'The server is busy. Try again in a moment.',
        });
      case 'wrong':
        return form(c, { returnTo, email, status: 401, error: 'Wrong email or password.' });
      case 'ok': {
        const { setCookie } = await deps.sessions.create(outcome.value, deps.now());
        c.header('set-cookie', setCookie, { append: true });
        deleteCookie(c, csrfCookie, deps.sessions.cookieOptions(0));
        return c.redirect(returnTo, 303);
      }
    }
  });

  app.post('/logout', formOf(sessionForm), async (c) => {
    const signedIn = await deps.sessions.read(c.req.header('cookie'), deps.now());
    if (signedIn === null) return c.redirect(`${deps.issuer}/`, 303);
    if (!safeEqual(c.req.valid('form').csrf_token, signedIn.session.csrfToken)) {
      return page(
        c,
        'Sign out',
        html`<h1>Sign out</h1><p class="error">The form expired. Go back and try again.</p>`,
        {
          status: 403,
        },
      );
    }
    c.header('set-cookie', await deps.sessions.destroy(signedIn));
    return c.redirect(`${deps.issuer}/`, 303);
  });
}
