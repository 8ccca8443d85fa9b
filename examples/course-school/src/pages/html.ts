/**
 * HTML for the server's own pages: escaping, one layout, and the security headers every page
 * carries (CONFORMANCE AZ-21, ATK-27, ATK-44): no framing, no referrer, no caching, no external
 * assets. The only style is inline and allowed by its hash, so the CSP needs no `unsafe-inline`.
 * @module
 */
import { createHash } from 'node:crypto';
import type { HttpHeaders, HttpResponse } from '../http/response.js';

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(value: string | number): string {
  return String(value).replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * A template tag that escapes every interpolated value unless it is already {@link SafeHtml}.
 * Arrays are joined. This makes forgetting to escape impossible rather than unlikely.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}

/** HTML that is already escaped. */
export class SafeHtml {
  constructor(readonly value: string) {}
}

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

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/** Headers of every HTML page of this server. */
export const HTML_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
});

/** A whole page in the site's layout. */
export function page(
  title: string,
  body: SafeHtml,
  options: { status?: number; headers?: HttpHeaders; user?: { name: string } | null } = {},
): HttpResponse {
  const nav = html`<header><a href="/"><strong>Lovelace School</strong></a><a href="/account">Account</a>${
    options.user ? html`<span>Signed in as ${options.user.name}</span>` : html`<a href="/login">Sign in</a>`
  }</header>`;
  const document = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style>${new SafeHtml(STYLE)}</style></head>
<body>${nav}<main>${body}</main></body></html>`;
  return {
    status: options.status ?? 200,
    headers: { ...HTML_SECURITY_HEADERS, ...options.headers },
    body: document.value,
  };
}
