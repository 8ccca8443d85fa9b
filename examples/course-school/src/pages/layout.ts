/**
 * The layout of the server's own pages (home, login, account), rendered with `hono/html`: every
 * interpolated value is escaped unless it is itself `html` (escaping by construction). The headers
 * every page carries come from Hono's secure-headers middleware (AZ-21, ATK-27, ATK-44): no framing,
 * no referrer, no caching, no external assets. The only style is inline and allowed by its hash, so
 * the CSP needs no `unsafe-inline`.
 * @module
 */
import { createHash } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { html, raw } from 'hono/html';
import { secureHeaders } from 'hono/secure-headers';

/** What `html` returns: escaped HTML, possibly still resolving. */
export type Html = ReturnType<typeof html>;

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#111;background:#f7f7f8}
main{max-width:46rem;margin:2rem auto;padding:0 1rem}
header{background:#1d4ed8;color:#fff;padding:.75rem 1rem}
header a{color:#fff;margin-right:1rem;text-decoration:none}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem}
.card{background:#fff;border:1px solid #ddd;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input[type=email],input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}
button{margin-top:1rem;padding:.5rem 1rem;font-size:1rem;cursor:pointer}
.error{color:#b91c1c;font-weight:600}.muted{color:#555;font-size:.9rem}
code{background:#eef;padding:0 .25rem;border-radius:3px}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.35rem;border-bottom:1px solid #eee}
form.inline{display:inline;margin:0}form.inline button{margin:0}
`;

const STYLE_SOURCE = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

/**
 * The security headers of every page: a CSP that allows nothing but the page's own style and forms
 * posting to this origin, no framing (CSP and `X-Frame-Options`), no referrer, no caching, and
 * HSTS when the issuer is https.
 */
export function pageHeaders(https: boolean): MiddlewareHandler {
  const secure = secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      styleSrc: [STYLE_SOURCE],
      imgSrc: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
    xFrameOptions: 'DENY',
    referrerPolicy: 'no-referrer',
    strictTransportSecurity: https ? 'max-age=31536000' : false,
  });
  return async (c, next) => {
    await secure(c, next);
    c.res.headers.set('cache-control', 'no-store');
  };
}

/** Where the navigation bar says who is signed in. */
export interface PageOptions {
  readonly status?: 200 | 400 | 401 | 403 | 404 | 413 | 429 | 503;
  readonly user?: { readonly name: string } | null;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A whole page in the site's layout. */
export function page(
  c: Context,
  title: string,
  body: Html,
  options: PageOptions = {},
): Response | Promise<Response> {
  const nav = html`<header><a href="/"><strong>Lovelace School</strong></a><a href="/account">Account</a>${
    options.user ? html`<span>Signed in as ${options.user.name}</span>` : html`<a href="/login">Sign in</a>`
  }</header>`;
  const document = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style>${raw(STYLE)}</style></head>
<body>${nav}<main>${body}</main></body></html>`;
  return c.html(document, options.status ?? 200, {
    'content-type': 'text/html; charset=utf-8',
    ...options.headers,
  });
}

/**
 * The `400` page of a request that cannot be served as sent (a malformed form, a hostile character
 * in a field or the query); `message` says what was wrong (it is escaped like any page text).
 */
export function badRequest(c: Context, message: string): Response | Promise<Response> {
  return page(c, 'Bad request', html`<h1>Bad request</h1><p class="error">${message}</p>`, { status: 400 });
}
