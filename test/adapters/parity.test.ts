/**
 * Adapter parity (STYLE.md convention 6): one table of scenarios runs through `server.handle` and
 * over real HTTP through every adapter: node:http (`toNodeHandler`, on @hono/node-server's request
 * listener), the Fetch handler (served by @hono/node-server), Express, and Express behind
 * `express.json()` and `express.urlencoded({ extended: true })` that keep the raw body
 * (`verify` storing `req.rawBody`). Every transport must answer with the same status, the same
 * relevant headers and the same body. Express behind parsers that keep nothing must answer the same
 * too, except where a parser read the body: there, `400 invalid_request` telling the operator to
 * mount the router first; never an answer computed from the parser's re-interpretation.
 */
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExpressRouter } from '../../src/adapters/express.js';
import type { AuthorizationServer } from '../../src/server.js';
import { CB, form, Harness, ISSUER, pkce } from '../helpers/harness.js';
import {
  rawHttp,
  type TestRequest,
  type TestResponse,
  TRANSPORTS,
  type Transport,
} from '../helpers/transports.js';

/** The headers a client acts on. */
const RELEVANT_HEADERS = [
  'content-type',
  'cache-control',
  'pragma',
  'allow',
  'www-authenticate',
  'retry-after',
  'location',
  'access-control-allow-origin',
  'access-control-allow-methods',
  'content-security-policy',
  'x-frame-options',
  'referrer-policy',
  'x-content-type-options',
];

/** Values that are random by design, replaced so that responses can be compared. */
const RANDOM_MEMBERS = ['client_id', 'client_secret'];

interface Normalised {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

function normalise(response: TestResponse): Normalised {
  const headers: Record<string, string> = {};
  for (const name of RELEVANT_HEADERS) {
    const value = response.headers[name];
    if (value !== undefined) headers[name] = value;
  }
  if (headers.location !== undefined) {
    headers.location = headers.location.replace(/request_id%3D[A-Za-z0-9_-]+/, 'request_id%3D<random>');
  }
  let body: unknown = response.body;
  if ((headers['content-type'] ?? '').startsWith('application/json') && response.body !== '') {
    const parsed = JSON.parse(response.body) as Record<string, unknown>;
    for (const member of RANDOM_MEMBERS) {
      if (typeof parsed[member] === 'string') parsed[member] = `<random ${member}>`;
    }
    body = parsed;
  }
  return { status: response.status, headers, body };
}

interface Context {
  /** A public client registered on the shared server before the table runs. */
  clientId: string;
}

interface Scenario {
  name: string;
  request: (ctx: Context) => TestRequest;
  /** The status every transport must answer with. */
  status: number;
  /** The OAuth `error` of a JSON error response. */
  error?: string;
  /** Further assertions on the (normalised) answer. */
  check?: (answer: Normalised) => void;
  /**
   * The path is not the server's: `server.handle` returns null (the in-process transport makes
   * that a bare 404) and each adapter passes the request to its host's fallback, so only the status
   * and, between adapters, the body are compared.
   */
  notOurs?: boolean;
  /**
   * A body parser mounted before the router refuses the request itself (Express answers with its
   * own error page), so the scenario is not run behind parsers.
   */
  parserRefuses?: boolean;
}

const JSON_TYPE = { 'content-type': 'application/json' };
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' };
const basic = (id: string, secret: string) => `Basic ${btoa(`${id}:${secret}`)}`;
const verifier = pkce();

function tokenForm(ctx: Context, extra: Record<string, string> = {}): string {
  return form({
    grant_type: 'authorization_code',
    code: 'a-code-that-was-never-issued',
    redirect_uri: CB,
    client_id: ctx.clientId,
    code_verifier: verifier.verifier,
    ...extra,
  });
}

const SCENARIOS: Scenario[] = [
  {
    name: 'GET authorization server metadata',
    request: () => ({ method: 'GET', url: '/.well-known/oauth-authorization-server' }),
    status: 200,
    check: (a) => {
      expect(a.headers['access-control-allow-origin']).toBe('*');
      expect((a.body as Record<string, unknown>).issuer).toBe(ISSUER);
    },
  },
  {
    name: 'GET OpenID configuration',
    request: () => ({ method: 'GET', url: '/.well-known/openid-configuration' }),
    status: 200,
  },
  {
    name: 'GET protected resource metadata (root)',
    request: () => ({ method: 'GET', url: '/.well-known/oauth-protected-resource' }),
    status: 200,
  },
  {
    name: 'GET protected resource metadata (/mcp)',
    request: () => ({ method: 'GET', url: '/.well-known/oauth-protected-resource/mcp' }),
    status: 200,
  },
  {
    name: 'GET JWKS',
    request: () => ({ method: 'GET', url: '/.well-known/jwks.json' }),
    status: 200,
    check: (a) => expect((a.body as { keys: unknown[] }).keys.length).toBeGreaterThan(0),
  },
  {
    name: 'HEAD authorization server metadata',
    request: () => ({ method: 'HEAD', url: '/.well-known/oauth-authorization-server' }),
    status: 200,
    check: (a) => expect(a.body).toBe(''),
  },
  {
    name: 'OPTIONS preflight on the metadata',
    request: () => ({
      method: 'OPTIONS',
      url: '/.well-known/oauth-authorization-server',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    }),
    status: 204,
    check: (a) => {
      expect(a.headers['access-control-allow-origin']).toBe('*');
      expect(a.body).toBe('');
    },
  },
  {
    name: 'POST to the metadata',
    request: () => ({
      method: 'POST',
      url: '/.well-known/oauth-authorization-server',
      headers: JSON_TYPE,
      body: '{}',
    }),
    status: 405,
    error: 'method_not_allowed',
    check: (a) => expect(a.headers.allow).toContain('GET'),
  },
  {
    name: 'POST to the JWKS',
    request: () => ({ method: 'POST', url: '/.well-known/jwks.json', headers: FORM_TYPE, body: 'a=1' }),
    status: 405,
    error: 'method_not_allowed',
  },
  {
    name: 'registration of a public client',
    request: () => ({
      method: 'POST',
      url: '/api/oauth/register',
      headers: JSON_TYPE,
      body: JSON.stringify({ client_name: 'CLI', application_type: 'native', redirect_uris: [CB] }),
    }),
    status: 201,
    check: (a) => {
      expect(a.headers['cache-control']).toBe('no-store');
      expect(a.body).toMatchObject({ client_id: '<random client_id>', redirect_uris: [CB] });
    },
  },
  {
    name: 'registration of a confidential client',
    request: () => ({
      method: 'POST',
      url: '/api/oauth/register',
      headers: JSON_TYPE,
      body: JSON.stringify({ redirect_uris: [CB], token_endpoint_auth_method: 'client_secret_post' }),
    }),
    status: 201,
    check: (a) => expect(a.body).toMatchObject({ client_secret: '<random client_secret>' }),
  },
  {
    name: 'registration ignoring __proto__ and unknown members',
    request: () => ({
      method: 'POST',
      url: '/api/oauth/register',
      headers: JSON_TYPE,
      body: `{"redirect_uris":["${CB}"],"__proto__":{"admin":true},"software_statement":"x"}`,
    }),
    status: 201,
    check: (a) => expect(JSON.stringify(a.body)).not.toMatch(/admin|software_statement/),
  },
  {
    name: 'registration with an https redirect URI',
    request: () => ({
      method: 'POST',
      url: '/api/oauth/register',
      headers: JSON_TYPE,
      body: JSON.stringify({ redirect_uris: ['https://app.example.com/cb'] }),
    }),
    status: 400,
    error: 'invalid_redirect_uri',
  },
  {
    name: 'registration with invalid JSON',
    request: () => ({
      method: 'POST',
      url: '/api/oauth/register',
      headers: JSON_TYPE,
      body: '{"redirect_uris":',
    }),
    status: 400,
    error: 'invalid_client_metadata',
    parserRefuses: true,
  },
  {
    name: 'registration with a JSON array body',
    request: () => ({
      method: 'POST',
      url: '/api/oauth/register',
      headers: JSON_TYPE,
      body: JSON.stringify([{ redirect_uris: [CB] }]),
    }),
    status: 400,
    error: 'invalid_client_metadata',
  },
  {
    name: 'registration with a text/plain body',
    request: () => ({
      method: 'POST',
      url: '/api/oauth/register',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ redirect_uris: [CB] }),
    }),
    status: 400,
    error: 'invalid_client_metadata',
  },
  {
    name: 'registration with a form body',
    request: () => ({
      method: 'POST',
      url: '/api/oauth/register',
      headers: FORM_TYPE,
      body: `redirect_uris=${encodeURIComponent(CB)}`,
    }),
    status: 400,
    error: 'invalid_client_metadata',
  },
  {
    name: 'registration without a content type',
    request: () => ({
      method: 'POST',
      url: '/api/oauth/register',
      body: JSON.stringify({ redirect_uris: [CB] }),
    }),
    status: 400,
    error: 'invalid_client_metadata',
  },
  {
    name: 'registration with a body that is not UTF-8',
    request: () => ({
      method: 'POST',
      url: '/api/oauth/register',
      headers: JSON_TYPE,
      body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
    }),
    status: 400,
    error: 'invalid_client_metadata',
  },
  {
    name: 'registration with a body over the limit (Content-Length)',
    request: () => ({
      method: 'POST',
      url: '/api/oauth/register',
      headers: JSON_TYPE,
      body: JSON.stringify({ redirect_uris: [CB], client_name: 'x'.repeat(64 * 1024) }),
    }),
    status: 413,
    error: 'invalid_request',
  },
  {
    name: 'registration with a body over the limit (chunked)',
    request: () => ({
      method: 'POST',
      url: '/api/oauth/register',
      headers: { ...JSON_TYPE, 'transfer-encoding': 'chunked' },
      body: JSON.stringify({ redirect_uris: [CB], client_name: 'x'.repeat(64 * 1024) }),
    }),
    status: 413,
    error: 'invalid_request',
  },
  {
    name: 'a body over the limit in multi-byte characters',
    request: () => ({
      method: 'POST',
      url: '/api/oauth/register',
      headers: JSON_TYPE,
      // 30 000 characters, 90 000 bytes of UTF-8: over the 64 KiB limit.
      body: JSON.stringify({ redirect_uris: [CB], client_name: '\u20ac'.repeat(30_000) }),
    }),
    status: 413,
    error: 'invalid_request',
  },
  {
    name: 'GET on the registration endpoint',
    request: () => ({ method: 'GET', url: '/api/oauth/register' }),
    status: 405,
    error: 'method_not_allowed',
    check: (a) => expect(a.headers.allow).toBe('POST'),
  },
  {
    name: 'an unknown path',
    request: () => ({ method: 'GET', url: '/not-an-endpoint' }),
    status: 404,
    notOurs: true,
  },
  {
    name: 'a path that only extends an endpoint path',
    request: () => ({ method: 'POST', url: '/api/oauth/register/', headers: JSON_TYPE, body: '{}' }),
    status: 404,
    notOurs: true,
  },
  {
    name: 'authorization request with a duplicated client_id',
    request: (ctx) => ({
      method: 'GET',
      url: `/oauth/authorize?response_type=code&client_id=${ctx.clientId}&client_id=${ctx.clientId}&redirect_uri=${encodeURIComponent(CB)}&code_challenge=${verifier.challenge}&code_challenge_method=S256&scope=openid`,
    }),
    status: 400,
    check: (a) => {
      expect(a.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(a.headers.location).toBeUndefined();
      expect(a.body).toContain('invalid_request');
    },
  },
  {
    name: 'authorization request with an unknown client',
    request: () => ({
      method: 'GET',
      url: `/oauth/authorize?response_type=code&client_id=unknown&redirect_uri=${encodeURIComponent('http://127.0.0.1:1/attacker')}`,
    }),
    status: 400,
    check: (a) => expect(a.headers.location).toBeUndefined(),
  },
  {
    name: 'authorization request with an unknown scope (error redirect)',
    request: (ctx) => ({
      method: 'GET',
      url: `/oauth/authorize?${form({
        response_type: 'code',
        client_id: ctx.clientId,
        redirect_uri: CB,
        scope: 'courses:delete',
        state: 's-1',
        code_challenge: verifier.challenge,
        code_challenge_method: 'S256',
      })}`,
    }),
    status: 303,
    check: (a) => {
      const location = new URL(a.headers.location!);
      expect(location.searchParams.get('error')).toBe('invalid_scope');
      expect(location.searchParams.get('iss')).toBe(ISSUER);
    },
  },
  {
    name: 'authorization request without a session (login redirect)',
    request: (ctx) => ({
      method: 'GET',
      url: `/oauth/authorize?${form({
        response_type: 'code',
        client_id: ctx.clientId,
        redirect_uri: CB,
        scope: 'openid',
        state: 's-2',
        code_challenge: verifier.challenge,
        code_challenge_method: 'S256',
      })}`,
    }),
    status: 303,
    check: (a) => {
      const returnTo = encodeURIComponent(`${ISSUER}/oauth/authorize?request_id=`);
      expect(a.headers.location).toBe(`${ISSUER}/login?return_to=${returnTo}<random>`);
    },
  },
  {
    name: 'GET on the token endpoint',
    request: () => ({ method: 'GET', url: '/api/oauth/token' }),
    status: 405,
    error: 'method_not_allowed',
    check: (a) => expect(a.headers.allow).toBe('POST'),
  },
  {
    name: 'token request with two Authorization headers',
    request: (ctx) => ({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { ...FORM_TYPE, authorization: [basic(ctx.clientId, 'one'), basic(ctx.clientId, 'two')] },
      body: tokenForm(ctx),
    }),
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'token request with a JSON body',
    request: (ctx) => ({
      method: 'POST',
      url: '/api/oauth/token',
      headers: JSON_TYPE,
      body: JSON.stringify({ grant_type: 'authorization_code', code: 'x', client_id: ctx.clientId }),
    }),
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'token request with a duplicated code',
    request: (ctx) => ({
      method: 'POST',
      url: '/api/oauth/token',
      headers: FORM_TYPE,
      body: `${tokenForm(ctx)}&code=another-code`,
    }),
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'token request with code[]=x (a nested-parser array, ATK-31)',
    request: (ctx) => ({
      method: 'POST',
      url: '/api/oauth/token',
      headers: FORM_TYPE,
      body: tokenForm(ctx).replace('code=', 'code[]='),
    }),
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'token request with code[a]=x (a nested-parser object, ATK-31)',
    request: (ctx) => ({
      method: 'POST',
      url: '/api/oauth/token',
      headers: FORM_TYPE,
      body: tokenForm(ctx).replace('code=', 'code[a]='),
    }),
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'token request with client_id twice, values differing',
    request: (ctx) => ({
      method: 'POST',
      url: '/api/oauth/token',
      headers: FORM_TYPE,
      body: `${tokenForm(ctx)}&client_id=someone-else`,
    }),
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'token request with the code in the query',
    request: (ctx) => ({
      method: 'POST',
      url: '/api/oauth/token?code=leaked',
      headers: FORM_TYPE,
      body: tokenForm(ctx),
    }),
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'token request with malformed percent-encoding',
    request: (ctx) => ({
      method: 'POST',
      url: '/api/oauth/token',
      headers: FORM_TYPE,
      body: `${tokenForm(ctx)}&x=%zz`,
    }),
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'token request with an unsupported grant type',
    request: (ctx) => ({
      method: 'POST',
      url: '/api/oauth/token',
      headers: FORM_TYPE,
      body: form({ grant_type: 'client_credentials', client_id: ctx.clientId }),
    }),
    status: 400,
    error: 'unsupported_grant_type',
  },
  {
    name: 'token request with Basic credentials that do not authenticate',
    request: (ctx) => ({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { ...FORM_TYPE, authorization: basic(ctx.clientId, 'secret') },
      body: form({ grant_type: 'authorization_code', code: 'x', code_verifier: verifier.verifier }),
    }),
    status: 401,
    error: 'invalid_client',
    check: (a) => expect(a.headers['www-authenticate']).toMatch(/^Basic realm=/),
  },
  {
    name: 'token request with an unknown code',
    request: (ctx) => ({ method: 'POST', url: '/api/oauth/token', headers: FORM_TYPE, body: tokenForm(ctx) }),
    status: 400,
    error: 'invalid_grant',
  },
  {
    name: 'revocation by an unknown client',
    request: () => ({
      method: 'POST',
      url: '/api/oauth/revoke',
      headers: FORM_TYPE,
      body: form({ token: 'x', client_id: 'unknown' }),
    }),
    status: 400,
    error: 'invalid_client',
  },
  {
    name: 'revocation of an unknown token (bodiless 200)',
    request: (ctx) => ({
      method: 'POST',
      url: '/api/oauth/revoke',
      headers: FORM_TYPE,
      body: form({ token: 'not-a-token', client_id: ctx.clientId }),
    }),
    status: 200,
    check: (a) => expect(a.body).toBe(''),
  },
  {
    name: 'introspection without client authentication',
    request: () => ({ method: 'POST', url: '/api/oauth/introspect', headers: FORM_TYPE, body: 'token=x' }),
    status: 401,
    error: 'invalid_client',
    check: (a) => expect(a.headers['www-authenticate']).toMatch(/^Basic realm=/),
  },
  {
    name: 'UserInfo with an invalid token',
    request: () => ({
      method: 'GET',
      url: '/api/oauth/userinfo',
      headers: { authorization: 'Bearer not-a-token' },
    }),
    status: 401,
    error: 'invalid_token',
    check: (a) => expect(a.headers['www-authenticate']).toMatch(/^Bearer /),
  },
];

/** Sends a scenario through a transport and normalises the answer. */
async function answer(transport: Transport, scenario: Scenario, ctx: Context): Promise<Normalised> {
  return normalise(await transport.send(scenario.request(ctx)));
}

/** Asserts the scenario's own expectations on the reference (in-process) answer. */
function expectScenario(scenario: Scenario, reference: Normalised): void {
  expect(reference.status, JSON.stringify(reference.body).slice(0, 300)).toBe(scenario.status);
  if (scenario.error !== undefined) {
    expect(reference.headers['content-type']).toBe('application/json');
    expect(reference.headers['cache-control']).toBe('no-store');
    expect((reference.body as Record<string, unknown>).error).toBe(scenario.error);
  }
  scenario.check?.(reference);
}

describe('adapter parity: one table through in-process, Express, Fetch and node:http', () => {
  let h: Harness;
  const transports: Transport[] = [];
  const ctx: Context = { clientId: '' };

  beforeAll(async () => {
    h = await Harness.start();
    for (const make of Object.values(TRANSPORTS)) transports.push(await make(h.server));
    ctx.clientId = (await h.register()).client_id;
  });
  afterAll(async () => {
    for (const t of transports) await t.close();
    await h.close();
  });

  it.each(SCENARIOS.map((s) => [s.name, s] as const))('%s', async (_name, scenario) => {
    const answers: Record<string, Normalised> = {};
    for (const transport of transports) answers[transport.name] = await answer(transport, scenario, ctx);
    const reference = answers['in-process']!;

    if (scenario.notOurs === true) {
      expect(
        await h.server.handle({ method: 'GET', url: scenario.request(ctx).url, headers: {} }),
      ).toBeNull();
      const adapters = transports.filter((t) => t.name !== 'in-process').map((t) => t.name);
      for (const name of Object.keys(answers)) expect(answers[name]!.status, name).toBe(scenario.status);
      for (const name of adapters) expect(answers[name]!.body, name).toEqual({ error: 'not_found' });
      return;
    }

    expectScenario(scenario, reference);
    for (const [name, got] of Object.entries(answers)) {
      expect(got, `${name} differs from in-process`).toEqual(reference);
    }
  });
});

/** An Express app with body parsers mounted before the router, over real HTTP. */
async function expressAfterParsers(server: AuthorizationServer, keepRawBody: boolean): Promise<Transport> {
  const verify = (req: IncomingMessage & { rawBody?: Buffer }, _res: unknown, buffer: Buffer) => {
    req.rawBody = buffer;
  };
  const app = express();
  app.use(keepRawBody ? express.json({ verify }) : express.json());
  app.use(
    keepRawBody ? express.urlencoded({ extended: true, verify }) : express.urlencoded({ extended: true }),
  );
  app.use(createExpressRouter(server));
  const http = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => http.once('listening', resolve));
  const port = (http.address() as AddressInfo).port;
  return {
    name: keepRawBody ? 'express after parsers keeping the raw body' : 'express after parsers',
    send: (request) => rawHttp(port, request),
    close: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/** Whether `express.json()` or `express.urlencoded()` reads this request's body. */
function parserReads(request: TestRequest): boolean {
  const type = String(request.headers?.['content-type'] ?? '');
  return (
    request.body !== undefined &&
    (type.startsWith('application/json') || type.startsWith('application/x-www-form-urlencoded'))
  );
}

describe.each([true, false])(
  'adapter parity: Express after body parsers (raw body kept: %s)',
  (keepRawBody) => {
    let h: Harness;
    const ctx: Context = { clientId: '' };
    let transport: Transport;

    beforeAll(async () => {
      h = await Harness.start();
      transport = await expressAfterParsers(h.server, keepRawBody);
      ctx.clientId = (await h.register()).client_id;
    });
    afterAll(async () => {
      await transport.close();
      await h.close();
    });

    it.each(
      SCENARIOS.filter((s) => s.parserRefuses !== true && s.notOurs !== true).map(
        (s) => [s.name, s] as const,
      ),
    )('%s', async (_name, scenario) => {
      const reference = normalise(await h.send(scenario.request(ctx)));
      expectScenario(scenario, reference);
      const answer = normalise(await transport.send(scenario.request(ctx)));
      if (keepRawBody || !parserReads(scenario.request(ctx))) {
        expect(answer).toEqual(reference);
        return;
      }
      expect(answer.status).toBe(400);
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.body).toEqual({
        error: 'invalid_request',
        error_description: expect.stringMatching(/mount the authorization server before any body parser/),
      });
    });
  },
);
