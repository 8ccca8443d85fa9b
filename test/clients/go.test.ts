/**
 * Go's golang.org/x/oauth2 from Debian (golang-golang-x-oauth2-dev, GOPATH mode), unmodified and
 * with its defaults, against examples/mcp-server. The program (test/clients/go/) discovers,
 * registers a confidential client (x/oauth2 auto-detects client authentication and tries HTTP
 * Basic first: `client_secret_basic`), opens `$BROWSER` at the library's authorization URL (PKCE
 * S256 and `resource` as extra parameters), where Chromium signs in and allows, exchanges the
 * code, calls the MCP tool with the library's HTTP client, refreshes through the library's token
 * source, and revokes by HTTP (x/oauth2 has no revocation; RFC 7009).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADA_NOTES, type ClientBench, requireClient, run, startBench, steps } from './matrix.js';

let bench: ClientBench;
beforeAll(async () => {
  bench = await startBench();
});
afterAll(() => bench.close());

describe('golang.org/x/oauth2 (Debian package, default settings)', () => {
  it('discovery, registration, browser sign-in and consent, code exchange, MCP call, refresh, revocation', async (ctx) => {
    const go = requireClient('go', (note) => ctx.skip(note));
    const result = await run(go.binary, [bench.mcp], { env: bench.env });
    expect(result.code, result.stderr + result.stdout).toBe(0);
    const s = steps(result.stdout);

    expect(s.discovery).toMatchObject({ resource: bench.mcp, scopes: ['notes:read'], issuer: bench.origin });
    expect(s.registration).toMatchObject({ auth: 'client_secret_basic' });
    const clientId = s.registration!.client_id as string;
    const openings = await bench.openedSince(0, 1);
    expect(openings).toHaveLength(1);
    expect(openings[0]!.error).toBeUndefined();
    const asked = new URL(openings[0]!.opened).searchParams;
    expect(asked.get('scope')).toBe('notes:read');
    expect(asked.get('resource')).toBe(bench.mcp);

    expect(s.token).toMatchObject({ scope: 'notes:read', refresh: true });
    expect(s.mcp).toMatchObject({ status: 200, notes: ADA_NOTES });
    expect(s.refresh).toMatchObject({ rotated: true, new_access: true });
    expect(bench.eventsOf('refresh.rotated', clientId)).toHaveLength(1);
    expect(s['mcp-after-refresh']).toMatchObject({ status: 200, notes: ADA_NOTES });
    expect(s.revocation).toMatchObject({ status: 200, by: 'http' });
    expect(s['mcp-after-revocation']).toMatchObject({ status: 401 });
    expect((await bench.example.oauth.listGrants('ada')).map((g) => g.clientId)).not.toContain(clientId);
  });
});
