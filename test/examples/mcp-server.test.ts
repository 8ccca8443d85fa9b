/**
 * examples/mcp-server, driven by the MCP SDK's own client as an agent would: anonymous tools work
 * without a token; the tool that needs a user answers 401, from which the SDK discovers the
 * protected-resource metadata (path-inserted URL), the authorization server, registers itself with
 * a loopback redirect URI, sends the "browser" through login and consent with PKCE and `resource`,
 * exchanges the code, and calls the tool again. What docs/mcp.md promises, end to end.
 */
import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpExample, type McpExample } from '../../examples/mcp-server/server.js';

const REDIRECT = 'http://localhost:49152/callback';

/** An MCP client's OAuth state, with a scripted browser for the authorization step. */
class AgentProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  code: string | undefined;
  authorizationUrl: URL | undefined;
  readonly redirectUrl = REDIRECT;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: 'Test agent',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  /** The browser: authorization request → login → consent → allow → the redirect with the code. */
  async redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
    const toLogin = await fetch(url, { redirect: 'manual' });
    const loginPage = new URL(toLogin.headers.get('location')!, url);
    expect((await fetch(loginPage)).status).toBe(200);
    const login = await fetch(loginPage, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ name: 'ada' }),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = await fetch(login.headers.get('location')!, { headers: { cookie } });
    const html = await page.text();
    const fields = Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
    );
    const decision = await fetch(new URL('/oauth/authorize/decision', url), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, decision: 'allow' }),
    });
    const back = new URL(decision.headers.get('location')!);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    this.code = back.searchParams.get('code') ?? undefined;
  }
}

describe('examples/mcp-server with the MCP SDK client', () => {
  let http: ServerType;
  let origin = '';
  let example: McpExample | undefined;
  beforeAll(async () => {
    http = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: (request) => example!.fetch(request), hostname: '127.0.0.1', port: 0 }, () =>
        resolve(s),
      );
    });
    origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    example = await createMcpExample(origin);
  });
  afterAll(async () => {
    await example?.oauth.close();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });

  const connect = async (provider: AgentProvider) => {
    const transport = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { authProvider: provider });
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(transport);
    return { client, transport };
  };
  const text = (result: Awaited<ReturnType<Client['callTool']>>) =>
    JSON.parse((result.content as { text: string }[])[0]!.text) as unknown;

  it('serves anonymous tools without a token, and starts OAuth from the 401 of a tool that needs a user', async () => {
    const provider = new AgentProvider();
    const { client, transport } = await connect(provider);
    expect(text(await client.callTool({ name: 'search_public_notes', arguments: {} }))).toEqual([
      'Welcome to the notes server',
    ]);

    await expect(client.callTool({ name: 'list_my_notes', arguments: {} })).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    // The SDK registered dynamically, and asked for this MCP server as the resource, with PKCE.
    expect(provider.client?.client_id).toBeTypeOf('string');
    const asked = provider.authorizationUrl!.searchParams;
    expect(asked.get('resource')).toBe(`${origin}/mcp`);
    expect(asked.get('code_challenge_method')).toBe('S256');
    expect(asked.get('scope')).toBe('notes:read');
    expect(provider.code).toBeTypeOf('string');

    await transport.finishAuth(provider.code!);
    expect(provider.saved?.refresh_token).toBeTypeOf('string');
    await client.close();

    const again = await connect(provider);
    expect(text(await again.client.callTool({ name: 'list_my_notes', arguments: {} }))).toEqual([
      'Buy milk',
      'Fix the engine',
    ]);
    await again.client.close();
  });

  it('publishes the MCP resource metadata at the path-inserted URL', async () => {
    const response = await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`);
    expect(await response.json()).toMatchObject({
      resource: `${origin}/mcp`,
      authorization_servers: [origin],
      scopes_supported: ['notes:read'],
    });
  });

  it('the sign-in page returns only to the authorization endpoint, never elsewhere (open redirect)', async () => {
    const signIn = (returnTo: string) =>
      fetch(`${origin}/login?${new URLSearchParams({ return_to: returnTo })}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ name: 'ada' }),
      });
    const back = await signIn(`${origin}/oauth/authorize?request_id=x`);
    expect(back.headers.get('location')).toBe(`${origin}/oauth/authorize?request_id=x`);
    for (const elsewhere of [
      'https://attacker.example/',
      `${origin}.attacker.example/oauth/authorize?`,
      '//x',
    ]) {
      expect((await signIn(elsewhere)).headers.get('location')).toBe('/');
    }
    // A name that is not one is asked again, without a session.
    const refused = await fetch(`${origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ name: '<script>' }),
    });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('set-cookie')).toBeNull();
  });

  it('refuses a foreign Origin', async () => {
    const response = await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: { origin: 'https://attacker.example', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(403);
  });
});
