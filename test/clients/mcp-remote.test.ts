/**
 * mcp-remote (npm, pinned in test/clients/npm-clients/), unmodified and with its defaults, as
 * Claude Desktop and other stdio-only hosts run it: `mcp-remote <MCP server URL>`, spoken to over
 * stdio by an MCP client (here the SDK's). It connects anonymously; the tool that needs a user
 * answers 401, from which mcp-remote discovers, registers, opens the browser (the `open` package,
 * xdg-open, `BROWSER`: headless Chromium signs in and allows), takes the code on its loopback
 * port, and retries. After the access token expires it refreshes. It has no revocation: the test
 * revokes its stored refresh token by HTTP (RFC 7009).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADA_NOTES,
  type ClientBench,
  NOTES_TOOL,
  requireClient,
  revokeByHttp,
  startBench,
} from './matrix.js';

let bench: ClientBench;
beforeAll(async () => {
  bench = await startBench();
});
afterAll(() => bench.close());

/** What mcp-remote stored in the user's home, by file suffix (`client_info`, `tokens`). */
function stored(kind: 'client_info' | 'tokens'): Record<string, unknown> {
  const base = join(bench.home, '.mcp-auth');
  for (const dir of existsSync(base) ? readdirSync(base) : []) {
    for (const file of readdirSync(join(base, dir))) {
      if (file.endsWith(`_${kind}.json`)) {
        return JSON.parse(readFileSync(join(base, dir, file), 'utf8')) as Record<string, unknown>;
      }
    }
  }
  throw new Error(`mcp-remote stored no ${kind}`);
}

const text = (result: Awaited<ReturnType<Client['callTool']>>) =>
  JSON.parse((result.content as { text: string }[])[0]!.text) as unknown;

describe('mcp-remote (npm, default settings)', () => {
  it('anonymous tools; then the 401, discovery, registration, browser sign-in, the call; a refresh; revocation by HTTP', async (ctx) => {
    const mcpRemote = requireClient('mcpRemote', (note) => ctx.skip(note));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [mcpRemote.entry, bench.mcp],
      env: bench.env,
      stderr: 'pipe',
    });
    let log = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
    });
    const client = new Client({ name: 'stdio-host', version: '1.0.0' });
    try {
      await client.connect(transport);
      expect(text(await client.callTool({ name: 'search_public_notes', arguments: {} }))).toEqual([
        'Welcome to the notes server',
      ]);
      expect(bench.openings()).toHaveLength(0);

      expect(text(await client.callTool({ name: NOTES_TOOL, arguments: {} })), log).toEqual(ADA_NOTES);
      const clientInfo = stored('client_info');
      const clientId = clientInfo.client_id as string;
      expect(clientInfo).toMatchObject({ client_name: 'MCP CLI Proxy', token_endpoint_auth_method: 'none' });
      const [opening] = await bench.openedSince(0, 1);
      expect(opening!.error).toBeUndefined();
      const asked = new URL(opening!.opened).searchParams;
      expect(asked.get('client_id')).toBe(clientId);
      // Only what /mcp needs: its metadata lists notes:read, not the server's OIDC scopes.
      expect(asked.get('scope')).toBe('notes:read');
      expect(asked.get('resource')).toBe(bench.mcp);
      expect(stored('tokens')).toMatchObject({ scope: 'notes:read', refresh_token: expect.any(String) });

      // The access token expires: mcp-remote refreshes, without the browser.
      bench.advance(900);
      expect(text(await client.callTool({ name: NOTES_TOOL, arguments: {} })), log).toEqual(ADA_NOTES);
      expect(bench.eventsOf('refresh.rotated', clientId)).toHaveLength(1);
      expect(bench.openings()).toHaveLength(1);

      // No revocation in mcp-remote: its stored refresh token, revoked as its client (RFC 7009).
      const refreshToken = stored('tokens').refresh_token as string;
      expect(await revokeByHttp(bench, refreshToken, { clientId })).toBe(200);
      expect((await bench.example.oauth.listGrants('ada')).map((g) => g.clientId)).not.toContain(clientId);
    } finally {
      await client.close();
    }
  });
});
