/**
 * The reference server's `/mcp` is an anonymous catalog: its tools need no sign-in, and its
 * protected-resource metadata lists only the catalog's reads. An MCP client that signs in there
 * anyway (a host's "sign in" button: the MCP TypeScript SDK's `auth()` without a challenge) takes
 * its scopes from that metadata (MCP authorization, "Scope Selection Strategy"), so it asks for
 * those and never for the school's administration or write scopes, which the API's metadata lists.
 * Through the browser: the school's login form and the library's consent page, in Chromium.
 */
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { MCP_SCOPES } from '../../examples/course-school/src/oauth.js';
import { SCOPE_NAMES } from '../../examples/course-school/src/scopes.js';
import { startTestServer } from '../helpers/course-school.js';
import { ADA } from '../helpers/school-flow.js';
import { type ClientBench, requireClient, startBench } from './matrix.js';
import { type DesktopApp, startDesktopApp } from './sdk-app.js';

let school: CourseSchoolServer;
let bench: ClientBench;
let app: DesktopApp;

beforeAll(async () => {
  school = await startTestServer();
  // The bench's example server goes unused here; its home, browser and opener log serve the school.
  bench = await startBench();
  app = await startDesktopApp({ ...bench.env, PORTCULLIS_OPENER_LOGIN: JSON.stringify(ADA) });
});
afterAll(async () => {
  await app.close();
  await bench.close();
  await school.close();
});

describe("the reference server's /mcp metadata, as an MCP client reads it", () => {
  it('lists the catalog reads for /mcp and every scope for the API (RFC 9728 §2)', async () => {
    const metadata = async (path: string) =>
      ((await (await fetch(`${school.issuer}${path}`)).json()) as { scopes_supported?: string[] })
        .scopes_supported;
    expect(await metadata('/.well-known/oauth-protected-resource/mcp')).toEqual([...MCP_SCOPES]);
    expect(await metadata('/.well-known/oauth-protected-resource')).toEqual([...SCOPE_NAMES]);
  });

  it('the MCP SDK signing in at /mcp asks for those reads only, and its token works there', async (ctx) => {
    requireClient('chromium', (note) => ctx.skip(note));
    const provider = app.provider;
    const serverUrl = `${school.issuer}/mcp`;
    expect(await auth(provider, { serverUrl })).toBe('REDIRECT');
    const [opening] = await bench.openedSince(0, 1);
    expect(opening!.error).toBeUndefined();
    const asked = new URL(opening!.opened).searchParams;
    expect(asked.get('scope')).toBe(MCP_SCOPES.join(' '));
    expect(asked.get('resource')).toBe(serverUrl);
    for (const admin of ['students:read', 'students:write', 'school:write', 'coupons:write', 'orders:read']) {
      expect(asked.get('scope')!.split(' ')).not.toContain(admin);
    }

    expect(await auth(provider, { serverUrl, authorizationCode: await provider.nextCode() })).toBe(
      'AUTHORIZED',
    );
    expect(provider.saved?.scope).toBe(MCP_SCOPES.join(' '));
    const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
    const client = new Client({ name: 'sdk-desktop-app', version: '1.0.0' });
    await client.connect(transport);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('search_courses');
    await client.close();
  });
});
