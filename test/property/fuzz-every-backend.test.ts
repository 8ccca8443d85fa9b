/**
 * ABU-05 fuzz test (issue 16, item 4): generated hostile input (NUL, unpaired surrogates,
 * non-characters raw and percent-encoded, bytes that are not UTF-8, invisible and markup-laden
 * text, hostile JSON) sent to every library endpoint (authorize, the consent decision, token,
 * register, revoke, introspect, UserInfo) and to the reference server's business API, `/mcp` and
 * page forms, on every storage backend: memory, SQLite and PostgreSQL (127.0.0.1:5432, database
 * `test`; under CI=true a missing PostgreSQL fails, never skips). Any 5xx fails, and so does a
 * database's own error text in any answer.
 *
 * The reference server's generators reach its storage: every create and update of the API gets a
 * valid body with exactly one field made hostile (test/helpers/api-writes.ts), the MCP tools get
 * their real argument names (`query`, `course_id`, a course URI), and the page forms (login, the
 * consent decision, revoking an app, signing out) are posted with a valid CSRF pair and session,
 * so that only the hostile field can stop them. A value that is still hostile once decoded (a raw
 * JSON string always is; a form value percent-encoded as UTF-8 is, bytes that are not UTF-8 decode
 * to U+FFFD and are not) must be refused with 400.
 *
 * The budget is fixed: FUZZ_RUNS runs per property (default 60) with a fixed seed (FUZZ_SEED,
 * default 16), so a run is reproducible and its time bounded; raise FUZZ_RUNS to search longer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../examples/course-school/src/api/route-table.js';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { DEFAULT_LOGIN_LIMITS } from '../../examples/course-school/src/config.js';
import { SCOPE_NAMES } from '../../examples/course-school/src/scopes.js';
import { hostileCharacter } from '../../src/core/params.js';
import { createMemoryRateLimiter } from '../../src/rate-limit/memory.js';
import { memoryStorage } from '../../src/storage/memory.js';
import { postgresStorage } from '../../src/storage/postgres.js';
import { sqliteStorage } from '../../src/storage/sqlite.js';
import type { Storage } from '../../src/storage/types.js';
import { type ValidWrite, validWrites, withValueAt } from '../helpers/api-writes.js';
import { hiddenField, startTestServer } from '../helpers/course-school.js';
import { CB, Harness } from '../helpers/harness.js';
import {
  anyString,
  encodedHostile,
  hostileForm,
  hostileJsonValue,
  hostileString,
  wellFormed,
} from '../helpers/hostile.js';
import { cookieHeader, obtainTokens, signIn, siteOf } from '../helpers/school-flow.js';
import { randomSchemaName, requirePostgres } from '../helpers/services.js';
import type { TestRequest } from '../helpers/transports.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const SEED = Number(process.env.FUZZ_SEED ?? 16);
const BUDGET = { numRuns: RUNS, seed: SEED, endOnFailure: true } as const;

const postgres = await requirePostgres('the fuzz test on PostgreSQL');

/** A backend: how to open a library storage, and the reference server's variables for it. */
interface Backend {
  readonly name: string;
  open(): Promise<{ storage: Storage; close(): Promise<void> }>;
  serverEnv(): Promise<{ env: Record<string, string>; close(): Promise<void> }>;
}

const temporaryDir = () => mkdtempSync(join(tmpdir(), 'pc-fuzz-'));

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgres!.url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const BACKENDS: readonly Backend[] = [
  {
    name: 'memory',
    open: async () => {
      const storage = memoryStorage();
      return { storage, close: () => storage.close() };
    },
    serverEnv: async () => ({ env: { STORAGE: 'memory' }, close: async () => {} }),
  },
  {
    name: 'SQLite',
    open: async () => {
      const dir = temporaryDir();
      const storage = sqliteStorage({ path: join(dir, 'auth.db') });
      return {
        storage,
        async close() {
          await storage.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
    serverEnv: async () => {
      const dir = temporaryDir();
      return {
        env: { STORAGE: 'sqlite', DATA_DIR: dir },
        close: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  ...(postgres === undefined
    ? []
    : [
        {
          name: 'PostgreSQL',
          open: async () => {
            const schema = randomSchemaName();
            const storage = postgresStorage({ connectionString: postgres.url }, { schema });
            return {
              storage,
              async close() {
                await storage.close();
                await postgres.dropSchema(schema);
              },
            };
          },
          serverEnv: async () => {
            const name = `pc_fuzz_${randomSchemaName().replace(/\W/g, '_').toLowerCase()}`;
            await adminQuery(`CREATE DATABASE "${name}"`);
            const url = new URL(postgres.url);
            url.pathname = `/${name}`;
            return {
              env: { STORAGE: 'default', DATABASE_URL: url.href },
              close: () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
            };
          },
        } satisfies Backend,
      ]),
];

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** A value for a URL: hostile bytes already percent-encoded, or any well-formed string encoded. */
const urlValue = fc.oneof(encodedHostile, anyString.filter(wellFormed).map(encodeURIComponent));

/**
 * A hostile value for a query or a form, percent-encoded: one that stays hostile once decoded (NUL
 * or a non-character as UTF-8), or bytes that are not UTF-8 (decoded to U+FFFD).
 */
const hostileUrlValue = fc.oneof(hostileString.filter(wellFormed).map(encodeURIComponent), encodedHostile);

/** Whether `encoded`, decoded as a form or query value is, holds a hostile character. */
const hostileOnceDecoded = (encoded: string): boolean =>
  hostileCharacter(new URLSearchParams(`v=${encoded}`).get('v') ?? '') !== undefined;

/** A database's own error text, which no answer may carry. */
const DATABASE_TEXT =
  /SQLSTATE|syntax error at or near|invalid byte sequence|unsupported Unicode escape|SQLITE_/;

describe.each(BACKENDS)('ABU-05 fuzz: every library endpoint on $name storage, never 5xx', (backend) => {
  let h: Harness;
  let close: () => Promise<void>;
  let client: { client_id: string; client_secret?: string };
  let access = '';
  let refresh = '';

  beforeAll(async () => {
    const opened = await backend.open();
    close = opened.close;
    // A rate limiter as a deployment has one; generous, so that the fuzz reaches the handlers.
    const generous = { points: 1_000_000, durationSeconds: 60 };
    h = await Harness.start({
      storage: opened.storage,
      options: {
        rateLimiter: createMemoryRateLimiter({
          limits: {
            register: generous,
            authorize: generous,
            token: generous,
            client_auth_failure: generous,
            introspect: generous,
            revoke: generous,
            userinfo: generous,
          },
        }),
      },
    });
    const issued = await h.tokens({
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['authorization_code', 'refresh_token'],
    });
    client = issued.client;
    access = String(issued.body.access_token);
    refresh = String(issued.body.refresh_token);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await close?.();
  });

  async function expectNo5xx(request: TestRequest): Promise<void> {
    const response = await h.send({ ...request, headers: { ...request.headers, host: '127.0.0.1:4000' } });
    expect(
      response.status,
      `${request.method} ${request.url} ${String(request.body ?? '').slice(0, 120)}: ${response.body.slice(0, 200)}`,
    ).toBeLessThan(500);
  }

  const ENDPOINTS = [
    ['POST', '/api/oauth/token'],
    ['POST', '/api/oauth/revoke'],
    ['POST', '/api/oauth/introspect'],
    ['GET', '/api/oauth/userinfo'],
    ['POST', '/api/oauth/userinfo'],
    ['POST', '/oauth/authorize/decision'],
    ['GET', '/oauth/authorize'],
    ['POST', '/oauth/authorize'],
  ] as const;
  const NAMES = [
    'grant_type',
    'code',
    'client_id',
    'client_secret',
    'code_verifier',
    'code_challenge',
    'code_challenge_method',
    'redirect_uri',
    'refresh_token',
    'response_type',
    'state',
    'scope',
    'resource',
    'token',
    'token_type_hint',
    'access_token',
    'request_id',
    'csrf_token',
    'decision',
    'nonce',
    'prompt',
  ];

  it('form and query parameters: one hostile among valid ones, on every endpoint', async () => {
    const base = () => ({
      grant_type: 'refresh_token',
      refresh_token: refresh,
      client_id: client.client_id,
      client_secret: client.client_secret ?? '',
      token: access,
      response_type: 'code',
      redirect_uri: CB,
      code_challenge: 'c'.repeat(43),
      code_challenge_method: 'S256',
      scope: 'openid',
      state: 's',
      request_id: 'r'.repeat(43),
      csrf_token: 'x'.repeat(43),
      decision: 'allow',
    });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS),
        hostileForm(NAMES, base()),
        async ([method, url], form) => {
          const cookie = h.login('ada');
          await expectNo5xx(
            method === 'GET'
              ? { method, url: `${url}?${form.body}`, headers: { cookie } }
              : {
                  method,
                  url,
                  headers: { ...FORM, cookie, origin: 'http://127.0.0.1:4000' },
                  body: form.body,
                },
          );
        },
      ),
      BUDGET,
    );
  });

  it('any strings in any parameters, and hostile credentials in Authorization', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS),
        fc.array(fc.tuple(fc.constantFrom(...NAMES), urlValue), { maxLength: 6 }),
        fc.option(
          fc.oneof(
            anyString.map((s) => `Bearer ${s}`),
            anyString.map((s) => `Basic ${s}`),
          ),
          { nil: undefined },
        ),
        async ([method, url], pairs, authorization) => {
          const body = pairs.map(([name, value]) => `${name}=${value}`).join('&');
          const headers: Record<string, string> = { cookie: h.login('ada') };
          // A header value cannot carry every character: what fetch would refuse is not sent.
          if (authorization !== undefined && /^[\t\x20-\x7e\x80-\xff]*$/.test(authorization)) {
            headers.authorization = authorization;
          }
          await expectNo5xx(
            method === 'GET'
              ? { method, url: `${url}?${body}`, headers }
              : { method, url, headers: { ...FORM, ...headers }, body },
          );
        },
      ),
      BUDGET,
    );
  });

  it('register: hostile JSON anywhere in the metadata', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          'redirect_uris',
          'client_name',
          'software_id',
          'contacts',
          'scope',
          'grant_types',
          'x',
        ),
        hostileJsonValue,
        async (member, value) => {
          await expectNo5xx({
            method: 'POST',
            url: '/api/oauth/register',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ redirect_uris: [CB], [member]: value }),
          });
        },
      ),
      BUDGET,
    );
  });
});

describe.each(BACKENDS)(
  "ABU-05 fuzz: the reference server's business API, /mcp and pages on $name storage, never 5xx",
  (backend) => {
    let app: CourseSchoolServer;
    let closeEnv: () => Promise<void>;
    let token = '';
    let writes: ValidWrite[] = [];
    /** Ada's session cookie and the CSRF token of her forms. */
    let session = '';
    let sessionCsrf = '';

    beforeAll(async () => {
      const { env, close } = await backend.serverEnv();
      closeEnv = close;
      // Login throttling off too: the fuzz posts many wrong passwords from one address.
      app = await startTestServer(
        { ...env, RATE_LIMIT: 'off' },
        {
          loginLimits: {
            ...DEFAULT_LOGIN_LIMITS,
            failuresPerAddressPerDay: 1_000_000,
            consecutiveFailuresPerAccount: 1_000_000,
          },
        },
      );
      ({
        tokens: { access_token: token },
      } = await obtainTokens(siteOf(app), { scope: SCOPE_NAMES.join(' ') }));
      writes = await validWrites(async (path) => {
        const response = await fetch(`${app.issuer}/api/v1${path}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        return response.json();
      });
      session = await signIn(siteOf(app), { email: 'ada@example.com', password: 'ada-lovelace' });
      const account = await fetch(`${app.issuer}/account`, { headers: { cookie: session } });
      sessionCsrf = hiddenField(await account.text(), 'csrf_token');
    }, 60_000);
    afterAll(async () => {
      await app?.close();
      await closeEnv?.();
    });

    /** Sends a request; fails on a 5xx or a database's error text; resolves to the status. */
    async function expectNo5xx(
      method: string,
      path: string,
      body?: string,
      headers: Record<string, string> = {},
      bearer = true,
    ): Promise<number> {
      const response = await fetch(`${app.issuer}${path}`, {
        method,
        headers: { ...(bearer ? { authorization: `Bearer ${token}` } : {}), ...headers },
        ...(body === undefined ? {} : { body }),
        redirect: 'manual',
      });
      const text = await response.text();
      const what = `${method} ${path} ${String(body).slice(0, 160)}: ${response.status} ${text.slice(0, 200)}`;
      expect(response.status, what).toBeLessThan(500);
      // A database's own error text never reaches a client.
      expect(text, what).not.toMatch(DATABASE_TEXT);
      return response.status;
    }

    const routes = API_ROUTES.filter((route) => route.body?.kind !== 'binary');

    it('every business route: hostile path parameters, query and JSON body', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...routes),
          urlValue,
          fc.array(fc.tuple(fc.constantFrom('limit', 'cursor', 'q', 'status', 'search', 'x'), urlValue), {
            maxLength: 3,
          }),
          hostileJsonValue,
          async (route, segment, query, json) => {
            const path = route.path.replace(/\{[^}]+\}/g, segment);
            const search = query.map(([name, value]) => `${name}=${value}`).join('&');
            const url = `/api/v1${path}${search === '' ? '' : `?${search}`}`;
            const hasBody = route.method === 'POST' || route.method === 'PATCH';
            await expectNo5xx(
              route.method,
              url,
              hasBody ? JSON.stringify(json) : undefined,
              hasBody ? { 'content-type': 'application/json' } : {},
            );
          },
        ),
        BUDGET,
      );
    });

    it('every create and update: a valid body with exactly one hostile field is refused with 400', async () => {
      const JSON_TYPE = { 'content-type': 'application/json' };
      await fc.assert(
        fc.asyncProperty(
          fc
            .constantFrom(...writes)
            .chain((write) => fc.tuple(fc.constant(write), fc.constantFrom(...write.fields))),
          hostileString,
          fc.boolean(),
          async ([write, field], bad, append) => {
            // The hostile text alone, or after the field's valid value (which passes its pattern).
            let original: unknown = write.body;
            for (const key of field) original = (original as Record<string, unknown>)[key];
            const value = append && typeof original === 'string' ? `${original}${bad}` : bad;
            const body = JSON.stringify(withValueAt(write.body, field, value));
            const status = await expectNo5xx(write.method, `/api/v1${write.path}`, body, JSON_TYPE);
            expect(status, `${write.method} ${write.path} ${field.join('.')}: ${body.slice(0, 160)}`).toBe(
              400,
            );
          },
        ),
        BUDGET,
      );
    });

    it('every list query parameter, anonymous or not: a hostile value is refused with 400', async () => {
      const lists = API_ROUTES.filter((route) => route.method === 'GET' && route.query !== undefined);
      const names = (route: (typeof lists)[number]) =>
        Object.keys((route.query as unknown as { shape: Record<string, unknown> }).shape);
      await fc.assert(
        fc.asyncProperty(
          fc
            .constantFrom(...lists)
            .chain((route) => fc.tuple(fc.constant(route), fc.constantFrom(...names(route)))),
          hostileUrlValue,
          fc.boolean(),
          async ([route, name], value, anonymous) => {
            const path = route.path.replace(/\{[^}]+\}/g, 'crs_analytical_engines');
            const status = await expectNo5xx(
              'GET',
              `/api/v1${path}?${name}=${value}`,
              undefined,
              {},
              !anonymous,
            );
            // Anonymous callers of a route that needs a token get its 401 first.
            if (hostileOnceDecoded(value) && (route.access === 'public' || !anonymous)) {
              expect(status, `${path}?${name}=${value}`).toBe(400);
            }
          },
        ),
        BUDGET,
      );
    });

    const MCP = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

    it('/mcp: hostile JSON-RPC methods, tool names and arguments', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('tools/call', 'tools/list', 'initialize', 'resources/read'),
          fc.constantFrom('search_courses', 'get_course', 'list_membership_plans'),
          hostileJsonValue,
          anyString,
          async (method, tool, args, name) => {
            const params = method === 'tools/call' ? { name: tool, arguments: args } : args;
            // The catalog tools are read anonymously: no bearer token.
            await expectNo5xx(
              'POST',
              '/mcp',
              JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
              MCP,
              false,
            );
            await expectNo5xx(
              'POST',
              '/mcp',
              JSON.stringify({
                jsonrpc: '2.0',
                id: name,
                method: 'tools/call',
                params: { name, arguments: { course_id: name } },
              }),
              MCP,
              false,
            );
          },
        ),
        BUDGET,
      );
    });

    it('/mcp: the real tool arguments and resource URIs, hostile, are refused with 400', async () => {
      const call = (name: string, args: Record<string, unknown>) => ({
        method: 'tools/call',
        params: { name, arguments: args },
      });
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc
              .tuple(hostileString, fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }))
              .map(([query, limit]) =>
                call('search_courses', limit === undefined ? { query } : { query, limit }),
              ),
            hostileString.map((id) => call('get_course', { course_id: id })),
            hostileString.map((id) => call('get_course', { course_id: `crs_${id}` })),
            hostileString.map((id) => ({
              method: 'resources/read',
              params: { uri: `course-school://courses/${id}` },
            })),
          ),
          async (request) => {
            const body = JSON.stringify({ jsonrpc: '2.0', id: 1, ...request });
            const status = await expectNo5xx('POST', '/mcp', body, MCP, false);
            expect(status, body).toBe(400);
          },
        ),
        BUDGET,
      );
    });

    const FORM_POST = () => ({ ...FORM, origin: new URL(app.issuer).origin });

    it('the login form: a hostile email or password, with a valid CSRF pair', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(hostileUrlValue, fc.constant('ada%40example.com')),
          fc.oneof(hostileUrlValue, fc.constant('wrong')),
          async (email, password) => {
            fc.pre(email !== 'ada%40example.com' || password !== 'wrong');
            const form = await fetch(`${app.issuer}/login`);
            const csrf = hiddenField(await form.text(), 'csrf_token');
            const body = `email=${email}&password=${password}&csrf_token=${encodeURIComponent(csrf)}`;
            const status = await expectNo5xx(
              'POST',
              '/login',
              body,
              { ...FORM_POST(), cookie: cookieHeader(form) },
              false,
            );
            const hostile = hostileOnceDecoded(email) || hostileOnceDecoded(password);
            expect(status, body).toBe(hostile ? 400 : 401);
          },
        ),
        BUDGET,
      );
    });

    it('the consent decision, revoking an app and signing out: one hostile field, with a session', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(
            ['/oauth/authorize/decision', 'request_id'],
            ['/oauth/authorize/decision', 'csrf_token'],
            ['/oauth/authorize/decision', 'decision'],
            ['/account/apps/revoke', 'grant_id'],
            ['/account/apps/revoke', 'csrf_token'],
            ['/logout', 'csrf_token'],
          ),
          hostileUrlValue,
          async ([path, target], value) => {
            const fields: Record<string, string> = {
              request_id: 'r'.repeat(43),
              decision: 'allow',
              grant_id: 'grt_missing',
              csrf_token: encodeURIComponent(sessionCsrf),
              [target]: value,
            };
            const body = Object.entries(fields)
              .map(([name, v]) => `${name}=${v}`)
              .join('&');
            const status = await expectNo5xx('POST', path, body, { ...FORM_POST(), cookie: session }, false);
            if (hostileOnceDecoded(value)) expect(status, `${path} ${body}`).toBe(400);
          },
        ),
        BUDGET,
      );
      // Nothing above signed Ada out: a hostile CSRF token is refused before the session is touched.
      expect((await fetch(`${app.issuer}/account`, { headers: { cookie: session } })).status).toBe(200);
    });
  },
);
