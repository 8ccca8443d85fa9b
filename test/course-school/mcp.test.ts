/**
 * `/mcp` with the official MCP client: anonymous catalog reads, and the transport rules of
 * CONFORMANCE §9 (RS-01, RS-03, RS-10, RS-11, ATK-47).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { startTestServer } from '../helpers/course-school.js';

let app: CourseSchoolServer;
let client: Client;

beforeAll(async () => {
  app = await startTestServer({ MCP_ALLOWED_ORIGINS: 'https://agent.example' });
  client = new Client({ name: 'portcullis-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${app.issuer}/mcp`)));
});
afterAll(async () => {
  await client.close();
  await app.close();
});

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
};
const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${app.issuer}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('catalog tools, read anonymously with the MCP SDK client (RS-01)', () => {
  it('lists the three catalog tools, all read-only', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'get_course',
      'list_membership_plans',
      'search_courses',
    ]);
    expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
  });

  it('searches published courses', async () => {
    const result = await client.callTool({ name: 'search_courses', arguments: { query: 'compiler' } });
    const courses = (result.structuredContent as { courses: { id: string; price: string }[] }).courses;
    expect(courses).toEqual([expect.objectContaining({ id: 'crs_compilers', price: '$99.00' })]);
    const all = await client.callTool({ name: 'search_courses', arguments: {} });
    const ids = (all.structuredContent as { courses: { id: string }[] }).courses.map((c) => c.id);
    expect(ids).toEqual(['crs_analytical_engines', 'crs_compilers', 'crs_debugging']);
  });

  it('reads a course with its curriculum outline, and refuses drafts', async () => {
    const result = await client.callTool({
      name: 'get_course',
      arguments: { course_id: 'crs_analytical_engines' },
    });
    const course = result.structuredContent as {
      title: string;
      outline: { sections: { title: string }[]; lesson_count: number };
    };
    expect(course.title).toBe('Introduction to Analytical Engines');
    expect(course.outline.sections.map((s) => s.title)).toEqual(['The machine', 'Programs']);
    expect(course.outline.lesson_count).toBe(4);
    const draft = await client.callTool({
      name: 'get_course',
      arguments: { course_id: 'crs_bernoulli_advanced' },
    });
    expect(draft.isError).toBe(true);
  });

  it('lists public membership plans only', async () => {
    const result = await client.callTool({ name: 'list_membership_plans', arguments: {} });
    const plans = (result.structuredContent as { plans: { id: string }[] }).plans.map((p) => p.id);
    expect(plans).toEqual(['pln_free', 'pln_monthly', 'pln_yearly']);
  });

  it('offers courses and pricing as resources', async () => {
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain('course-school://courses/crs_compilers');
    const course = await client.readResource({ uri: 'course-school://courses/crs_compilers' });
    expect(JSON.parse((course.contents[0] as { text: string }).text).title).toBe('Compilers from Scratch');
    const pricing = await client.readResource({ uri: 'course-school://pricing' });
    expect((pricing.contents[0] as { text: string }).text).toContain('Pro monthly');
  });
});

describe('transport rules', () => {
  it('answers an anonymous initialize with 200 and no challenge (RS-01)', async () => {
    const response = await post(initialize);
    expect(response.status).toBe(200);
    expect(response.headers.get('www-authenticate')).toBeNull();
    expect(response.headers.get('mcp-session-id')).toBeNull();
  });

  it('refuses a foreign Origin with 403 (RS-10, ATK-47)', async () => {
    for (const origin of ['http://attacker.example', 'https://evil.example', 'null']) {
      expect((await post(initialize, { origin })).status, origin).toBe(403);
    }
  });

  it('accepts its own origin and allow-listed ones', async () => {
    expect((await post(initialize, { origin: new URL(app.issuer).origin })).status).toBe(200);
    expect((await post(initialize, { origin: 'https://agent.example' })).status).toBe(200);
  });

  it('refuses an unsupported MCP-Protocol-Version with 400 (RS-11)', async () => {
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    expect((await post(list, { 'mcp-protocol-version': '1999-01-01' })).status).toBe(400);
    expect((await post(list, { 'mcp-protocol-version': '2025-06-18' })).status).toBe(200);
  });

  it('accepts a notification with 202 and no body (RS-11)', async () => {
    const response = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
  });

  it('answers GET and DELETE with 405 and Allow: POST (RS-11)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${app.issuer}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
  });

  it('answers invalid JSON with a 400 JSON-RPC parse error', async () => {
    const response = await post('{"jsonrpc":');
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });

  it('ignores access_token in the query: no credential, served as anonymous (RS-06)', async () => {
    const response = await fetch(`${app.issuer}/mcp?access_token=abc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initialize),
    });
    expect(response.status).toBe(200);
  });

  it('never serves a request with a bearer token as anonymous (RS-03)', async () => {
    const response = await post(initialize, { authorization: 'Bearer forged' });
    expect([401, 503]).toContain(response.status);
    expect(await response.text()).not.toContain('protocolVersion');
  });

  it('has its protected resource metadata at the path-inserted URL (MD-15)', async () => {
    const doc = (await (
      await fetch(`${app.issuer}/.well-known/oauth-protected-resource/mcp`)
    ).json()) as Record<string, unknown>;
    expect(doc.resource).toBe(`${app.issuer}/mcp`);
    expect(doc.authorization_servers).toEqual([app.issuer]);
  });
});
