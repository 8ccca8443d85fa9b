/**
 * The MCP Inspector's CLI (npm `@modelcontextprotocol/inspector`, pinned in
 * test/clients/npm-clients/; it needs Node 22.19+, so it runs on the runtime matrix's Node 22),
 * unmodified, one process per command as a script or CI job runs it:
 * `mcp-inspector --cli <URL> --method tools/call --tool-name list_my_notes`. On the 401 it
 * discovers, registers, opens the browser (the `open` package, xdg-open, `BROWSER`: headless
 * Chromium signs in and allows), takes the code on its loopback port (127.0.0.1:6276) and
 * retries; a later run, after the access token expired, refreshes. Revocation is by HTTP (see
 * below: its `--relogin` skips it for CLI logins).
 *
 * Two environment settings, both for running without a person at a terminal: the Inspector opens
 * a browser only for a TTY unless `MCP_AUTO_OPEN_ENABLED=true`, and without an OS keychain it
 * keeps tokens in memory for one process unless `MCP_INSPECTOR_SECRET_STORE=file` (its
 * documented choice for headless machines), which the refresh across runs needs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADA_NOTES,
  type ClientBench,
  NOTES_TOOL,
  requireClient,
  revokeByHttp,
  run,
  startBench,
} from './matrix.js';

let bench: ClientBench;
beforeAll(async () => {
  bench = await startBench();
});
afterAll(() => bench.close());

/** The refresh token the Inspector keeps in its file secret store. */
function storedRefreshToken(): string {
  const store = JSON.parse(readFileSync(join(bench.home, '.mcp-inspector', 'secrets.json'), 'utf8')) as {
    secrets: Record<string, string>;
  };
  const tokens = Object.entries(store.secrets).find(([key]) => key.includes(':tokens:'));
  if (tokens === undefined) throw new Error('the Inspector stored no tokens');
  return (JSON.parse(tokens[1]) as { refresh_token: string }).refresh_token;
}

/** The tool's notes, from the CLI's JSON output. */
function notesOf(stdout: string): unknown {
  const { result } = JSON.parse(stdout) as { result?: { content?: { text: string }[] } };
  return JSON.parse(result?.content?.[0]?.text ?? 'null');
}

describe('the MCP Inspector CLI (npm, default settings)', () => {
  it('signs in through the browser on the 401, refreshes in a later run; its grant revoked by HTTP', async (ctx) => {
    const inspector = requireClient('inspector', (note) => ctx.skip(note));
    const env = { ...bench.env, MCP_AUTO_OPEN_ENABLED: 'true', MCP_INSPECTOR_SECRET_STORE: 'file' };
    const cli = (...args: string[]) =>
      run(inspector.node, [inspector.entry, '--cli', bench.mcp, '--format', 'json', ...args], { env });

    const first = await cli('--method', 'tools/call', '--tool-name', NOTES_TOOL);
    expect(first.code, first.stderr).toBe(0);
    expect(notesOf(first.stdout)).toEqual(ADA_NOTES);
    const [opening] = await bench.openedSince(0, 1);
    expect(opening!.error).toBeUndefined();
    const asked = new URL(opening!.opened).searchParams;
    const clientId = asked.get('client_id')!;
    expect(asked.get('scope')).toBe('notes:read');
    expect(asked.get('resource')).toBe(bench.mcp);
    expect(asked.get('code_challenge_method')).toBe('S256');
    expect(bench.eventsOf('token.issued', clientId)).toHaveLength(1);

    // The next run, after the access token expired: a refresh, not the browser.
    bench.advance(900);
    const second = await cli('--method', 'tools/call', '--tool-name', NOTES_TOOL);
    expect(second.code, second.stderr).toBe(0);
    expect(notesOf(second.stdout)).toEqual(ADA_NOTES);
    expect(bench.eventsOf('refresh.rotated', clientId)).toHaveLength(1);
    expect(bench.openings()).toHaveLength(1);

    // Revocation: `--relogin` of Inspector 2.12.0 clears the stored grant and would revoke it, but
    // for a login made by the CLI it finds no stored server metadata and skips the revocation
    // silently. So the test revokes the Inspector's stored refresh token by HTTP (RFC 7009), as
    // its client, then lets `--relogin` clear the local state; an anonymous tool needs no login.
    expect(await revokeByHttp(bench, storedRefreshToken(), { clientId })).toBe(200);
    expect((await bench.example.oauth.listGrants('ada')).map((g) => g.clientId)).not.toContain(clientId);
    const third = await cli('--relogin', '--method', 'tools/call', '--tool-name', 'search_public_notes');
    expect(third.code, third.stderr).toBe(0);
    expect(bench.openings()).toHaveLength(1);
  });
});
