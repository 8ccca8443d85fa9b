/**
 * `/mcp` over Streamable HTTP, stateless (no `Mcp-Session-Id`): each POST gets a fresh server and
 * transport, so nothing is shared between callers and there is no session to hijack. Before the
 * SDK sees a request:
 * 1. `Origin` must be absent or allow-listed, else 403 (DNS rebinding: MCP transports, RS-10);
 * 2. only POST (no server-initiated stream in stateless mode): 405 otherwise (RS-11);
 * 3. a token, if sent, must be valid for resource `$ISSUER/mcp` (never silently anonymous, RS-03).
 * The SDK then answers protocol errors: 400 for a bad `MCP-Protocol-Version`, 202 for notifications.
 * @module
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { nodeHeaders } from 'portcullis/node';
import type { BearerGuard } from '../auth/bearer-guard.js';
import { readJson } from '../http/body.js';
import type { Endpoint } from '../http/endpoint.js';
import { HttpError, json } from '../http/response.js';
import { type CatalogServerDeps, createCatalogServer } from './catalog-server.js';

/** Largest JSON-RPC message accepted. */
const MAX_MCP_BYTES = 256 * 1024;

/** What `/mcp` needs. */
export interface McpEndpointDeps extends CatalogServerDeps {
  /** The guard of resource `$ISSUER/mcp`. */
  readonly guard: BearerGuard;
  /** Origins allowed to call from a browser (the issuer's, plus configured ones). */
  readonly allowedOrigins: ReadonlySet<string>;
}

const rpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  json(status, { jsonrpc: '2.0', error: { code, message }, id: null }, headers);

/** The `/mcp` endpoint. */
export function mcpEndpoint(deps: McpEndpointDeps): Endpoint {
  return async ({ req, res }) => {
    const origin = req.headers.origin;
    if (origin !== undefined && !deps.allowedOrigins.has(origin)) {
      return rpcError(403, -32000, 'Forbidden: this Origin may not call the MCP server');
    }
    if (req.method !== 'POST') {
      return rpcError(405, -32000, 'Method not allowed: this stateless server takes POST only', {
        allow: 'POST',
      });
    }
    const verdict = await deps.guard.check({ headers: nodeHeaders(req) }, { required: false });
    if (!verdict.ok) return verdict.response;

    let body: unknown;
    try {
      body = await readJson(req, MAX_MCP_BYTES);
    } catch (error) {
      if (error instanceof HttpError && error.code === 'invalid_request') {
        return rpcError(400, -32700, 'Parse error: the body is not valid JSON');
      }
      throw error;
    }
    if (body === undefined) return rpcError(400, -32600, 'Invalid Request: send a JSON-RPC message');

    const server = createCatalogServer(deps);
    // No `sessionIdGenerator`: stateless mode. JSON responses: nothing here streams.
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    return undefined;
  };
}
