/**
 * Scope enforcement of the reference server with real tokens, obtained by driving the flow over
 * plain HTTP (login form, consent page, decision, token endpoint): anonymous access (spec §5.5,
 * RS-01, RS-02, RS-03), a missing scope (RS-04), the right scope, audience binding between the API
 * and `/mcp` (RS-05, ATK-19), `/mcp` with tokens (RS-03, RS-06), and what a student may grant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { startTestServer } from '../helpers/course-school.js';
import {
  ADA,
  api,
  authorize,
  bearerChallenge,
  exchangeCode,
  GRACE,
  obtainTokens,
  registerClient,
  type Site,
  signIn,
  siteOf,
  type TokenSet,
} from '../helpers/school-flow.js';

let app: CourseSchoolServer;
let site: Site;
let adaCookie: string;
/** ada's tokens: identity and reads, for the API (the default resource). */
let reader: TokenSet;
/** ada's tokens with write scopes, for the API. */
let writer: TokenSet;
/** ada's tokens bound to the MCP server (`resource=$ISSUER/mcp`). */
let mcpToken: TokenSet;
/** ada's tokens explicitly bound to the API (`resource=$ISSUER`). */
let apiToken: TokenSet;

beforeAll(async () => {
  app = await startTestServer();
  site = siteOf(app);
  adaCookie = await signIn(site, ADA);
  const as = { cookie: adaCookie };
  reader = (await obtainTokens(site, { scope: 'openid courses:read account:read', user: as })).tokens;
  writer = (await obtainTokens(site, { scope: 'students:read courses:write appearance:write', user: as }))
    .tokens;
  mcpToken = (await obtainTokens(site, { scope: 'courses:read', resource: `${app.issuer}/mcp`, user: as }))
    .tokens;
  apiToken = (await obtainTokens(site, { scope: 'account:read', resource: app.issuer, user: as })).tokens;
});
afterAll(() => app.close());

const API_METADATA = () => `${app.issuer}/.well-known/oauth-protected-resource`;
const MCP_METADATA = () => `${app.issuer}/.well-known/oauth-protected-resource/mcp`;

/** A JSON-RPC POST to `/mcp`. */
function mcp(body: unknown, headers: Record<string, string> = {}, query = ''): Promise<Response> {
  return fetch(`${site.base}/mcp${query}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } },
};

describe('anonymous requests (spec §5.5)', () => {
  it('the public catalog answers 200 without a token and without a challenge (RS-01)', async () => {
    for (const path of ['/courses', '/courses/crs_compilers', '/membership-plans', '/pages']) {
      const response = await api(site, path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('www-authenticate'), path).toBeNull();
    }
  });

  it.each([
    ['GET', '/account', 'account:read'],
    ['GET', '/students', 'students:read'],
    ['POST', '/courses', 'courses:write'],
  ])(
    '%s %s needs a user: 401 with resource_metadata and scope, no error (RS-02)',
    async (method, path, scope) => {
      const response = await api(site, path, undefined, { method });
      expect(response.status).toBe(401);
      const challenge = bearerChallenge(response);
      expect(challenge).toEqual({ resource_metadata: API_METADATA(), scope });
    },
  );

  it('a bad token is never served as anonymous, not even on the public catalog (RS-03)', async () => {
    for (const token of ['not-a-token', `${reader.access_token}x`, reader.refresh_token]) {
      for (const path of ['/courses', '/account']) {
        const response = await api(site, path, token);
        expect(response.status, `${path} with ${token.slice(0, 12)}`).toBe(401);
        expect(bearerChallenge(response)).toMatchObject({
          error: 'invalid_token',
          resource_metadata: API_METADATA(),
        });
        expect(await response.text()).not.toContain('crs_compilers');
      }
    }
  });
});

describe('scopes on business routes (RS-04)', () => {
  it.each([
    ['GET', '/students', 'students:read'],
    ['GET', '/orders', 'orders:read'],
    ['GET', '/analytics/summary', 'analytics:read'],
    ['PATCH', '/school', 'school:write'],
  ])(
    '%s %s with a token lacking the scope: 403 insufficient_scope naming %s',
    async (method, path, scope) => {
      const response = await api(site, path, reader.access_token, {
        method,
        ...(method === 'PATCH'
          ? { body: JSON.stringify({ tagline: 'x' }), headers: { 'content-type': 'application/json' } }
          : {}),
      });
      expect(response.status).toBe(403);
      expect(bearerChallenge(response)).toEqual({
        error: 'insufficient_scope',
        scope,
        resource_metadata: API_METADATA(),
        error_description: expect.any(String),
      });
      expect(((await response.json()) as { error: string }).error).toBe('insufficient_scope');
    },
  );

  it('the same routes answer 200 with the right scope', async () => {
    const account = await api(site, '/account', reader.access_token);
    expect(account.status).toBe(200);
    expect(await account.json()).toMatchObject({ email: ADA.email });
    const students = await api(site, '/students', writer.access_token);
    expect(students.status).toBe(200);
    const ids = ((await students.json()) as { data: { id: string }[] }).data.map((s) => s.id);
    expect(ids).toContain('stu_grace');
    const patched = await api(site, '/appearance', writer.access_token, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ font: 'monospace' }),
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ font: 'monospace' });
  });

  it('a write scope does not imply its read scope', async () => {
    // writer has courses:write but not account:read.
    const response = await api(site, '/account', writer.access_token);
    expect(response.status).toBe(403);
    expect(bearerChallenge(response).scope).toBe('account:read');
  });
});

describe('forms of the Authorization header (RS-07, RS-09)', () => {
  it('matches the scheme case-insensitively (RS-09)', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
      const response = await fetch(`${site.base}/api/v1/account`, {
        headers: { authorization: `${scheme} ${reader.access_token}` },
      });
      expect(response.status, scheme).toBe(200);
    }
  });

  it.each([
    ['an empty token', () => 'Bearer '],
    ['a token with characters outside b64token', (t: string) => `Bearer ${t}"x`],
    ['two tokens in one header', (t: string) => `Bearer ${t}, Bearer ${t}`],
  ])('refuses %s with 400 or 401, never 200 or 500 (RS-07)', async (_what, header) => {
    for (const path of ['/courses', '/account']) {
      const response = await fetch(`${site.base}/api/v1${path}`, {
        headers: { authorization: header(reader.access_token) },
      });
      expect([400, 401], path).toContain(response.status);
    }
  });
});

describe('audience binding between the API and /mcp (RS-05, ATK-19)', () => {
  it('a token bound to $ISSUER/mcp is refused by /api/v1 with 401 invalid_token', async () => {
    for (const path of ['/courses', '/account']) {
      const response = await api(site, path, mcpToken.access_token);
      expect(response.status, path).toBe(401);
      expect(bearerChallenge(response)).toMatchObject({
        error: 'invalid_token',
        resource_metadata: API_METADATA(),
      });
    }
  });

  it('a token bound to $ISSUER is refused by /mcp with 401 invalid_token', async () => {
    for (const token of [apiToken, reader]) {
      const response = await mcp(initialize, { authorization: `Bearer ${token.access_token}` });
      expect(response.status).toBe(401);
      expect(bearerChallenge(response)).toMatchObject({
        error: 'invalid_token',
        resource_metadata: MCP_METADATA(),
      });
      expect(await response.text()).not.toContain('protocolVersion');
    }
  });

  it('each token works where it belongs', async () => {
    expect((await api(site, '/account', apiToken.access_token)).status).toBe(200);
    expect((await mcp(initialize, { authorization: `Bearer ${mcpToken.access_token}` })).status).toBe(200);
  });
});

describe('/mcp with tokens', () => {
  it('serves a valid MCP token: initialize and a catalog tool call', async () => {
    const headers = {
      authorization: `Bearer ${mcpToken.access_token}`,
      'mcp-protocol-version': '2025-06-18',
    };
    const init = await mcp(initialize, headers);
    expect(init.status).toBe(200);
    expect(JSON.stringify(await init.json())).toContain('protocolVersion');
    const call = await mcp(
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'search_courses', arguments: { query: 'compiler' } },
      },
      headers,
    );
    expect(call.status).toBe(200);
    expect(JSON.stringify(await call.json())).toContain('crs_compilers');
  });

  it('answers an invalid token with 401 invalid_token pointing at the MCP metadata (RS-03)', async () => {
    for (const token of ['forged', `${mcpToken.access_token}x`]) {
      const response = await mcp(initialize, { authorization: `Bearer ${token}` });
      expect(response.status).toBe(401);
      expect(bearerChallenge(response)).toMatchObject({
        error: 'invalid_token',
        resource_metadata: MCP_METADATA(),
      });
    }
  });

  it('ignores ?access_token=: a bad one there is not even looked at (RS-06)', async () => {
    // In the header this value is refused (previous test); in the query it is no credential at all.
    const response = await mcp(initialize, {}, '?access_token=forged');
    expect(response.status).toBe(200);
    expect(response.headers.get('www-authenticate')).toBeNull();
  });
});

describe('what a student may grant', () => {
  const requested = 'openid courses:read courses:write students:read subscriptions:write';

  /** The scope names of the list that follows `marker` on a consent page. */
  const listAfter = (page: string, marker: string): string[] => {
    const start = page.indexOf(marker);
    if (start === -1) return [];
    const list = /<ul[^>]*>([\s\S]*?)<\/ul>/.exec(page.slice(start))?.[1] ?? '';
    return [...list.matchAll(/<code>([^<]+)<\/code>/g)].map((m) => m[1]!);
  };

  it('grace is not offered, and does not get, the school-administration scopes ada gets', async () => {
    const redirectUri = 'http://127.0.0.1:49152/callback';
    const clientId = await registerClient(site, redirectUri, { client_name: 'Grading app' });

    const asGrace = await authorize(site, { clientId, redirectUri, scope: requested }, GRACE);
    expect(listAfter(asGrace.consent, 'wants to:')).toEqual([
      'openid',
      'courses:read',
      'subscriptions:write',
    ]);
    // The page says what she cannot grant, rather than dropping it silently (RFC 6749 §3.3).
    expect(asGrace.consent).toContain('Your account cannot grant these');
    expect(listAfter(asGrace.consent, 'Your account cannot grant')).toEqual([
      'courses:write',
      'students:read',
    ]);
    const graceTokens = await exchangeCode(site, clientId, redirectUri, asGrace);
    expect(graceTokens.scope.split(' ').sort()).toEqual(['courses:read', 'openid', 'subscriptions:write']);

    const asAda = await authorize(site, { clientId, redirectUri, scope: requested }, { cookie: adaCookie });
    expect(asAda.consent).not.toContain('cannot grant');
    const adaTokens = await exchangeCode(site, clientId, redirectUri, asAda);
    expect(adaTokens.scope.split(' ').sort()).toEqual(requested.split(' ').sort());

    // The API follows the token: grace's cannot do what ada's can.
    expect((await api(site, '/students', adaTokens.access_token)).status).toBe(200);
    const refused = await api(site, '/students', graceTokens.access_token);
    expect(refused.status).toBe(403);
    expect(bearerChallenge(refused)).toMatchObject({ error: 'insufficient_scope', scope: 'students:read' });
  });

  it('a refresh cannot widen grace’s grant to a scope she was not granted (ATK-21)', async () => {
    const { clientId, tokens } = await obtainTokens(site, { scope: requested, user: GRACE });
    const response = await fetch(`${site.base}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: clientId,
        scope: 'courses:read courses:write',
      }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_scope' });
  });
});
