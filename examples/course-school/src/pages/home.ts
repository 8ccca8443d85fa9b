/**
 * The home page: what this server is, the catalog, and links to every document and endpoint.
 * @module
 */
import type { Hono } from 'hono';
import { html } from 'hono/html';
import type { SessionManager } from '../accounts/sessions.js';
import { searchPublishedCourses } from '../api/catalog.js';
import type { DataStore } from '../data/store.js';
import type { DemoAccount } from '../seed.js';
import { page } from './layout.js';

/** What the home page needs. */
export interface HomeDeps {
  readonly data: DataStore;
  readonly sessions: SessionManager;
  readonly issuer: string;
  /** The demo accounts to list; empty when demo data is off. */
  readonly demoAccounts: readonly DemoAccount[];
  now(): number;
}

/** Machine-readable documents, linked from the home page and `/llms.txt`. */
export const DOCUMENT_LINKS: readonly {
  readonly path: string;
  readonly title: string;
  readonly about: string;
}[] = [
  { path: '/auth.md', title: 'auth.md', about: 'How to register a client, get a token and call the API' },
  { path: '/openapi.json', title: 'OpenAPI', about: 'Every API operation with its scope' },
  { path: '/llms.txt', title: 'llms.txt', about: 'Index of this site for AI agents' },
  { path: '/pricing.md', title: 'pricing.md', about: 'Membership plans, courses and products with prices' },
  {
    path: '/.well-known/oauth-authorization-server',
    title: 'Authorization server metadata',
    about: 'RFC 8414',
  },
  {
    path: '/.well-known/openid-configuration',
    title: 'OpenID configuration',
    about: 'OpenID Connect Discovery',
  },
  {
    path: '/.well-known/oauth-protected-resource',
    title: 'Protected resource metadata',
    about: 'RFC 9728, the API',
  },
  {
    path: '/.well-known/oauth-protected-resource/mcp',
    title: 'Protected resource metadata of /mcp',
    about: 'RFC 9728, the MCP server',
  },
];

/** Adds `GET /`. */
export function addHomePage(app: Hono, deps: HomeDeps): void {
  app.get('/', async (c) => {
    const signedIn = await deps.sessions.read(c.req.header('cookie'), deps.now());
    const courses = await searchPublishedCourses(deps.data, undefined, 20);
    const body = html`<h1>Lovelace School of Computing</h1>
<p>The reference server of <strong>portcullis</strong>, an OAuth 2.1 and OpenID Connect authorization server library:
a course-school API protected by OAuth, with an anonymous catalog, an MCP server and self-serve client registration.</p>
<h2>Catalog</h2>
<ul>${courses.map((c) => html`<li><strong>${String(c.data.title)}</strong>: ${String(c.data.summary)}</li>`)}</ul>
<h2>Try the flow</h2>
<ol>
<li>Register a loopback client: <code>POST /api/oauth/register</code> (see <a href="/auth.md">auth.md</a> for the curl line).</li>
<li>Open the authorization URL with a PKCE challenge; sign in and choose <em>Allow</em>.</li>
<li>Exchange the code at <code>/api/oauth/token</code>, then call <code>/api/v1/...</code> with the access token.</li>
<li>See and revoke the apps you authorized on <a href="/account">your account page</a>.</li>
</ol>
${
  deps.demoAccounts.length === 0
    ? ''
    : html`<p class="muted">Demo accounts: ${deps.demoAccounts.map((a) => html`<code>${a.email}</code> / <code>${a.password}</code> (${a.role}) `)}</p>`
}
<h2>Documents</h2>
<ul>${DOCUMENT_LINKS.map((d) => html`<li><a href="${d.path}">${d.title}</a>: ${d.about}</li>`)}
<li><code>POST /mcp</code>: MCP server (Streamable HTTP) for anonymous catalog reads</li></ul>`;
    return page(c, 'Lovelace School of Computing', body, { user: signedIn?.user ?? null });
  });
}
