/**
 * Python's OAuth clients from Debian, unmodified and with their defaults, against
 * examples/mcp-server: authlib (python3-authlib) and requests-oauthlib (python3-requests-oauthlib).
 * Each script (test/clients/python/) discovers the MCP server's metadata and its authorization
 * server, registers a confidential client (both libraries authenticate with HTTP Basic by
 * default: `client_secret_basic`), opens the browser at the library's authorization URL (PKCE
 * S256, `resource`), where Chromium signs in and allows, exchanges the code, calls the MCP tool
 * that needs a user with the library's session, refreshes, and revokes: authlib itself;
 * requests-oauthlib has no revocation, so its script posts it (RFC 7009).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PYTHON } from '../../scripts/client-matrix.mjs';
import { ADA_NOTES, type ClientBench, requireClient, run, startBench, steps } from './matrix.js';

const scripts = fileURLToPath(new URL('./python/', import.meta.url));

let bench: ClientBench;
beforeAll(async () => {
  bench = await startBench();
});
afterAll(() => bench.close());

describe.each([
  ['authlib', 'authlib_client.py', 'authlib'],
  ['requests-oauthlib', 'requests_oauthlib_client.py', 'http'],
])('%s (Debian package, default settings)', (_name, script, revokedBy) => {
  it('discovery, registration, browser sign-in and consent, code exchange, MCP call, refresh, revocation', async (ctx) => {
    requireClient('python', (note) => ctx.skip(note));
    const opened = bench.openings().length;
    const result = await run(PYTHON, [join(scripts, script), bench.mcp], {
      cwd: scripts,
      // oauthlib refuses http endpoints unless told; this issuer is a loopback one.
      env: { ...bench.env, OAUTHLIB_INSECURE_TRANSPORT: '1' },
    });
    expect(result.code, result.stderr).toBe(0);
    const s = steps(result.stdout);

    expect(s.discovery).toMatchObject({ resource: bench.mcp, scopes: ['notes:read'], issuer: bench.origin });
    expect(s.registration).toMatchObject({ auth: 'client_secret_basic' });
    const clientId = s.registration!.client_id as string;
    const openings = await bench.openedSince(opened, 1);
    expect(openings).toHaveLength(1);
    expect(openings[0]!.error).toBeUndefined();
    const asked = new URL(openings[0]!.opened).searchParams;
    expect(asked.get('client_id')).toBe(clientId);
    expect(asked.get('scope')).toBe('notes:read');
    expect(asked.get('code_challenge_method')).toBe('S256');
    expect(asked.get('resource')).toBe(bench.mcp);

    expect(s.token).toMatchObject({ scope: 'notes:read', refresh: true });
    expect(s.mcp).toEqual({ step: 'mcp', status: 200, notes: ADA_NOTES });
    expect(s.refresh).toMatchObject({ rotated: true, new_access: true });
    expect(bench.eventsOf('refresh.rotated', clientId)).toHaveLength(1);
    expect(s['mcp-after-refresh']).toMatchObject({ status: 200, notes: ADA_NOTES });
    expect(s.revocation).toMatchObject({ status: 200, by: revokedBy });
    // Revoking the refresh token ended the grant and its access tokens (RFC 7009 §2.1).
    expect(s['mcp-after-revocation']).toMatchObject({ status: 401 });
    expect((await bench.example.oauth.listGrants('ada')).map((g) => g.clientId)).not.toContain(clientId);
  });
});
