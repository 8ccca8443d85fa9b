/**
 * HTML for the library's pages (consent, errors): one layout, everything escaped, no scripts, no
 * external assets, and the security headers RFC 9700 §4.16 and §4.2.4 ask for.
 * @module
 */
import { toOAuthError } from '../core/errors.js';
import type { OAuthResponse } from '../core/http.js';

const HTML_SPECIAL = /[&<>"']/;
const HTML_SPECIALS = /[&<>"']/g;
const HTML_ENTITY: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(value: string): string {
  // Most values (ids, scope names, hosts) need no escaping: one scan, and no copy.
  if (!HTML_SPECIAL.test(value)) return value;
  return value.replace(HTML_SPECIALS, (c) => HTML_ENTITY[c]!);
}

/** The only style of the pages; its hash is in the CSP (a test recomputes it). */
export const PAGE_STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f6f8;color:#1d2330}' +
  'main{max-width:34rem;margin:3rem auto;background:#fff;border-radius:12px;padding:2rem;box-shadow:0 1px 4px #0002}' +
  'h1{font-size:1.4rem;margin:0 0 1rem}code{background:#eef;padding:0 .25rem;border-radius:4px;word-break:break-all}' +
  '.host{font-size:1.25rem;font-weight:700}.muted{color:#5a6275;font-size:.9rem}' +
  '.warn{background:#fff4e5;border:1px solid #f0b35b;border-radius:8px;padding:.75rem}' +
  'ul{padding-left:1.25rem}li{margin:.25rem 0}.actions{display:flex;gap:.75rem;margin-top:1.5rem}' +
  'button{font:inherit;padding:.6rem 1.4rem;border-radius:8px;border:1px solid #9aa3b5;background:#fff;cursor:pointer}' +
  'button.primary{background:#2450d9;border-color:#2450d9;color:#fff}';

/** `sha256-` source of {@link PAGE_STYLE} for `style-src`. */
export const PAGE_STYLE_HASH = "'sha256-3RneUDPR+N8+iBqTtarmjouLbWK0wmUWKSexn8E57dw='";

/**
 * Headers of every library page. `formActions` are the origins a form on the page may post to or
 * be redirected to: Chromium applies `form-action` to the redirect after the POST, so the consent
 * page lists the client's redirect origin besides `'self'`.
 */
export function pageHeaders(formActions: readonly string[] = []): Record<string, string> {
  const formAction = ["'self'", ...formActions].join(' ');
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': `default-src 'none'; style-src ${PAGE_STYLE_HASH}; img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
    pragma: 'no-cache',
  };
}

/** A whole page around `body` (already escaped HTML). */
export function layout(title: string, body: string, lang = 'en'): string {
  return `<!doctype html><html lang="${escapeHtml(lang)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${PAGE_STYLE}</style></head><body><main>${body}</main></body></html>`;
}

/** The page shown when the authorization request cannot be redirected back (bad client or redirect URI). */
export function errorPage(
  status: number,
  serviceName: string,
  code: string,
  description: string,
): OAuthResponse {
  const body =
    `<h1>${escapeHtml(serviceName)}: the request cannot be completed</h1>` +
    `<p>${escapeHtml(description)}</p>` +
    `<p class="muted">Error: <code>${escapeHtml(code)}</code>. Return to the application and start again.</p>`;
  return { status, headers: pageHeaders(), body: layout('Authorization error', body) };
}

/** The error page for anything thrown before a redirect target is known; keeps the error's headers (`Retry-After`, `Allow`). */
export function errorPageFor(serviceName: string, error: unknown): OAuthResponse {
  const e = toOAuthError(error);
  const status = e.status >= 500 || e.status === 429 || e.status === 405 || e.status === 403 ? e.status : 400;
  const page = errorPage(status, serviceName, e.code, e.description ?? 'The request is invalid.');
  return { ...page, headers: { ...page.headers, ...e.headers } };
}
