/**
 * `/mcp` over Streamable HTTP, stateless (no `Mcp-Session-Id`): each POST gets a fresh server and
 * the SDK's web-standard transport, so nothing is shared between callers and there is no session
 * to hijack (RS-12). Before the SDK sees a request:
 * 1. `Origin` must be absent or allow-listed, else 403 (DNS rebinding: MCP transports, RS-10);
 * 2. only POST (no server-initiated stream in stateless mode): 405 otherwise (RS-11);
 * 3. a token, if sent, must be valid for resource `$ISSUER/mcp` (never silently anonymous, RS-03);
 * 4. the body is at most 256 KiB of JSON (read to its end even when larger, so the client reads
 *    the 413: `edge/body-limit.ts`);
 * 5. no string of the message holds NUL, an unpaired surrogate or a non-character: 400 with a
 *    JSON-RPC error naming where (ABU-05), so none reaches a tool, a resource or the database.
 * The SDK then answers protocol errors: 400 for a bad `MCP-Protocol-Version`, 202 for notifications.
 * @module
 */
import { createRoute, OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { hostileCharacter } from 'portcullis';
import { toResponse } from 'portcullis/fetch';
import type { BearerGuard } from '../auth/bearer-guard.js';
import { bodyWithin } from '../edge/body-limit.js';
import { hostileInJson } from '../edge/hostile-text.js';
import { type CatalogServerDeps, createCatalogServer } from './catalog-server.js';

type TransportModule = typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js');
let transportModule: Promise<TransportModule> | undefined;

/** The SDK's transport, imported on the first request like the server (catalog-server.ts). */
function loadTransport(): Promise<TransportModule> {
  transportModule ??= import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js').catch(
    (error: unknown) => {
      transportModule = undefined;
      throw error;
    },
  );
  return transportModule;
}

/** Largest JSON-RPC message accepted. */
const MAX_MCP_BYTES = 256 * 1024;

/** What `/mcp` needs. */
export interface McpEndpointDeps extends CatalogServerDeps {
  /** The guard of resource `$ISSUER/mcp`. */
  readonly guard: BearerGuard;
  /** Origins allowed to call from a browser (the issuer's, plus configured ones). */
  readonly allowedOrigins: ReadonlySet<string>;
}

const rpcError = (
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  id: string | number | null = null,
) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }), {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  });

const WWW_AUTHENTICATE = {
  'WWW-Authenticate': { description: 'Bearer challenge (RFC 6750 §3)', schema: { type: 'string' as const } },
};

/** The route as `/openapi.json` shows it; the body is read by the handler (parse errors are JSON-RPC's). */
const route: RouteConfig = createRoute({
  method: 'post',
  path: '/mcp',
  operationId: 'mcp',
  tags: ['mcp'],
  summary: 'MCP server (Streamable HTTP, stateless): anonymous catalog reads',
  description:
    'JSON-RPC 2.0 messages of the Model Context Protocol. Tools: search_courses, get_course, list_membership_plans. ' +
    'A token, if sent, must be valid for the resource `/mcp`. Requests with a foreign `Origin` are refused with 403.',
  security: [{}, { oauth2: [] }],
  request: {
    body: {
      required: true,
      content: {
        'application/json': {
          schema: { type: 'object', properties: { jsonrpc: { type: 'string', enum: ['2.0'] } } },
        },
      },
    },
  },
  responses: {
    200: {
      description: 'JSON-RPC response',
      content: { 'application/json': { schema: { type: 'object' } } },
    },
    202: { description: 'Notification accepted' },
    400: {
      description:
        'Invalid JSON-RPC, a string holding NUL, an unpaired surrogate or a non-character, or an unsupported MCP-Protocol-Version',
    },
    401: {
      description: 'Invalid token (`invalid_token`)',
      headers: WWW_AUTHENTICATE,
      content: { 'application/json': { schema: { type: 'object' } } },
    },
    403: { description: 'Origin not allowed' },
  },
});

/** The request's id, when a response may echo it: a number, or a string without a hostile character. */
function idOf(body: unknown): string | number | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const id = (body as { id?: unknown }).id;
  if (typeof id === 'string') return hostileCharacter(id) === undefined ? id : null;
  return typeof id === 'number' ? id : null;
}

/** The `/mcp` routes. */
export function createMcpApp(deps: McpEndpointDeps): OpenAPIHono {
  const app = new OpenAPIHono();

  // Rule 1 for every method: a page of another origin never reaches the server.
  app.use('/mcp', async (c, next) => {
    const origin = c.req.header('origin');
    if (origin !== undefined && !deps.allowedOrigins.has(origin)) {
      return rpcError(403, -32000, 'Forbidden: this Origin may not call the MCP server');
    }
    return next();
  });

  app.openapi(
    {
      ...route,
      middleware: [
        bodyWithin(MAX_MCP_BYTES, (_c, status) =>
          status === 413
            ? rpcError(413, -32600, 'Request too large')
            : rpcError(400, -32700, 'Parse error: the body could not be read'),
        ),
      ],
    },
    async (c: Context) => {
      const verdict = await deps.guard.check(
        {
          headers: { authorization: c.req.header('authorization'), dpop: c.req.header('dpop') },
          method: c.req.method,
          url: c.req.url,
        },
        { required: false },
      );
      if (!verdict.ok) return toResponse(verdict.response);

      const text = await c.req.text();
      if (text.trim() === '') return rpcError(400, -32600, 'Invalid Request: send a JSON-RPC message');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return rpcError(400, -32700, 'Parse error: the body is not valid JSON');
      }
      const hostile = hostileInJson(body);
      if (hostile !== undefined) {
        // -32602 Invalid params when the string is in `params`; -32600 Invalid Request elsewhere.
        const code = hostile.member === 'params' ? -32602 : -32600;
        return rpcError(400, code, hostile.description, {}, idOf(body));
      }

      const [server, { WebStandardStreamableHTTPServerTransport }] = await Promise.all([
        createCatalogServer(deps),
        loadTransport(),
      ]);
      // No `sessionIdGenerator`: stateless mode. JSON responses: nothing here streams.
      const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
      try {
        await server.connect(transport);
        return await transport.handleRequest(c.req.raw, { parsedBody: body });
      } finally {
        await transport.close();
        await server.close();
      }
    },
  );

  // Registered after POST: any other method (GET, DELETE, ...) ends here.
  app.all('/mcp', () =>
    rpcError(405, -32000, 'Method not allowed: this stateless server takes POST only', { allow: 'POST' }),
  );
  return app;
}
