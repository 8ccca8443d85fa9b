/**
 * The account page: who is signed in, what they may grant, the apps they have authorized (the
 * library's grants) with a button to revoke each, and sign-out. Every form carries the session's
 * CSRF token; Hono's CSRF middleware refuses a form posted from another site.
 * @module
 */
import type { Hono } from 'hono';
import { html } from 'hono/html';
import type { AuthorizationServer, ScopeRegistry } from 'portcullis';
import { type SessionManager, safeEqual } from '../accounts/sessions.js';
import { page } from './layout.js';
import { formOf, LOGIN_PATH, sessionForm } from './login.js';

/** What the account page needs. */
export interface AccountDeps {
  readonly oauth: AuthorizationServer;
  readonly sessions: SessionManager;
  readonly scopes: ScopeRegistry;
  readonly issuer: string;
  /** The scopes a role may grant (the scope policy's rule). */
  grantable(role: 'owner' | 'student'): ReadonlySet<string>;
  now(): number;
}

/** Adds `GET /account` and `POST /account/apps/revoke`. */
export function addAccountPages(app: Hono, deps: AccountDeps): void {
  const loginRedirect = `${deps.issuer}${LOGIN_PATH}?return_to=${encodeURIComponent(`${deps.issuer}/account`)}`;

  app.get('/account', async (c) => {
    const signedIn = await deps.sessions.read(c.req.header('cookie'), deps.now());
    if (signedIn === null) return c.redirect(loginRedirect, 303);
    const { user, session } = signedIn;
    const apps = await deps.oauth.listGrants(user.id);
    const grantable = [...deps.grantable(user.role)];
    const notice = c.req.query('revoked') === '1' ? html`<p role="status">Access revoked.</p>` : '';
    const body = html`<h1>Your account</h1>
<div class="card"><p><strong>${user.name}</strong> &lt;${user.email}&gt;, ${user.role === 'owner' ? 'school owner' : 'student'}</p>
<form method="post" action="/logout" class="inline"><input type="hidden" name="csrf_token" value="${session.csrfToken}"><button type="submit">Sign out</button></form></div>
<h2>Authorized apps</h2>${notice}
${
  apps.length === 0
    ? html`<p class="muted">You have not authorized any app yet.</p>`
    : html`<table><thead><tr><th>App</th><th>Access</th><th>Since</th><th></th></tr></thead><tbody>${apps.map(
        (
          app,
        ) => html`<tr><td><strong>${app.clientName ?? app.clientId}</strong><br><span class="muted">${app.clientId}</span></td>
<td>${app.scope.map((s) => html`<code>${s}</code> `)}</td>
<td>${new Date(app.createdAt * 1000).toISOString().slice(0, 10)}</td>
<td><form method="post" action="/account/apps/revoke" class="inline">
<input type="hidden" name="csrf_token" value="${session.csrfToken}"><input type="hidden" name="grant_id" value="${app.grantId}">
<button type="submit" aria-label="Revoke access of ${app.clientName ?? app.clientId}">Revoke</button></form></td></tr>`,
      )}</tbody></table>`
}
<h2>What you may grant</h2>
<p class="muted">An app asks for scopes; you can only grant those your role allows.</p>
<table><tbody>${grantable.map(
      (s) => html`<tr><td><code>${s}</code></td><td>${deps.scopes.get(s)?.description ?? ''}</td></tr>`,
    )}</tbody></table>`;
    return page(c, 'Your account', body, { user });
  });

  app.post('/account/apps/revoke', formOf(sessionForm), async (c) => {
    const signedIn = await deps.sessions.read(c.req.header('cookie'), deps.now());
    if (signedIn === null) return c.redirect(loginRedirect, 303);
    const fields = c.req.valid('form');
    if (!safeEqual(fields.csrf_token, signedIn.session.csrfToken)) {
      return page(
        c,
        'Revoke',
        html`<h1>Revoke</h1><p class="error">The form expired. Go back and try again.</p>`,
        {
          status: 403,
        },
      );
    }
    // `userId` makes the library refuse another user's grant.
    const revoked = await deps.oauth.revokeGrant(fields.grant_id ?? '', { userId: signedIn.user.id });
    if (!revoked) {
      return page(c, 'Revoke', html`<h1>Revoke</h1><p class="error">No such authorized app.</p>`, {
        status: 404,
      });
    }
    return c.redirect(`${deps.issuer}/account?revoked=1`, 303);
  });
}
