import express from 'express';
import {
  type AuthorizationServer,
  type AuthorizationServerOptions,
  type ConsentPageContext,
  memoryStorage,
  type OAuthResponse,
} from 'portcullis';

/** Your session store: the session a cookie names, or undefined. */
declare const sessions: {
  find(cookieHeader: string | undefined): Promise<
    | {
        readonly id: string;
        readonly userId: string;
        readonly signedInAt: Date;
        readonly displayName: string;
      }
    | undefined
  >;
};

// #region authenticate
const authenticate: AuthorizationServerOptions['authenticate'] = async (request) => {
  const session = await sessions.find(request.headers.cookie);
  if (session === undefined) return null; // not signed in: the browser goes to loginUrl
  return {
    id: session.userId, // stable and never reassigned: it becomes the `sub` of every token
    authTime: Math.floor(session.signedInAt.getTime() / 1000), // when they last entered credentials
    sessionId: session.id, // binds the pending request and the consent form to this session
    name: session.displayName, // "Signed in as ..." on the consent page
  };
};
// #endregion authenticate

// #region login-url
const loginUrl: AuthorizationServerOptions['loginUrl'] = (context) => {
  const url = new URL('https://accounts.example.com/sign-in');
  url.searchParams.set('continue', context.returnTo); // the authorization request to resume
  if (context.loginHint !== undefined) url.searchParams.set('email', context.loginHint);
  if (context.reauthenticate) url.searchParams.set('prompt', 'password'); // prompt=login or max_age
  if (context.uiLocales?.[0] !== undefined) url.searchParams.set('lang', context.uiLocales[0]);
  return url.toString();
};
// #endregion login-url

// #region return-to
/** The issuer's authorization endpoint, the only place a login may send the browser back to. */
const AUTHORIZE = 'https://auth.example.com/oauth/authorize?';

/** `return_to` if it resumes an authorization request; your home page otherwise (no open redirect). */
function safeReturnTo(value: unknown): string {
  return typeof value === 'string' && value.startsWith(AUTHORIZE) ? value : '/';
}
// #endregion return-to

/** Escapes text for HTML element content and double-quoted attributes. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// #region render-string
function consentPage(context: ConsentPageContext): string {
  const e = escapeHtml; // every string of the context is raw: client names are chosen by strangers
  const hidden = Object.entries(context.fields)
    .map(([name, value]) => `<input type="hidden" name="${e(name)}" value="${e(value)}">`)
    .join('');
  const scopes = context.scopes.map((s) => `<li>${e(s.description)}</li>`).join('');
  const who =
    context.client.origin === 'metadata_document'
      ? `${e(new URL(context.client.clientId).host)} (calls itself ${e(context.clientName)})`
      : `${e(context.clientName)}${context.client.origin === 'dynamic' ? ' (unverified name)' : ''}`;
  const where = context.loopback
    ? `<p><strong>A program on this computer</strong> (${e(context.redirectHost)}) will receive access.
       Allow only if you started it yourself just now.</p>`
    : `<p>Access goes to ${e(context.redirectHost)}.</p>`;
  return `<!doctype html><title>Allow access?</title>
<h1>${who} wants to:</h1><ul>${scopes}</ul>${where}
<form method="post" action="${e(context.action)}">${hidden}
<button name="decision" value="allow">Allow</button>
<button name="decision" value="deny">Deny</button></form>`;
}
// #endregion render-string

// #region render-response
/** Your own page with your own stylesheet: then the response, and its headers, are yours. */
function styledConsentPage(context: ConsentPageContext): OAuthResponse {
  const html = consentPage(context).replace(
    '<title>',
    '<link rel="stylesheet" href="/assets/consent.css"><title>',
  );
  return {
    status: 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      // The library's policy, with your stylesheet allowed. Keep the rest: no scripts, no framing,
      // and a form that may post only here and redirect only to the client.
      'content-security-policy': [
        "default-src 'none'",
        "style-src 'self'",
        "img-src 'self'",
        `form-action 'self' ${new URL(context.redirectUri).origin}`,
        "frame-ancestors 'none'",
        "base-uri 'none'",
      ].join('; '),
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    },
    body: html,
  };
}
// #endregion render-response

export const options = {
  issuer: 'https://auth.example.com',
  storage: memoryStorage(),
  authenticate,
  loginUrl,
  consent: { render: consentPage },
} satisfies AuthorizationServerOptions;

export const styled = {
  ...options,
  consent: { render: styledConsentPage },
} satisfies AuthorizationServerOptions;

/** Your session middleware's user. */
declare function currentUserId(req: express.Request): string;
declare const oauth: AuthorizationServer;
const app = express();

// #region account
// "Apps you authorized", with a button to revoke each.
app.get('/account/apps', async (req, res) => {
  const apps = await oauth.listGrants(currentUserId(req));
  res.json(apps.map((a) => ({ id: a.grantId, name: a.clientName ?? a.clientId, scope: a.scope })));
});

app.post('/account/apps/:grantId/revoke', async (req, res) => {
  // userId: never revoke another user's grant. Revoking ends every token of the grant and
  // forgets the consent, so the app must ask again.
  const revoked = await oauth.revokeGrant(req.params.grantId, { userId: currentUserId(req) });
  res.status(revoked ? 204 : 404).end();
});

// #endregion account

export { app, consentPage, safeReturnTo, styledConsentPage };
