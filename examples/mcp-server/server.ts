/**
 * An MCP server (Streamable HTTP, stateless) behind the library's authorization server, on one
 * Fetch handler: anonymous tools for everyone, and a tool that needs a signed-in user, which
 * answers `401` with the challenge MCP clients start their OAuth flow from. docs/mcp.md explains
 * each part; test/examples/mcp-server.test.ts runs the MCP SDK's own client through the whole flow
 * (discovery, registration, consent, token, the call).
 *
 * The login is a stand-in that trusts a `demo_user` cookie: use your own sessions
 * (examples/express-login shows a login page).
 *
 * Run it (after `npm run build`, on Node 22.18+ which runs TypeScript directly):
 * `node examples/mcp-server/server.ts`, then point an MCP client at http://127.0.0.1:3000/mcp.
 */
import { serve } from '@hono/node-server';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  type AuthorizationServer,
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
    const verdict = await guard.check(
      { headers: { authorization: request.headers.get('authorization') ?? undefined } },
      scope === undefined ? {} : { scope, required: true },
    );
    if (!verdict.ok) return toResponse(verdict.response);

    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await notesServer(verdict.principal).connect(transport);
    return transport.handleRequest(request, { parsedBody: message });
  };
}
// #endregion mcp-endpoint

/** Builds the app, its authorization server started. `issuer` is the public origin the server is reached at. */
export async function createMcpExample(issuer = 'http://127.0.0.1:3000'): Promise<McpExample> {
  // #region server
  const mcpResource = `${issuer}/mcp`;
  const oauth = await createAuthorizationServer({
    issuer,
    storage: memoryStorage(),
    scopePolicy: createScopePolicy({
      registry: defineScopes([...oidcScopes, { name: 'notes:read', description: 'Read your notes' }]),
    }),
    // The MCP server is the resource: its metadata is served at
    // /.well-known/oauth-protected-resource/mcp, and its tokens have aud = <issuer>/mcp.
    resources: [{ resource: mcpResource, name: 'Notes MCP server', scopes: ['notes:read'] }],
    // Agents that keep one refresh token in several processes: see "Parallel refreshes".
    tokens: { refreshGraceSeconds: 5 },
    // MCP clients may identify themselves with an https client_id URL instead of registering.
    clientIdMetadataDocuments: { enabled: true },
    authenticate: (request) => {
      const user = /(?:^|;\s*)demo_user=(\w+)/.exec(request.headers.cookie ?? '')?.[1];
      return user === undefined ? null : { id: user, authTime: Math.floor(Date.now() / 1000) };
    },
    loginUrl: '/login',
  });
  const mcp = mcpEndpoint(oauth.guard({ resource: mcpResource }), new Set([issuer]));
  // #endregion server

  const login = (request: Request): Response => {
    const returnTo = new URL(request.url).searchParams.get('return_to') ?? '';
    const safe = returnTo.startsWith(`${issuer}/oauth/authorize?`) ? returnTo : '/';
    // Stand-in: signs everyone in as ada. Replace with your login page.
    return new Response(null, {
      status: 303,
      headers: { location: safe, 'set-cookie': 'demo_user=ada; HttpOnly; SameSite=Lax; Path=/' },
    });
  };
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
