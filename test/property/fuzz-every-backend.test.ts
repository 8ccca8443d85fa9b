/**
 * ABU-05 fuzz test (issue 16, item 4): generated hostile input (NUL, unpaired surrogates,
 * non-characters raw and percent-encoded, bytes that are not UTF-8, invisible and markup-laden
 * text, hostile JSON) sent to every library endpoint (authorize, the consent decision, token,
 * register, revoke, introspect, UserInfo) and to the reference server's business API and `/mcp`, on
 * every storage backend: memory, SQLite and PostgreSQL (127.0.0.1:5432, database `test`; under
 * CI=true a missing PostgreSQL fails, never skips). Any 5xx fails.
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
import { SCOPE_NAMES } from '../../examples/course-school/src/scopes.js';
import { createMemoryRateLimiter } from '../../src/rate-limit/memory.js';
import { memoryStorage } from '../../src/storage/memory.js';
import { postgresStorage } from '../../src/storage/postgres.js';
import { sqliteStorage } from '../../src/storage/sqlite.js';
import type { Storage } from '../../src/storage/types.js';
import { startTestServer } from '../helpers/course-school.js';
import { CB, Harness } from '../helpers/harness.js';
import { anyString, encodedHostile, hostileForm, hostileJsonValue, wellFormed } from '../helpers/hostile.js';
import { obtainTokens, siteOf } from '../helpers/school-flow.js';
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
  "ABU-05 fuzz: the reference server's business API and /mcp on $name storage, never 5xx",
  (backend) => {
    let app: CourseSchoolServer;
    let closeEnv: () => Promise<void>;
    let token = '';

    beforeAll(async () => {
      const { env, close } = await backend.serverEnv();
      closeEnv = close;
      app = await startTestServer({ ...env, RATE_LIMIT: 'off' });
      ({
        tokens: { access_token: token },
      } = await obtainTokens(siteOf(app), { scope: SCOPE_NAMES.join(' ') }));
    }, 60_000);
    afterAll(async () => {
      await app?.close();
      await closeEnv?.();
    });

    async function expectNo5xx(
      method: string,
      path: string,
      body?: string,
      headers: Record<string, string> = {},
      bearer = true,
    ) {
      const response = await fetch(`${app.issuer}${path}`, {
        method,
        headers: { ...(bearer ? { authorization: `Bearer ${token}` } : {}), ...headers },
        ...(body === undefined ? {} : { body }),
        redirect: 'manual',
      });
      const text = await response.text();
      expect(
        response.status,
        `${method} ${path} ${String(body).slice(0, 120)}: ${text.slice(0, 200)}`,
      ).toBeLessThan(500);
      // A database's own error text never reaches a client.
      expect(text).not.toMatch(/SQLSTATE|syntax error at or near|invalid byte sequence|SQLITE_/);
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
            const MCP = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
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
                params: { name, arguments: { courseId: name } },
              }),
              MCP,
              false,
            );
          },
        ),
        BUDGET,
      );
    });
  },
);
