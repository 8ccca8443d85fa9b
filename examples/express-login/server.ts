/**
 * An Express app with everything a first authorization-code flow needs: the authorization server,
 * an `authenticate` hook reading the app's session cookie, a login page the server sends browsers
 * to (`loginUrl`), claims for UserInfo, and an API route protected by the library's guard.
 *
 * The login is a stand-in: it asks for a name and no password. Replace it with your own sign-in.
 * docs/getting-started.md walks through a flow against it with curl (and a test runs that
 * walkthrough, test/examples/express-login.test.ts).
 *
 * Run it (after `npm run build`, on Node 22.18+ which runs TypeScript directly):
 * `node examples/express-login/server.ts`.
 */
import { randomUUID } from 'node:crypto';
import express, { type Express } from 'express';
import {
  type AuthorizationServer,
  createAuthorizationServer,
  createScopePolicy,
  defineScopes,
  memoryStorage,
  oidcScopes,
} from 'portcullis';
import { createExpressRouter, type GuardedRequest, requireToken } from 'portcullis/express';

/** The app and the authorization server it mounts. */
export interface ExampleApp {
  readonly app: Express;
  readonly oauth: AuthorizationServer;
}

/** The demo's users. Yours live in your database. */
const USERS: Readonly<Record<string, { readonly name: string; readonly email: string }>> = {
  ada: { name: 'Ada Lovelace', email: 'ada@example.com' },
  grace: { name: 'Grace Hopper', email: 'grace@example.com' },
};

/** Signed-in sessions by id. Yours are your framework's sessions. */
interface Session {
  readonly userId: string;
  /** Shown on the consent page ("Signed in as ..."). */
  readonly name: string;
  /** When the user signed in, epoch seconds. */
  readonly authTime: number;
}

const SESSION_COOKIE = 'demo_session';

/** Reads one cookie from a `Cookie` header. */
function cookie(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Builds the app, its authorization server started. `issuer` is the public origin the server is reached at. */
export async function createApp(issuer = 'http://127.0.0.1:3000'): Promise<ExampleApp> {
  const sessions = new Map<string, Session>();

  // #region server
  const oauth = await createAuthorizationServer({
    issuer,
    storage: memoryStorage(),
    scopePolicy: createScopePolicy({
      registry: defineScopes([...oidcScopes, { name: 'notes:read', description: 'Read your notes' }]),
    }),
    // Who is signed in: the app's own session cookie. null sends the browser to loginUrl.
    authenticate: (request) => {
      const sessionId = cookie(request.headers.cookie, SESSION_COOKIE) ?? '';
      const session = sessions.get(sessionId);
      if (session === undefined) return null;
      // sessionId binds the consent form to this session.
      return { id: session.userId, authTime: session.authTime, sessionId, name: session.name };
    },
    // Where to sign in; the server adds ?return_to=<the authorization request to resume>.
    loginUrl: '/login',
    // Claims for UserInfo; the server releases only those the granted scopes allow.
    claims: (userId) => USERS[userId] ?? {},
  });
  // #endregion server

  const app = express();
  // #region mount
  // Mount before any body parser: the router reads the raw body itself.
  app.use(createExpressRouter(oauth));

  // An API route: a token for this issuer with the notes:read scope, or a 401/403 challenge.
  const guard = oauth.guard({ resource: issuer });
  app.get('/api/notes', requireToken(guard, { scope: 'notes:read', required: true }), (req, res) => {
    const { auth } = req as GuardedRequest;
    res.json({ owner: auth.anonymous ? null : auth.subject, notes: ['Buy milk'] });
  });
  // #endregion mount

  // #region login
  // The stand-in login page. Only send the browser back to the authorization endpoint: an open
  // redirect here would let anyone bounce users to a site of their choosing.
  const safeReturnTo = (value: unknown) =>
    typeof value === 'string' && value.startsWith(`${issuer}/oauth/authorize?`) ? value : '/';

  app.get('/login', (req, res) => {
    const returnTo = escapeHtml(safeReturnTo(req.query.return_to));
    res
      .type('html')
      .send(
        `<form method="post" action="/login"><input type="hidden" name="return_to" value="${returnTo}">` +
          `<label>Name (ada or grace) <input name="name"></label><button>Sign in</button></form>`,
      );
  });

  app.post('/login', express.urlencoded({ extended: false }), (req, res) => {
    const name = String(req.body.name ?? '');
    const user = USERS[name];
    if (user === undefined) {
      res.status(401).type('text').send('unknown user\n');
      return;
    }
    const id = randomUUID();
    sessions.set(id, { userId: name, name: user.name, authTime: Math.floor(Date.now() / 1000) });
    // In production: Secure, and the __Host- prefix (docs/security.md).
    res.cookie(SESSION_COOKIE, id, { httpOnly: true, sameSite: 'lax', path: '/' });
    res.redirect(303, safeReturnTo(req.body.return_to));
  });
  // #endregion login

  return { app, oauth };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { app } = await createApp();
  app.listen(3000, '127.0.0.1', () => {
    console.log('listening on http://127.0.0.1:3000');
  });
}
