/**
 * An MCP server (Streamable HTTP, stateless) behind the library's authorization server, on one
 * Fetch handler: anonymous tools for everyone, and a tool that needs a signed-in user, which
 * answers `401` with the challenge MCP clients start their OAuth flow from. docs/mcp.md explains
 * each part; test/examples/mcp-server.test.ts runs the MCP SDK's own client through the whole flow
 * (discovery, registration, consent, token, the call).
 *
 * The login is a stand-in: a form that signs in whoever types a name, remembered in a
 * `demo_user` cookie. Use your own accounts and sessions (examples/express-login shows a real one).
 * test/clients/ runs real MCP and OAuth clients against this example, with a browser.
 *
 * Run it (after `npm run build`, on Node 22.18+ which runs TypeScript directly):
 * `node examples/mcp-server/server.ts`, then point an MCP client at http://127.0.0.1:3000/mcp.
 */
import { serve } from '@hono/node-server';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  type AuthorizationServer,
  type AuthorizationServerOptions,
  createAuthorizationServer,
  createScopePolicy,
  defineScopes,
  memoryStorage,
  oidcScopes,
  type Principal,
  type ResourceGuard,
} from 'portcullis';
import { createFetchHandler, toResponse } from 'portcullis/fetch';

/** The notes every user has, and the public ones. */
const NOTES: Readonly<Record<string, readonly string[]>> = { ada: ['Buy milk', 'Fix the engine'] };
const PUBLIC_NOTES = ['Welcome to the notes server'];

/** The app: one Fetch handler for the authorization server, `/mcp` and the demo login. */
export interface McpExample {
  readonly fetch: (request: Request) => Promise<Response>;
  readonly oauth: AuthorizationServer;
}

/** What a test may change: the authorization server's clock (default `Date.now`) and event listener. */
export type McpExampleOptions = Pick<AuthorizationServerOptions, 'clock' | 'onEvent'>;

// #region tools
/** Tools, and the scope each needs; `undefined` means anyone, signed in or not. */
const TOOL_SCOPES: Readonly<Record<string, string | undefined>> = {
  search_public_notes: undefined,
  list_my_notes: 'notes:read',
};

/** One MCP server per request (stateless), knowing who calls. */
function notesServer(caller: Principal): McpServer {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool(
    'search_public_notes',
    { description: 'Public notes; no sign-in needed' },
    async () => ({
      content: [{ type: 'text', text: JSON.stringify(PUBLIC_NOTES) }],
    }),
  );
  server.registerTool('list_my_notes', { description: "The signed-in user's notes" }, async () => ({
    content: [{ type: 'text', text: JSON.stringify(caller.anonymous ? [] : (NOTES[caller.subject] ?? [])) }],
  }));
  return server;
}
// #endregion tools

// #region mcp-endpoint
/** `/mcp`: check the Origin, decide about the token for this message, then hand it to the SDK. */
function mcpEndpoint(guard: ResourceGuard, allowedOrigins: ReadonlySet<string>) {
  return async (request: Request): Promise<Response> => {
    // MCP transports: refuse foreign browser origins (DNS rebinding).
    const origin = request.headers.get('origin');
    if (origin !== null && !allowedOrigins.has(origin))
      return new Response('forbidden origin', { status: 403 });
    if (request.method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } });

    const message: unknown = await request.json().catch(() => undefined);
    const call = message as { method?: unknown; params?: { name?: unknown } } | undefined;
    const tool = call?.method === 'tools/call' ? String(call.params?.name) : undefined;
    const scope = tool === undefined ? undefined : TOOL_SCOPES[tool];
    // Anonymous unless this tool needs a user: then no token means 401 + WWW-Authenticate with
    // resource_metadata and scope, which is how MCP clients learn to start the OAuth flow.
    // A token that is sent is always verified, for every message.
    // A DPoP-bound token (RFC 9449) comes with a proof of this request: pass method, URL and header.
    const verdict = await guard.check(
      {
        headers: {
          authorization: request.headers.get('authorization') ?? undefined,
          dpop: request.headers.get('dpop') ?? undefined,
        },
        method: request.method,
        url: request.url,
      },
      scope === undefined ? {} : { scope, required: true },
    );
    if (!verdict.ok) return toResponse(verdict.response);

    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await notesServer(verdict.principal).connect(transport);
    return transport.handleRequest(request, { parsedBody: message });
  };
}
// #endregion mcp-endpoint

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Stand-in sign-in page: GET shows a form, POST signs in whoever typed a name and goes back to
 * the authorization request (only there: never an open redirect). Replace with your login page.
 */
function demoLogin(authorizePrefix: string) {
  return async (request: Request): Promise<Response> => {
    const returnTo = new URL(request.url).searchParams.get('return_to') ?? '';
    const back = returnTo.startsWith(authorizePrefix) ? returnTo : '/';
    if (request.method === 'POST') {
      const name = new URLSearchParams(await request.text()).get('name') ?? '';
      if (/^\w{1,32}$/.test(name)) {
        const cookie = `demo_user=${name}; HttpOnly; SameSite=Lax; Path=/`;
        return new Response(null, { status: 303, headers: { location: back, 'set-cookie': cookie } });
      }
    }
    const action = `/login?${new URLSearchParams({ return_to: back })}`;
    const page = `<!doctype html><title>Sign in</title><form method="post" action="${escapeHtml(action)}">
<label>Name <input name="name" autocomplete="username" required pattern="\\w{1,32}"></label>
<button type="submit">Sign in</button></form>`;
    return new Response(page, {
      status: request.method === 'POST' ? 400 : 200,
      headers: { 'content-type': 'text/html; charset=utf-8', 'x-frame-options': 'DENY' },
    });
  };
}

/** Builds the app, its authorization server started. `issuer` is the public origin the server is reached at. */
export async function createMcpExample(
  issuer = 'http://127.0.0.1:3000',
  options: McpExampleOptions = {},
): Promise<McpExample> {
  const clock = options.clock ?? Date.now;
  // #region server
  const mcpResource = `${issuer}/mcp`;
  const oauth = await createAuthorizationServer({
    issuer,
    storage: memoryStorage(),
    scopePolicy: createScopePolicy({
      registry: defineScopes([...oidcScopes, { name: 'notes:read', description: 'Read your notes' }]),
    }),
    // The MCP server is the resource: its metadata is served at
    // /.well-known/oauth-protected-resource/mcp, and its tokens have aud = <issuer>/mcp. Its
    // scopes are the ones its tools need: MCP clients ask for all of them.
    resources: [{ resource: mcpResource, name: 'Notes MCP server', scopes: ['notes:read'] }],
    // MCP clients may identify themselves with an https client_id URL instead of registering.
    clientIdMetadataDocuments: { enabled: true },
    authenticate: (request) => {
      const user = /(?:^|;\s*)demo_user=(\w+)/.exec(request.headers.cookie ?? '')?.[1];
      return user === undefined ? null : { id: user, authTime: Math.floor(clock() / 1000) };
    },
    loginUrl: '/login',
    ...options, // a test's clock and event listener
  });
  const mcp = mcpEndpoint(oauth.guard({ resource: mcpResource }), new Set([issuer]));
  // #endregion server

  const login = demoLogin(`${issuer}/oauth/authorize?`);
  // #region fetch
  const handle = createFetchHandler(oauth, {
    fallback: (request) => {
      const { pathname } = new URL(request.url);
      if (pathname === '/mcp') return mcp(request);
      if (pathname === '/login') return login(request);
      return new Response('not found', { status: 404 });
    },
  });
  // #endregion fetch
  return { fetch: handle, oauth };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { fetch } = await createMcpExample();
  serve({ fetch, hostname: '127.0.0.1', port: 3000 }, (info) => {
    console.log(`MCP server on http://127.0.0.1:${info.port}/mcp`);
  });
}
