/**
 * The MCP TypeScript SDK's client (`@modelcontextprotocol/sdk`, a devDependency) with its OAuth
 * support, as an application uses it: a `StreamableHTTPClientTransport` with an
 * `OAuthClientProvider` that stores what the SDK hands it, opens the user's browser (`BROWSER`,
 * here headless Chromium) in `redirectToAuthorization`, and listens on a loopback port for the
 * redirect. The SDK does the rest: discovery from the 401, dynamic registration, PKCE and
 * `resource`, the code exchange, the retried call, and a refresh when the server refuses an
 * expired token. It has no revocation: the test revokes the SDK's refresh token by HTTP (RFC 7009)
 * and sees the SDK sent back to sign in.
 */
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADA_NOTES,
  type ClientBench,
  NOTES_TOOL,
  requireClient,
  revokeByHttp,
  startBench,
} from './matrix.js';
import { type DesktopApp, type DesktopAppProvider, startDesktopApp } from './sdk-app.js';

let bench: ClientBench;
let app: DesktopApp;
let provider: DesktopAppProvider;

beforeAll(async () => {
  bench = await startBench();
  app = await startDesktopApp(bench.env);
  provider = app.provider;
});
afterAll(async () => {
  await app.close();
  await bench.close();
});

async function connect() {
  const transport = new StreamableHTTPClientTransport(new URL(bench.mcp), { authProvider: provider });
  const client = new Client({ name: 'sdk-desktop-app', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const notes = (result: Awaited<ReturnType<Client['callTool']>>) =>
  JSON.parse((result.content as { text: string }[])[0]!.text) as unknown;

describe('the MCP TypeScript SDK client with its OAuth provider', () => {
  it('signs in from the 401 through the browser, asking only for what /mcp needs, refreshes, and is revoked', async (ctx) => {
    requireClient('chromium', (note) => ctx.skip(note));
    const { client, transport } = await connect();
    await expect(client.callTool({ name: NOTES_TOOL, arguments: {} })).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    // The SDK registered and sent the browser off with the scope of the challenge, no more.
    const clientId = provider.client!.client_id;
    const [opening] = await bench.openedSince(0, 1);
    expect(opening!.error).toBeUndefined();
    const asked = new URL(opening!.opened).searchParams;
    expect(asked.get('client_id')).toBe(clientId);
    expect(asked.get('scope')).toBe('notes:read');
    expect(asked.get('resource')).toBe(bench.mcp);
    expect(asked.get('code_challenge_method')).toBe('S256');

    await transport.finishAuth(await provider.nextCode());
    expect(provider.saved).toMatchObject({ scope: 'notes:read', refresh_token: expect.any(String) });
    expect(notes(await client.callTool({ name: NOTES_TOOL, arguments: {} }))).toEqual(ADA_NOTES);

    // The access token expires; the server refuses it; the SDK refreshes, without the browser.
    bench.advance(900);
    const before = provider.saved!.refresh_token;
    expect(notes(await client.callTool({ name: NOTES_TOOL, arguments: {} }))).toEqual(ADA_NOTES);
    expect(bench.eventsOf('refresh.rotated', clientId)).toHaveLength(1);
    expect(provider.saved!.refresh_token).not.toBe(before);
    expect(bench.openings()).toHaveLength(1);
    await client.close();

    // No revocation in the SDK: the application posts it (RFC 7009), with the SDK's token.
    expect(await revokeByHttp(bench, provider.saved!.refresh_token!, { clientId })).toBe(200);
    expect((await bench.example.oauth.listGrants('ada')).map((g) => g.clientId)).not.toContain(clientId);
    // The SDK's next connection is refused (its token is checked even for initialize); its refresh
    // fails; it sends the user to sign in again.
    await expect(connect()).rejects.toBeInstanceOf(UnauthorizedError);
    expect(bench.events.filter((e) => e.type === 'token.issued')).toHaveLength(2);
    const reopened = await bench.openedSince(1, 1);
    expect(reopened[0]!.error).toBeUndefined();
  });
});
