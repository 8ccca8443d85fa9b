/**
 * One authorization server for every Fetch runtime: `portcullis/fetch` with memory storage, a
 * login page, the library's consent page and an API route guarded by the library. It uses only
 * Web APIs (`Request`, `Response`, `URL`, `crypto.randomUUID`), so the same module runs unchanged
 * on Bun (`bun.ts`), Deno (`deno.ts`), Cloudflare Workers with or without `nodejs_compat`
 * (`worker.ts`) and Node (`node.ts`); each of those files only starts it the runtime's way.
 *
 * CI runs this very code on each runtime and drives a whole flow against it with openid-client
 * (test/runtimes/runtimes.test.ts); the runtime guides (docs/runtimes/) show it.
 *
 * The login is a stand-in: it asks for a name and no password. Replace it with your own sign-in.
 */
import {
  type AuthorizationServer,
  createAuthorizationServer,
  createScopePolicy,
  defineScopes,
  type Logger,
  memoryStorage,
  oidcScopes,
} from 'portcullis';
import { createFetchHandler, withGuard } from 'portcullis/fetch';

/** The app: a Fetch handler, and the authorization server behind it. */
export interface RuntimeApp {
  readonly fetch: (request: Request) => Promise<Response>;
  readonly oauth: AuthorizationServer;
}

/** Options of {@link createApp}. */
export interface RuntimeAppOptions {
  /** The public origin the server is reached at, e.g. `https://auth.example.com`. */
  readonly issuer: string;
  /** Where the server reports failures. Default: JSON lines on the console. */
  readonly logger?: Logger;
}

/** The demo's user profiles. Yours live in your database. */
const PROFILES: Readonly<Record<string, { readonly name: string; readonly email: string }>> = {
  ada: { name: 'Ada Lovelace', email: 'ada@example.com' },
  grace: { name: 'Grace Hopper', email: 'grace@example.com' },
};

/**
 * Who may sign in. `lin` has no profile: UserInfo for lin fails the way a broken user database
 * would (the `claims` callback throws), and the server answers `500 server_error` and logs the
 * error through `logger`; the runtime tests use lin to check that every runtime shows that log.
 */
const USERS: ReadonlySet<string> = new Set(['ada', 'grace', 'lin']);

/** The profile claims of a user, from the "database". */
function profileOf(userId: string): { readonly name: string; readonly email: string } {
  const profile = PROFILES[userId];
  if (profile === undefined) throw new Error(`no profile for user ${userId}`);
  return profile;
}

/** Logs JSON lines: `console.error` for errors and warnings, `console.log` for the rest. */
export const consoleLogger: Logger = {
  debug: () => {},
  info: (message, fields) => console.log(JSON.stringify({ level: 'info', message, ...fields })),
  warn: (message, fields) => console.error(JSON.stringify({ level: 'warn', message, ...fields })),
  error: (message, fields) => console.error(JSON.stringify({ level: 'error', message, ...fields })),
};

interface Session {
  readonly userId: string;
  readonly name: string;
  /** When the user signed in, epoch seconds. */
  readonly authTime: number;
}

const SESSION_COOKIE = 'demo_session';

/** Reads one cookie from a `Cookie` header. */
function cookie(header: string | null | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const html = (body: string, status = 200) =>
  new Response(`<!doctype html><meta charset="utf-8"><title>Sign in</title>${body}`, {
    status,
    headers: { 'content-type': 'text/html; charset=utf-8' },
  });

/** Builds the app and starts its authorization server. */
export async function createApp({ issuer, logger = consoleLogger }: RuntimeAppOptions): Promise<RuntimeApp> {
  const sessions = new Map<string, Session>();

  // #region server
  const oauth = await createAuthorizationServer({
    issuer,
    storage: memoryStorage(),
    // The endpoints' paths, spelled out (these are the library's defaults).
    paths: {
      authorization: '/oauth/authorize',
      authorizationDecision: '/oauth/authorize/decision',
      token: '/oauth/token',
      registration: '/oauth/register',
      userinfo: '/oauth/userinfo',
      revocation: '/oauth/revoke',
      introspection: '/oauth/introspect',
      jwks: '/.well-known/jwks.json',
    },
    scopePolicy: createScopePolicy({
      registry: defineScopes([...oidcScopes, { name: 'notes:read', description: 'Read your notes' }]),
    }),
    // Who is signed in: the app's own session cookie. null sends the browser to loginUrl.
    authenticate: (request) => {
      const sessionId = cookie(request.headers.cookie, SESSION_COOKIE) ?? '';
      const session = sessions.get(sessionId);
      if (session === undefined) return null;
      return { id: session.userId, authTime: session.authTime, sessionId, name: session.name };
    },
    // Where to sign in; the server adds ?return_to=<the authorization request to resume>.
    loginUrl: '/login',
    // Claims for UserInfo; the server releases only those the granted scopes allow.
    claims: (userId) => profileOf(userId),
    logger,
  });
  // #endregion server

  // #region routes
  const handleOAuth = createFetchHandler(oauth);

  // An API route: a token for this issuer with the notes:read scope, or a 401/403 challenge.
  const notes = withGuard(
    oauth.guard({ resource: issuer }),
    { scope: 'notes:read', required: true },
    (_request, auth) => Response.json({ owner: auth.anonymous ? null : auth.subject, notes: ['Buy milk'] }),
  );

  async function fetch(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === '/login' && request.method === 'GET') return loginPage(request);
    if (pathname === '/login' && request.method === 'POST') return signIn(request);
    if (pathname === '/api/notes' && request.method === 'GET') return notes(request);
    // Everything else: the authorization server's endpoints, and a JSON 404 for the rest.
    return handleOAuth(request);
  }
  // #endregion routes

  // #region login
  // Only send the browser back to the authorization endpoint: an open redirect here would let
  // anyone bounce users to a site of their choosing.
  const safeReturnTo = (value: unknown) =>
    typeof value === 'string' && value.startsWith(`${issuer}/oauth/authorize?`) ? value : '/';

  function loginPage(request: Request): Response {
    const returnTo = escapeHtml(safeReturnTo(new URL(request.url).searchParams.get('return_to')));
    return html(
      `<form method="post" action="/login"><input type="hidden" name="return_to" value="${returnTo}">` +
        '<label>Name (ada or grace) <input name="name"></label><button>Sign in</button></form>',
    );
  }

  async function signIn(request: Request): Promise<Response> {
    const form = new URLSearchParams(await request.text());
    const userId = form.get('name') ?? '';
    if (!USERS.has(userId)) return html('<p>Unknown user.</p>', 401);
    const sessionId = crypto.randomUUID();
    const name = PROFILES[userId]?.name ?? userId;
    sessions.set(sessionId, { userId, name, authTime: Math.floor(Date.now() / 1000) });
    return new Response(null, {
      status: 303,
      headers: {
        location: safeReturnTo(form.get('return_to')),
        // In production: Secure, and the __Host- prefix (docs/security.md).
        'set-cookie': `${SESSION_COOKIE}=${sessionId}; HttpOnly; SameSite=Lax; Path=/`,
      },
    });
  }
  // #endregion login

  return { fetch, oauth };
}
