/**
 * The server's own pages as a Hono app: home, login, sign-out and the account page. Every page gets
 * the security headers of `layout.ts` and refuses a query parameter holding NUL, an unpaired
 * surrogate or a non-character with a 400 page (ABU-05; the form fields are checked by their
 * schemas, `login.ts`). Every form POST is read within {@link MAX_FORM_BYTES} first (a larger one
 * is answered 413, after its rest was read so the client sees the answer: `edge/body-limit.ts`),
 * then passes Hono's CSRF middleware (the request's `Origin` must be the issuer's, or its
 * `Sec-Fetch-Site` `same-origin`) before its own token check. Under `Referrer-Policy: no-referrer`
 * browsers post `Origin: null`, and Fetch Metadata decides.
 * @module
 */
import { Hono } from 'hono';
import { csrf } from 'hono/csrf';
import { html } from 'hono/html';
import { HTTPException } from 'hono/http-exception';
import { classifyStorageFailure, STORAGE_RETRY_AFTER_SECONDS } from 'portcullis';
import { logFailure } from '../api/errors.js';
import { bodyWithin } from '../edge/body-limit.js';
import { hostileInQuery } from '../edge/hostile-text.js';
import { type AccountDeps, addAccountPages } from './account.js';
import { addHomePage, type HomeDeps } from './home.js';
import { badRequest, page, pageHeaders } from './layout.js';
import { addLoginPages, type LoginDeps } from './login.js';

/** Everything the pages need. */
export type PagesDeps = LoginDeps & AccountDeps & HomeDeps;

/** The paths of the pages (the middleware below applies to these only). */
const PAGES = ['/', '/login', '/logout', '/account', '/account/*'] as const;

/**
 * Largest form body a page accepts. The forms a browser posts here are well under 1 KiB (the login
 * form's `return_to` is the authorization endpoint with a `request_id`).
 */
export const MAX_FORM_BYTES = 16 * 1024;

/** The paths that take a form. */
const FORMS = ['/login', '/logout', '/account/apps/revoke'];

/** Creates the pages app. */
export function createPagesApp(deps: PagesDeps): Hono {
  const app = new Hono();
  const headers = pageHeaders(deps.issuer.startsWith('https:'));
  const sameSite = csrf({ origin: new URL(deps.issuer).origin });
  for (const path of PAGES) {
    app.use(path, headers);
    app.use(path, async (c, next) => {
      const problem = hostileInQuery(c.req.queries());
      if (problem === undefined) return next();
      return badRequest(c, `The address of this page is not valid: ${problem}.`);
    });
  }
  // Before anything reads the form, CSRF included: an unbounded form is never parsed.
  app.on(
    'POST',
    FORMS,
    bodyWithin(MAX_FORM_BYTES, (c, status) =>
      status === 413
        ? page(c, 'Too large', html`<h1>Too large</h1><p class="error">The form is too large.</p>`, {
            status: 413,
          })
        : badRequest(c, 'The form could not be read.'),
    ),
  );
  app.on('POST', FORMS, sameSite);
  addHomePage(app, deps);
  addLoginPages(app, deps);
  addAccountPages(app, deps);
  app.onError((error, c) => {
    if (error instanceof HTTPException && error.status === 403) {
      return page(
        c,
        'Forbidden',
        html`<h1>Forbidden</h1><p class="error">This form came from another site.</p>`,
        {
          status: 403,
        },
      );
    }
    // Logged once, as a JSON line without the statement or its parameters, under the id the page carries.
    const requestId = logFailure(c.req.method, c.req.path, error);
    if (requestId !== undefined) c.header('x-request-id', requestId);
    // The database unreachable for a moment: 503 with Retry-After, as the library and the API answer.
    if (classifyStorageFailure(error) !== undefined) {
      return page(
        c,
        'Temporarily unavailable',
        html`<h1>Temporarily unavailable</h1><p class="error">The server cannot reach its database right now. Try again in a moment.</p>`,
        { status: 503, headers: { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) } },
      );
    }
    return c.html(
      '<!doctype html><title>Error</title><p>The server could not complete the request.</p>',
      500,
    );
  });
  return app;
}
