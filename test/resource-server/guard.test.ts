import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import { exportJWK, exportSPKI, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type GuardedRequest, requireToken } from '../../src/adapters/express.js';
import { withGuard } from '../../src/adapters/fetch.js';
import { guardNodeRequest } from '../../src/adapters/node.js';
import { requireToken as requireTokenHere } from '../../src/resource-server/express.js';
import { withGuard as withGuardHere } from '../../src/resource-server/fetch.js';
import {
  createResourceGuard,
  type GuardRequirement,
  type GuardResult,
  type Principal,
  type ResourceGuard,
} from '../../src/resource-server/guard.js';
import { guardNodeRequest as guardNodeRequestHere } from '../../src/resource-server/node.js';
import {
  type AccessTokenVerifier,
  introspectionVerifier,
  jwksVerifier,
} from '../../src/resource-server/verifier.js';
import { parseBearerChallenge } from '../helpers/challenge.js';
import { dpopClient } from '../helpers/dpop.js';
import { harnessWithIntrospection, RS_CALLER, revoke } from '../helpers/endpoints.js';
import { Harness, ISSUER, json, type RegisteredClient } from '../helpers/harness.js';
import { TEST_KEYS } from '../helpers/keys.js';
import { rawHttp, type TestResponse } from '../helpers/transports.js';

const MCP = `${ISSUER}/mcp`;
const OTHER = 'https://other.example/api';
const ROOT_METADATA = `${ISSUER}/.well-known/oauth-protected-resource`;
const MCP_METADATA = `${ISSUER}/.well-known/oauth-protected-resource/mcp`;

function auth(value: string): { headers: { authorization: string } } {
  return { headers: { authorization: value } };
}

function refusal(result: GuardResult): { status: number; challenge: Record<string, string>; error: unknown } {
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result.principal)}`);
  const challenge = parseBearerChallenge(result.response.headers['www-authenticate']).params;
  return { status: result.response.status, challenge, error: JSON.parse(result.response.body ?? '{}').error };
}

function principalOf(result: GuardResult): Principal {
  if (!result.ok) throw new Error(`expected success, got ${result.response.status} ${result.response.body}`);
  return result.principal;
}

async function tokenFor(h: Harness, extra: Record<string, string> = {}): Promise<string> {
  return (await h.tokens({}, extra)).body.access_token as string;
}

describe('Resource-server guard (RFC 6750, RFC 9728, spec §5.5)', () => {
  let h: Harness;
  let root: ResourceGuard;
  let mcp: ResourceGuard;
  beforeEach(async () => {
    h = await Harness.start({
      options: {
        keys: TEST_KEYS,
        resources: [
          { resource: ISSUER, scopes: ['openid', 'courses:read', 'account:read'] },
          { resource: MCP, scopes: [] },
          { resource: OTHER, scopes: [] },
        ],
      },
    });
    root = h.server.guard({ resource: ISSUER });
    mcp = h.server.guard({ resource: MCP });
  });
  afterEach(async () => {
    await h.close();
  });

  describe('RS-01: no token is anonymous and unchallenged (spec §5.5.1)', () => {
    it('with and without a scope requirement', async () => {
      expect(principalOf(await root.check({ headers: {} }))).toEqual({ anonymous: true });
      expect(principalOf(await mcp.check({ headers: {} }, { scope: 'courses:read' }))).toEqual({
        anonymous: true,
      });
    });
  });

  describe('RS-02: a route that needs a token (RFC 6750 §3.1; RFC 9728 §5.1)', () => {
    it('answers 401 with resource_metadata and scope, without error', async () => {
      const r = refusal(await mcp.check({ headers: {} }, { scope: 'courses:read', required: true }));
      expect(r.status).toBe(401);
      expect(r.challenge).toEqual({ scope: 'courses:read', resource_metadata: MCP_METADATA });
    });

    it('resource_metadata points at a document the server serves, naming this resource (RFC 9728 §3.3)', async () => {
      for (const [guard, resource] of [
        [root, ISSUER],
        [mcp, MCP],
      ] as const) {
        const url = refusal(await guard.check({ headers: {} }, { required: true })).challenge
          .resource_metadata!;
        const document = await h.send({ method: 'GET', url: new URL(url).pathname });
        expect(document.status).toBe(200);
        expect(json(document)).toMatchObject({ resource, authorization_servers: [ISSUER] });
      }
    });

    it('without a scope requirement the challenge carries resource_metadata only', async () => {
      const r = refusal(await root.check({ headers: {} }, { required: true }));
      expect(r.status).toBe(401);
      expect(r.challenge).toEqual({ resource_metadata: ROOT_METADATA });
    });

    it('passes a valid token with the scope', async () => {
      const principal = principalOf(
        await root.check(auth(`Bearer ${await tokenFor(h)}`), { scope: 'courses:read', required: true }),
      );
      expect(principal).toMatchObject({ anonymous: false, subject: 'ada', audience: [ISSUER] });
    });
  });

  describe('RS-03: bad tokens are 401 invalid_token, never anonymous (RFC 6750 §3.1; spec §5.5.2)', () => {
    const cases: [string, (h: Harness) => Promise<string>][] = [
      ['unknown', async () => 'Bearer A'.padEnd(50, 'A')],
      ['malformed (outside b64token)', async () => 'Bearer abc$def'],
      ['malformed (a space inside)', async () => 'Bearer abc def'],
      [
        'a JWT with a broken signature',
        async (h) => {
          const token = await tokenFor(h);
          return `Bearer ${token.slice(0, -4)}AAAA`;
        },
      ],
      [
        'expired',
        async (h) => {
          const token = await tokenFor(h);
          h.clock.advance(900);
          return `Bearer ${token}`;
        },
      ],
      [
        'revoked',
        async (h) => {
          const { client, body } = await h.tokens();
          expect((await revoke(h, client, body.access_token as string)).status).toBe(200);
          return `Bearer ${body.access_token as string}`;
        },
      ],
    ];
    for (const [name, make] of cases) {
      it(`${name}: refused on an anonymous-capable route and on a required one`, async () => {
        const value = await make(h);
        for (const requirement of [{}, { required: true }, { scope: 'courses:read' }] as GuardRequirement[]) {
          const r = refusal(await root.check(auth(value), requirement));
          expect(r.status).toBe(401);
          expect(r.error).toBe('invalid_token');
          expect(r.challenge.error).toBe('invalid_token');
          expect(r.challenge.resource_metadata).toBe(ROOT_METADATA);
        }
      });
    }

    it('an expired token is accepted until the second it expires', async () => {
      const token = await tokenFor(h);
      h.clock.advance(899);
      expect(principalOf(await root.check(auth(`Bearer ${token}`))).anonymous).toBe(false);
      h.clock.advance(1);
      expect(refusal(await root.check(auth(`Bearer ${token}`))).status).toBe(401);
    });
  });

  describe('RS-04: missing scope is 403 insufficient_scope (RFC 6750 §3.1)', () => {
    it('names the needed scope and the metadata', async () => {
      const r = refusal(await root.check(auth(`Bearer ${await tokenFor(h)}`), { scope: 'account:read' }));
      expect(r.status).toBe(403);
      expect(r.error).toBe('insufficient_scope');
      expect(r.challenge).toMatchObject({
        error: 'insufficient_scope',
        scope: 'account:read',
        resource_metadata: ROOT_METADATA,
      });
    });

    it('needs every listed scope, and names all of them', async () => {
      const token = await tokenFor(h);
      const r = refusal(
        await root.check(auth(`Bearer ${token}`), { scope: ['courses:read', 'account:read'] }),
      );
      expect(r.status).toBe(403);
      expect(r.challenge.scope).toBe('courses:read account:read');
      expect(
        principalOf(await root.check(auth(`Bearer ${token}`), { scope: ['courses:read', 'openid'] })),
      ).toMatchObject({ anonymous: false });
    });

    it("names the scopes the operation needs, not the token's others, so the client can step up in one authorization (RFC 6750 §3.1; MCP SEP-2350)", async () => {
      const token = await tokenFor(h); // scope: openid courses:read
      // Written as on the wire, once with a duplicate: each needed scope is named once.
      for (const scope of ['courses:read account:read', ['courses:read account:read', 'account:read']]) {
        const r = refusal(await root.check(auth(`Bearer ${token}`), { scope, required: true }));
        expect(r.status).toBe(403);
        expect(r.challenge).toEqual({
          error: 'insufficient_scope',
          error_description: 'this operation needs the scope courses:read account:read',
          scope: 'courses:read account:read',
          resource_metadata: ROOT_METADATA,
        });
      }
      // The same string requirement passes once the token has both.
      const both = (await h.tokens({}, { scope: 'openid courses:read account:read' })).body
        .access_token as string;
      expect(
        principalOf(await root.check(auth(`Bearer ${both}`), { scope: 'courses:read account:read' })),
      ).toMatchObject({ anonymous: false, scope: ['openid', 'courses:read', 'account:read'] });
    });
  });

  describe('RS-05 / ATK-19: a token for another resource is 401 invalid_token (RFC 8707 §2)', () => {
    it('a token minted for $ISSUER/mcp is refused at the root resource', async () => {
      const token = await tokenFor(h, { resource: MCP });
      expect(principalOf(await mcp.check(auth(`Bearer ${token}`))).anonymous).toBe(false);
      const r = refusal(await root.check(auth(`Bearer ${token}`)));
      expect(r.status).toBe(401);
      expect(r.challenge.error).toBe('invalid_token');
    });

    it('a token minted for the root resource is refused at /mcp', async () => {
      const token = await tokenFor(h);
      expect(refusal(await mcp.check(auth(`Bearer ${token}`))).status).toBe(401);
    });

    it('a token minted for https://other.example/api is refused at /mcp', async () => {
      const token = await tokenFor(h, { resource: OTHER });
      const other = createResourceGuard({ resource: OTHER, verifier: h.server.verifier });
      expect(principalOf(await other.check(auth(`Bearer ${token}`))).anonymous).toBe(false);
      expect(refusal(await mcp.check(auth(`Bearer ${token}`))).challenge.error).toBe('invalid_token');
    });
  });

  describe('RS-07: malformed credentials are 400 or 401, never anonymous or 200 (RFC 6750 §2.1)', () => {
    it.each([
      ['an empty Bearer value', 'Bearer', 400],
      ['a Bearer value of spaces', 'Bearer    ', 400],
      ['two Authorization headers (joined)', 'Bearer abc, Bearer def', 400],
      ['another scheme', 'Basic YWxhZGRpbjpvcGVuc2VzYW1l', 400],
      ['only padding', 'Bearer ===', 401],
      ['non-ASCII', 'Bearer tökén', 401],
    ])('%s', async (_name, value, status) => {
      for (const requirement of [{}, { required: true }] as GuardRequirement[]) {
        const r = refusal(await root.check(auth(value), requirement));
        expect(r.status).toBe(status);
        expect(r.challenge.error).toBe(status === 400 ? 'invalid_request' : 'invalid_token');
        expect(r.challenge.resource_metadata).toBe(ROOT_METADATA);
      }
    });

    it('two Authorization headers as an array, even when both carry the valid token', async () => {
      const token = await tokenFor(h);
      const r = refusal(
        await root.check({ headers: { authorization: [`Bearer ${token}`, `Bearer ${token}`] } }),
      );
      expect(r.status).toBe(400);
    });
  });

  it('RS-08: every challenge is Bearer with each parameter once, quoted, in the RFC charset', async () => {
    const token = await tokenFor(h);
    const results = [
      await root.check({ headers: {} }, { required: true, scope: 'courses:read' }),
      await root.check(auth('Bearer abc$def')),
      await root.check(auth('Bearer')),
      await root.check(auth(`Bearer ${token}`), { scope: 'account:read account:write' }),
      await mcp.check(auth(`Bearer ${token}`)),
    ];
    for (const result of results) {
      if (result.ok) throw new Error('expected a refusal');
      const header = result.response.headers['www-authenticate'];
      // parseBearerChallenge throws on a repeated, unquoted or out-of-charset parameter.
      const { params } = parseBearerChallenge(header);
      expect(Object.keys(params).length).toBeGreaterThan(0);
      expect(result.response.headers['cache-control']).toBe('no-store');
    }
  });

  it('RS-09: the scheme is case-insensitive (RFC 9110 §11.1)', async () => {
    const token = await tokenFor(h);
    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
      expect(principalOf(await root.check(auth(`${scheme} ${token}`))).anonymous).toBe(false);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// ATK-33 with every verifier

/** An introspection verifier whose HTTP calls go to the harness in process. */
function inProcessIntrospection(h: Harness, clientId: string, clientSecret: string): AccessTokenVerifier {
  const viaHarness = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await h.send({
      method: 'POST',
      url: '/api/oauth/introspect',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: String(init?.body ?? ''),
    });
    return new Response(response.body, { status: response.status, headers: response.headers });
  };
  return introspectionVerifier({
    endpoint: `${ISSUER}/api/oauth/introspect`,
    clientId,
    clientSecret,
    fetch: viaHarness as typeof fetch,
  });
}

describe('ATK-33: refresh tokens, ID tokens and codes never pass the guard, whatever the verifier', () => {
  let h: Harness;
  let confidential: RegisteredClient;
  let tokens: Record<string, unknown>;
  let code: string;
  let verifiers: Record<string, AccessTokenVerifier>;

  beforeAll(async () => {
    h = await harnessWithIntrospection();
    // A confidential client: its own credentials make introspection show it its refresh tokens.
    confidential = await h.register({ token_endpoint_auth_method: 'client_secret_post' });
    const issued = await h.obtainCode(confidential);
    const exchanged = await h.exchange(confidential, issued.code, issued.pkce);
    tokens = json(exchanged);
    code = (await h.obtainCode(confidential)).code;
    const jwks = json(await h.send({ method: 'GET', url: '/.well-known/jwks.json' })) as { keys: JWK[] };
    verifiers = {
      storage: h.server.verifier,
      jwks: jwksVerifier({ issuer: ISSUER, jwks, clock: h.clock.ms }),
      'introspection (resource server credentials)': inProcessIntrospection(
        h,
        RS_CALLER.clientId,
        RS_CALLER.clientSecret,
      ),
      'introspection (client credentials)': inProcessIntrospection(
        h,
        confidential.client_id,
        confidential.client_secret!,
      ),
    };
  });
  afterAll(async () => {
    await h.close();
  });

  for (const name of [
    'storage',
    'jwks',
    'introspection (resource server credentials)',
    'introspection (client credentials)',
  ]) {
    it(`${name}: the access token passes; the refresh token, ID token and code get 401 invalid_token`, async () => {
      const guard = createResourceGuard({ resource: ISSUER, verifier: verifiers[name]! });
      expect(principalOf(await guard.check(auth(`Bearer ${tokens.access_token as string}`)))).toMatchObject({
        anonymous: false,
        subject: 'ada',
      });
      for (const other of [tokens.refresh_token as string, tokens.id_token as string, code]) {
        const r = refusal(await guard.check(auth(`Bearer ${other}`)));
        expect(r.status).toBe(401);
        expect(r.challenge.error).toBe('invalid_token');
      }
    });
  }
});

// ---------------------------------------------------------------------------------------------
// The three middleware wrappers over real HTTP

interface App {
  readonly name: string;
  readonly port: number;
  close(): Promise<void>;
}

function view(principal: Principal): Record<string, unknown> {
  return principal.anonymous
    ? { anonymous: true }
    : { anonymous: false, sub: principal.subject, scope: principal.scope.join(' ') };
}

/** The routes every app serves: an anonymous-capable catalog, an account route that needs a token, /mcp. */
const ROUTES: Record<string, { resource: 'root' | 'mcp'; requirement: GuardRequirement }> = {
  '/api/v1/courses': { resource: 'root', requirement: { scope: 'courses:read' } },
  '/api/v1/account': { resource: 'root', requirement: { scope: 'account:read', required: true } },
  '/mcp': { resource: 'mcp', requirement: {} },
};

async function listening(server: Server, name: string): Promise<App> {
  if (!server.listening) await new Promise<void>((resolve) => server.once('listening', resolve));
  return {
    name,
    port: (server.address() as AddressInfo).port,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function expressApp(guards: Record<'root' | 'mcp', ResourceGuard>): Promise<App> {
  const app = express();
  for (const [path, route] of Object.entries(ROUTES)) {
    app.get(path, requireToken(guards[route.resource], route.requirement), (req, res) => {
      res.json(view((req as GuardedRequest).auth));
    });
  }
  return listening(app.listen(0, '127.0.0.1'), 'express requireToken');
}

async function fetchApp(guards: Record<'root' | 'mcp', ResourceGuard>): Promise<App> {
  const handlers = new Map(
    Object.entries(ROUTES).map(([path, route]) => [
      path,
      withGuard(guards[route.resource], route.requirement, (_request, principal) =>
        Response.json(view(principal)),
      ),
    ]),
  );
  const server = serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (request) => {
      const handler = handlers.get(new URL(request.url).pathname);
      return handler === undefined ? new Response(null, { status: 404 }) : handler(request);
    },
  }) as Server;
  return listening(server, 'fetch withGuard');
}

async function nodeApp(guards: Record<'root' | 'mcp', ResourceGuard>): Promise<App> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const route = ROUTES[path];
    if (route === undefined) {
      res.writeHead(404).end();
      return;
    }
    void guardNodeRequest(guards[route.resource], req, res, route.requirement).then((principal) => {
      if (principal === null) return;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(view(principal)));
    });
  });
  server.listen(0, '127.0.0.1');
  return listening(server, 'node guardNodeRequest');
}

interface Outcome {
  status: number;
  challenge: string | undefined;
  body: unknown;
}

function outcome(response: TestResponse): Outcome {
  return {
    status: response.status,
    challenge: response.headers['www-authenticate'],
    body: response.body === '' ? undefined : JSON.parse(response.body),
  };
}

describe('Guard middleware over real HTTP: Express, Fetch and node give identical results', () => {
  let h: Harness;
  let apps: App[];
  let token: string;
  let mcpToken: string;

  beforeAll(async () => {
    h = await Harness.start({ options: { keys: TEST_KEYS } });
    const guards = { root: h.server.guard({ resource: ISSUER }), mcp: h.server.guard({ resource: MCP }) };
    apps = [await expressApp(guards), await fetchApp(guards), await nodeApp(guards)];
    token = await tokenFor(h);
    mcpToken = await tokenFor(h, { resource: MCP });
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await h.close();
  });

  async function everywhere(path: string, headers: Record<string, string | string[]> = {}): Promise<Outcome> {
    const outcomes: Outcome[] = [];
    for (const app of apps) {
      outcomes.push(outcome(await rawHttp(app.port, { method: 'GET', url: path, headers })));
    }
    for (let i = 1; i < outcomes.length; i++) {
      expect(outcomes[i], `${apps[i]!.name} vs ${apps[0]!.name} for ${path}`).toEqual(outcomes[0]);
    }
    return outcomes[0]!;
  }

  it('DPOP-03: each adapter passes method, URL and DPoP header: a bound token with a proof → 200, as Bearer → 401', async () => {
    const dpop = await dpopClient(() => h.clock.now());
    const client = await h.register();
    const { code, pkce } = await h.obtainCode(client, { extra: { scope: 'account:read' } });
    const exchanged = await h.token(
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: client.redirect_uris[0],
        client_id: client.client_id,
        code_verifier: pkce.verifier,
      },
      { dpop: await dpop.proof('POST', `${ISSUER}/api/oauth/token`) },
    );
    const bound = String(json(exchanged).access_token);
    for (const app of apps) {
      const proof = await dpop.proof('GET', `${ISSUER}/api/v1/account`, { accessToken: bound });
      const headers = { authorization: `DPoP ${bound}`, dpop: proof };
      const ok = await rawHttp(app.port, { method: 'GET', url: '/api/v1/account?x=1', headers });
      expect(ok.status, `${app.name}: ${ok.body}`).toBe(200);
      const replay = await rawHttp(app.port, { method: 'GET', url: '/api/v1/account', headers });
      expect(replay.status, app.name).toBe(401);
      const asBearer = await rawHttp(app.port, {
        method: 'GET',
        url: '/api/v1/account',
        headers: { authorization: `Bearer ${bound}` },
      });
      expect(asBearer.status, app.name).toBe(401);
    }
  });

  it('RS-01: no token → 200 anonymous without WWW-Authenticate', async () => {
    const o = await everywhere('/api/v1/courses');
    expect(o).toEqual({ status: 200, challenge: undefined, body: { anonymous: true } });
    expect((await everywhere('/mcp')).body).toEqual({ anonymous: true });
  });

  it('a valid token → 200 with the caller; `bearer` in lower case too (RS-09)', async () => {
    const expected = {
      status: 200,
      challenge: undefined,
      body: { anonymous: false, sub: 'ada', scope: 'openid profile email courses:read' },
    };
    expect(await everywhere('/api/v1/courses', { authorization: `Bearer ${token}` })).toEqual(expected);
    expect(await everywhere('/api/v1/courses', { authorization: `bearer ${token}` })).toEqual(expected);
  });

  it('RS-02: a required token missing → 401 with resource_metadata and scope, no error', async () => {
    const o = await everywhere('/api/v1/account');
    expect(o.status).toBe(401);
    expect(parseBearerChallenge(o.challenge).params).toEqual({
      scope: 'account:read',
      resource_metadata: ROOT_METADATA,
    });
  });

  it('RS-03: an invalid token → 401 invalid_token, even where anonymous is allowed', async () => {
    for (const path of ['/api/v1/courses', '/mcp']) {
      const o = await everywhere(path, { authorization: 'Bearer nope' });
      expect(o.status).toBe(401);
      expect(parseBearerChallenge(o.challenge).params.error).toBe('invalid_token');
    }
  });

  it('RS-04: missing scope → 403 insufficient_scope with scope="account:read"', async () => {
    const o = await everywhere('/api/v1/account', { authorization: `Bearer ${token}` });
    expect(o.status).toBe(403);
    expect(parseBearerChallenge(o.challenge).params).toMatchObject({
      error: 'insufficient_scope',
      scope: 'account:read',
    });
  });

  it('RS-05 / ATK-19: a token for $ISSUER/mcp → 401 at the root resource, 200 at /mcp', async () => {
    const atRoot = await everywhere('/api/v1/courses', { authorization: `Bearer ${mcpToken}` });
    expect(atRoot.status).toBe(401);
    expect(parseBearerChallenge(atRoot.challenge).params.error).toBe('invalid_token');
    expect((await everywhere('/mcp', { authorization: `Bearer ${mcpToken}` })).status).toBe(200);
  });

  it('RS-06: ?access_token= is ignored: anonymous where allowed, 401 without error where required', async () => {
    expect((await everywhere(`/api/v1/courses?access_token=${token}`)).body).toEqual({ anonymous: true });
    const required = await everywhere(`/api/v1/account?access_token=${token}`);
    expect(required.status).toBe(401);
    expect(parseBearerChallenge(required.challenge).params.error).toBeUndefined();
  });

  it('RS-07: two Authorization headers → 400, even when both are the valid token', async () => {
    for (const values of [
      [`Bearer ${token}`, `Bearer ${token}`],
      [`Bearer ${token}`, 'Bearer garbage'],
      ['Bearer garbage', `Bearer ${token}`],
    ]) {
      const o = await everywhere('/api/v1/courses', { authorization: values });
      expect(o.status).toBe(400);
      expect(parseBearerChallenge(o.challenge).params.error).toBe('invalid_request');
    }
  });

  it('RS-07: empty and non-b64token values → 400 / 401, never 200', async () => {
    expect((await everywhere('/api/v1/courses', { authorization: 'Bearer' })).status).toBe(400);
    expect((await everywhere('/api/v1/courses', { authorization: 'Bearer a$b' })).status).toBe(401);
    expect((await everywhere('/api/v1/courses', { authorization: 'Basic YTpi' })).status).toBe(400);
    expect((await everywhere('/api/v1/courses', { authorization: '' })).status).toBe(400);
    expect(
      (await everywhere('/api/v1/courses', { authorization: 'Bearer ' + 'a'.repeat(9000) })).status,
    ).toBe(401);
  });
});

describe('guard helpers on the adapter subpaths', () => {
  it('portcullis/express, /fetch and /node export the helpers of resource-server/, not copies', () => {
    expect(requireToken).toBe(requireTokenHere);
    expect(withGuard).toBe(withGuardHere);
    expect(guardNodeRequest).toBe(guardNodeRequestHere);
  });
});

// ---------------------------------------------------------------------------------------------
// ATK-49: RFC 9068 checks of the JWKS-only verifier

describe('ATK-49: jwksVerifier applies the RFC 9068 §4 checks', () => {
  let h: Harness;
  let privateJwk: JWK;
  let publicJwk: JWK;
  let signingKey: CryptoKey;
  let verifier: AccessTokenVerifier;
  let token: string;
  let claims: JWTPayload;

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    signingKey = pair.privateKey;
    privateJwk = { ...(await exportJWK(pair.privateKey)), kid: 'k1', alg: 'ES256' };
    publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  });

  beforeEach(async () => {
    h = await Harness.start({ options: { keys: { privateJwks: [privateJwk], idTokenAlg: 'ES256' } } });
    const jwks = json(await h.send({ method: 'GET', url: '/.well-known/jwks.json' }));
    verifier = jwksVerifier({ issuer: ISSUER, jwks: jwks as { keys: JWK[] }, clock: h.clock.ms });
    token = await tokenFor(h);
    claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as JWTPayload;
  });
  afterEach(async () => {
    await h.close();
  });

  /** Signs `payload` with the server's own key, so only the property under test is wrong. */
  function sign(payload: JWTPayload, header: Record<string, unknown> = {}): Promise<string> {
    return new SignJWT(payload)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt', ...header })
      .sign(signingKey);
  }

  it('the JWKS the server publishes is the configured key', async () => {
    const jwks = json(await h.send({ method: 'GET', url: '/.well-known/jwks.json' }));
    expect(jwks.keys).toEqual([publicJwk]);
  });

  it('a valid server-issued token is accepted and cached until it expires', async () => {
    const first = await verifier.verify(token);
    expect(first).toMatchObject({
      subject: 'ada',
      audience: [ISSUER],
      scope: claims.scope?.toString().split(' '),
    });
    // A cache hit returns the remembered result without verifying again.
    expect(await verifier.verify(token)).toBe(first);
    h.clock.advance(899);
    expect(await verifier.verify(token)).toBe(first);
    h.clock.advance(1);
    expect(await verifier.verify(token)).toBeNull();
  });

  it('with cacheSize 0 every call verifies afresh', async () => {
    const uncached = jwksVerifier({
      issuer: ISSUER,
      jwks: { keys: [publicJwk] },
      clock: h.clock.ms,
      cacheSize: 0,
    });
    const first = await uncached.verify(token);
    expect(first).not.toBeNull();
    expect(await uncached.verify(token)).not.toBe(first);
  });

  it('my forged tokens are accepted when nothing is wrong (control for the cases below)', async () => {
    expect(await verifier.verify(await sign(claims))).toMatchObject({ subject: 'ada' });
  });

  it('alg: none is rejected', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url');
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    expect(await verifier.verify(`${header}.${payload}.`)).toBeNull();
  });

  it('HS256 signed with the public key (JWK and PEM) is rejected', async () => {
    const pem = await exportSPKI(
      await crypto.subtle.importKey(
        'jwk',
        publicJwk as JsonWebKey,
        { name: 'ECDSA', namedCurve: 'P-256' },
        true,
        ['verify'],
      ),
    );
    for (const secret of [JSON.stringify(publicJwk), pem]) {
      const forged = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', kid: 'k1', typ: 'at+jwt' })
        .sign(new TextEncoder().encode(secret));
      expect(await verifier.verify(forged)).toBeNull();
    }
  });

  it.each([
    ['JWT', { typ: 'JWT' }],
    ['missing', { typ: undefined }],
    ['application/jwt', { typ: 'application/jwt' }],
  ])('a wrong typ (%s) is rejected', async (_name, header) => {
    expect(await verifier.verify(await sign(claims, header))).toBeNull();
  });

  it('another issuer is rejected', async () => {
    expect(await verifier.verify(await sign({ ...claims, iss: 'https://evil.example' }))).toBeNull();
  });

  it('a token without client_id, sub or jti is rejected', async () => {
    for (const name of ['client_id', 'sub', 'jti'] as const) {
      const { [name]: _dropped, ...rest } = claims;
      expect(await verifier.verify(await sign(rest)), name).toBeNull();
    }
  });

  it('an expired token is rejected (exp in the past, and after the clock passes exp)', async () => {
    expect(await verifier.verify(await sign({ ...claims, exp: (claims.exp ?? 0) - 901 }))).toBeNull();
    const fresh = await sign({ ...claims, jti: 'other' });
    h.clock.advance(900);
    expect(await verifier.verify(fresh)).toBeNull();
  });

  it('a token signed by another key with the same kid is rejected', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
      .sign(privateKey);
    expect(await verifier.verify(forged)).toBeNull();
  });

  it('a wrong aud is refused by the guard with 401 invalid_token', async () => {
    const guard = createResourceGuard({ resource: ISSUER, verifier, resourceMetadataUrl: ROOT_METADATA });
    expect(principalOf(await guard.check(auth(`Bearer ${token}`))).anonymous).toBe(false);
    for (const aud of [OTHER, MCP, [OTHER, MCP]]) {
      const forged = await sign({ ...claims, aud, jti: `aud-${String(aud)}` });
      const r = refusal(await guard.check(auth(`Bearer ${forged}`)));
      expect(r.status).toBe(401);
      expect(r.challenge.error).toBe('invalid_token');
    }
  });
});
