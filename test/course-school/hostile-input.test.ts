/**
 * ABU-05 on the reference server's own routes: NUL, unpaired surrogates and Unicode non-characters
 * are refused with 400 wherever a client can send a string (the business API's bodies, path and
 * query parameters; `/mcp`; the page forms and page queries), with a description naming the field
 * and the character, before anything reaches the data store. On PostgreSQL such a string was an
 * unauthenticated 500 (SQLSTATE 22021, 22P05), and over `/mcp` the database's own error text
 * reached anonymous callers; a failed read is now logged and answered with a generic message.
 *
 * The API is driven in process (its Hono app on a seeded memory store, with a guard that takes the
 * token for the user it names, as in api-writes.test.ts); pages and `/mcp` through a running server.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { z } from 'zod';
import { createApiApp } from '../../examples/course-school/src/api/app.js';
import { API_ROUTES } from '../../examples/course-school/src/api/route-table.js';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import type { GuardResult } from '../../examples/course-school/src/auth/bearer-guard.js';
import { createMemoryDataStore } from '../../examples/course-school/src/data/memory-store.js';
import { noHostileCharacters } from '../../examples/course-school/src/edge/hostile-text.js';
import { seed } from '../../examples/course-school/src/seed.js';
import { type ValidWrite, validWrites, withValueAt } from '../helpers/api-writes.js';
import { cookiesOf, hiddenField, login, startTestServer } from '../helpers/course-school.js';

const ISSUER = 'http://127.0.0.1:9';
/** One of each kind: NUL, an unpaired surrogate, a non-character. */
const HOSTILE = [
  ['U+0000', 'a\u0000b'],
  ['U+D800', 'a\ud800b'],
  ['U+FFFF', 'a\uffffb'],
] as const;

describe('the business API refuses hostile characters in every string it takes (ABU-05)', () => {
  let api: ReturnType<typeof createApiApp>;
  let writes: ValidWrite[];

  /** A guard that accepts `Bearer usr_x` as user usr_x (the owner is usr_ada). */
  const guard = {
    resource: ISSUER,
    async check(request: { headers: Readonly<Record<string, unknown>> }): Promise<GuardResult> {
      const token = String(request.headers.authorization ?? '').slice('Bearer '.length);
      return {
        ok: true,
        principal: {
          anonymous: false,
          token,
          subject: token,
          clientId: 'client',
          scope: [],
          audience: [ISSUER],
          expiresAt: 0,
          issuedAt: 0,
          jti: 'jti',
        },
      };
    },
  };
  const send = async (method: string, path: string, body?: unknown) => {
    const response = await api.request(`/api/v1${path}`, {
      method,
      headers: { authorization: 'Bearer usr_ada', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return {
      status: response.status,
      body: (await response.json().catch(() => ({}))) as Record<string, unknown>,
    };
  };

  beforeEach(async () => {
    const data = createMemoryDataStore();
    await seed(data, Date.now(), { demo: true });
    api = createApiApp(API_ROUTES, { guard, services: { data, issuer: ISSUER, now: Date.now } });
    writes ??= await validWrites(async (path) => (await send('GET', path)).body);
  });

  it('has a valid body for every create and update, which the API takes as it is', async () => {
    expect(writes.length).toBeGreaterThanOrEqual(25);
    for (const write of writes) {
      const { status, body } = await send(write.method, write.path, write.body);
      // A create may collide with the seeded record it copies (a unique code or email): 409.
      expect([200, 201, 409], `${write.method} ${write.path}: ${JSON.stringify(body)}`).toContain(status);
    }
  });

  it.each(HOSTILE)(
    'refuses %s in any field of every create and update: 400 naming the field',
    async (code, bad) => {
      for (const write of writes) {
        for (const field of write.fields) {
          const { status, body } = await send(write.method, write.path, withValueAt(write.body, field, bad));
          const where = `${write.method} ${write.path} ${field.join('.')}`;
          expect(status, `${where}: ${JSON.stringify(body)}`).toBe(400);
          expect(body.error).toBe('invalid_request');
          // The field itself is named, and the character when the field takes free text.
          expect(JSON.stringify(body.issues), where).toContain(`body.${field.join('.')}`);
        }
      }
      const { body } = await send('POST', '/courses', { ...writes[0]!.body, slug: 'fresh', title: bad });
      expect(body.error_description).toBe(
        `the request is invalid: body.title contains ${code}, which is not accepted (NUL, unpaired surrogates and Unicode non-characters never are)`,
      );
    },
  );

  it('refuses them in query and path parameters: 400, before any read', async () => {
    for (const encoded of ['%00', '%EF%BF%BF', 'x%00']) {
      for (const route of API_ROUTES.filter((r) => r.method === 'GET' && r.query !== undefined)) {
        const names = Object.keys((route.query as z.ZodObject).shape);
        if (route.path.includes('{')) continue;
        for (const name of names.filter((n) => n !== 'limit')) {
          const { status, body } = await send('GET', `${route.path}?${name}=${encoded}`);
          expect(status, `${route.path}?${name}=${encoded}`).toBe(400);
          expect(body.error).toBe('invalid_request');
        }
      }
      expect((await send('GET', `/courses/crs_${encoded}`)).status).toBe(400);
    }
    const { body } = await send('GET', '/courses?q=%00');
    expect(body.error_description).toBe(
      'the request is invalid: query.q contains U+0000, which is not accepted (NUL, unpaired surrogates and Unicode non-characters never are)',
    );
  });

  it('every string a route takes (parameters, query, body, at any depth) carries the check', () => {
    const unchecked: string[] = [];
    const walk = (schema: z.ZodType, where: string): void => {
      const def = (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
      switch (def.type) {
        case 'string': {
          const checks = (def.checks ?? []) as { _zod: { check: unknown } }[];
          if (!checks.some((c) => c._zod.check === noHostileCharacters)) unchecked.push(where);
          return;
        }
        case 'object':
          for (const [key, member] of Object.entries(def.shape as Record<string, z.ZodType>))
            walk(member, `${where}.${key}`);
          return;
        case 'array':
          walk(def.element as z.ZodType, `${where}[]`);
          return;
        case 'optional':
        case 'nullable':
        case 'default':
        case 'prefault':
        case 'readonly':
          walk(def.innerType as z.ZodType, where);
          return;
        case 'pipe':
          walk(def.in as z.ZodType, where);
          walk(def.out as z.ZodType, where);
          return;
        case 'union':
          for (const option of def.options as z.ZodType[]) walk(option, where);
          return;
        case 'record':
          walk(def.keyType as z.ZodType, `${where}{key}`);
          walk(def.valueType as z.ZodType, `${where}{}`);
          return;
        default:
          // Numbers, booleans, enums and literals hold no client text.
          return;
      }
    };
    for (const route of API_ROUTES) {
      const name = `${route.method} ${route.path}`;
      if (route.params !== undefined) walk(route.params, `${name} path`);
      if (route.query !== undefined) walk(route.query, `${name} query`);
      if (route.body?.kind === 'json') walk(route.body.schema, `${name} body`);
    }
    expect(unchecked).toEqual([]);
  });
});

describe('pages and /mcp of the running server refuse hostile characters (ABU-05)', () => {
  let school: CourseSchoolServer;
  const errors: string[] = [];

  beforeAll(async () => {
    school = await startTestServer();
  });
  afterAll(() => school?.close());
  beforeEach(() => {
    errors.length = 0;
    vi.spyOn(console, 'error').mockImplementation((line: unknown) => {
      errors.push(String(line));
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** Posts the login form as a browser would (its CSRF cookie and field), with these values. */
  async function postLogin(fields: Record<string, string>): Promise<Response> {
    const form = await fetch(`${school.issuer}/login`);
    const html = await form.text();
    const cookie = [...cookiesOf(form)].map(([name, c]) => `${name}=${c.value}`).join('; ');
    return fetch(`${school.issuer}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: school.issuer },
      body: new URLSearchParams({ csrf_token: hiddenField(html, 'csrf_token'), ...fields }),
    });
  }

  it.each([
    ['email', { email: 'ada\u0000@example.com', password: 'ada-lovelace' }],
    ['password', { email: 'ada@example.com', password: 'ada-lovelace\u0000' }],
    ['email', { email: 'ada@example.com\uffff', password: 'x' }],
    ['return_to', { email: 'ada@example.com', password: 'ada-lovelace', return_to: '/account\u0000' }],
  ])('the login form: a hostile %s is a 400 page, before the database is asked', async (field, fields) => {
    const response = await postLogin(fields);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await response.text();
    expect(page).toContain(`The form was not filled in as expected: ${field} contains U+`);
    expect(response.headers.get('set-cookie') ?? '').not.toContain('cs_session=');
  });

  it('page queries: a hostile login_hint or return_to is a 400 page', async () => {
    for (const query of ['login_hint=%00', 'return_to=%2F%EF%BF%BF', 'reauthenticate=1%00']) {
      const response = await fetch(`${school.issuer}/login?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.text()).toContain('The address of this page is not valid: the query parameter');
    }
    expect((await fetch(`${school.issuer}/login?login_hint=ada%40example.com`)).status).toBe(200);
  });

  it('the account forms: a hostile grant_id or csrf_token is a 400 page, and the session stays', async () => {
    const { cookie } = await login(school.issuer, 'ada@example.com', 'ada-lovelace');
    const account = await (await fetch(`${school.issuer}/account`, { headers: { cookie: cookie! } })).text();
    const csrf = hiddenField(account, 'csrf_token');
    const post = (path: string, body: string) =>
      fetch(`${school.issuer}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          cookie: cookie!,
          origin: school.issuer,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body,
      });
    for (const [path, body] of [
      ['/account/apps/revoke', `csrf_token=${csrf}&grant_id=grt%00x`],
      ['/account/apps/revoke', `csrf_token=${csrf}&grant_id=%EF%B7%90`],
      ['/logout', `csrf_token=${csrf}%00`],
    ] as const) {
      const response = await post(path, body);
      expect(response.status, `${path} ${body}`).toBe(400);
      expect(await response.text()).toContain('contains U+');
    }
    expect((await fetch(`${school.issuer}/account`, { headers: { cookie: cookie! } })).status).toBe(200);
    expect(errors).toEqual([]);
  });

  const mcp = (message: unknown) =>
    fetch(`${school.issuer}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(message),
    });

  it.each([
    [{ name: 'search_courses', arguments: { query: '\u0000' } }, 'params.arguments.query contains U+0000'],
    [
      { name: 'get_course', arguments: { course_id: 'crs_\ud800' } },
      'params.arguments.course_id contains U+D800',
    ],
    [
      { name: 'get_course', arguments: { ['\ufdd0']: 'x' } },
      'a member name in params.arguments contains U+FDD0',
    ],
  ])('/mcp: hostile tool arguments are a 400 JSON-RPC error naming where (%j)', async (params, message) => {
    const response = await mcp({ jsonrpc: '2.0', id: 7, method: 'tools/call', params });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32602,
        message: `${message}, which is not accepted (NUL, unpaired surrogates and Unicode non-characters never are)`,
      },
    });
  });

  it('/mcp: a hostile method, id or resource URI is refused too', async () => {
    const method = await mcp({ jsonrpc: '2.0', id: 1, method: 'tools/\u0000call' });
    expect(method.status).toBe(400);
    expect(await method.json()).toMatchObject({ id: 1, error: { code: -32600 } });
    const id = await mcp({ jsonrpc: '2.0', id: 'a\u0000', method: 'tools/list' });
    expect(await id.json()).toMatchObject({
      id: null,
      error: { code: -32600, message: expect.stringMatching(/^id contains U\+0000/) },
    });
    const uri = await mcp({
      jsonrpc: '2.0',
      id: 2,
      method: 'resources/read',
      params: { uri: 'course-school://courses/crs_\uffff' },
    });
    expect(uri.status).toBe(400);
  });

  it('/mcp: a failed read is logged once and answered with a generic message, never the database text', async () => {
    const leak = 'invalid byte sequence for encoding "UTF8": 0x00 (SQLSTATE 22021) SELECT * FROM records';
    vi.spyOn(school.data, 'listRecords').mockRejectedValue(Object.assign(new Error(leak), { code: '22021' }));
    for (const [method, params] of [
      ['tools/call', { name: 'search_courses', arguments: { query: 'compiler' } }],
      ['tools/call', { name: 'list_membership_plans', arguments: {} }],
      ['resources/read', { uri: 'course-school://pricing' }],
    ] as const) {
      const response = await mcp({ jsonrpc: '2.0', id: 3, method, params });
      const text = await response.text();
      expect(text, method).not.toMatch(/SQLSTATE|invalid byte sequence|SELECT/);
      expect(text, method).toMatch(
        /the catalog could not be read right now; try again shortly \(request id [0-9a-f]{16}\)/,
      );
    }
    expect(errors).toHaveLength(3);
    for (const line of errors) {
      expect(JSON.parse(line)).toMatchObject({
        level: 'error',
        message: expect.stringMatching(/^POST \/mcp /),
      });
    }
  });
});
