/**
 * CC-01: the `client_credentials` grant (RFC 6749 §4.4), off by default and opt-in: confidential
 * clients only (a secret or private_key_jwt), the scope capped by the scope policy, `resource`
 * bound as for users, no refresh token; otherwise `unsupported_grant_type`.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../src/options.js';
import { createScopePolicy } from '../../src/scopes/policy.js';
import { courseSchoolScopes } from '../fixtures/course-school-scopes.js';
import { CB, Harness, ISSUER, json, type RegisteredClient } from '../helpers/harness.js';
import type { TestResponse } from '../helpers/transports.js';
import { sign, testKey } from '../protocol/key-fixtures.js';

const key = await testKey('ES256', 'cc-1');
const created: Harness[] = [];
afterEach(async () => {
  for (const h of created.splice(0)) await h.close();
});

async function start(options: Parameters<typeof Harness.start>[0] = {}): Promise<Harness> {
  const h = await Harness.start(options);
  created.push(h);
  return h;
}

const enabled = { options: { clientCredentials: { enabled: true } } };
const basic = (c: RegisteredClient) =>
  `Basic ${btoa(`${encodeURIComponent(c.client_id)}:${encodeURIComponent(c.client_secret ?? '')}`)}`;

function expectError(response: TestResponse, error: string, status = 400): void {
  expect(response.status).toBe(status);
  expect(json(response).error).toBe(error);
}

function registerRaw(h: Harness, metadata: Record<string, unknown>): Promise<TestResponse> {
  return h.send({
    method: 'POST',
    url: '/api/oauth/register',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(metadata),
  });
}

async function agent(h: Harness, metadata: Record<string, unknown> = {}): Promise<RegisteredClient> {
  const response = await registerRaw(h, {
    client_name: 'CI job',
    grant_types: ['client_credentials'],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: 'courses:read courses:write',
    ...metadata,
  });
  expect(response.status).toBe(201);
  return json(response) as unknown as RegisteredClient;
}

describe('CC-01 off by default', () => {
  it('is not advertised, is refused at registration, and the token endpoint answers unsupported_grant_type', async () => {
    const h = await start();
    const doc = json(
      await h.send({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: {} }),
    );
    expect(doc.grant_types_supported).toEqual(['authorization_code', 'refresh_token']);
    expectError(
      await registerRaw(h, {
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: 'client_secret_basic',
      }),
      'invalid_client_metadata',
    );
    const secretClient = await h.register({ token_endpoint_auth_method: 'client_secret_basic' });
    expectError(
      await h.token({ grant_type: 'client_credentials' }, { authorization: basic(secretClient) }),
      'unsupported_grant_type',
    );
  });
});

describe('CC-01 enabled', () => {
  it('is advertised in grant_types_supported', async () => {
    const h = await start(enabled);
    const doc = json(
      await h.send({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: {} }),
    );
    expect(doc.grant_types_supported).toEqual(['authorization_code', 'refresh_token', 'client_credentials']);
  });

  it('a confidential client gets an access token for itself: scope within its ceiling, resource bound, no refresh or ID token', async () => {
    const h = await start(enabled);
    const client = await agent(h);
    expect(client.redirect_uris).toEqual([]);
    const response = await h.token(
      { grant_type: 'client_credentials', scope: 'courses:read', resource: `${ISSUER}/mcp` },
      { authorization: basic(client) },
    );
    expect(response.status).toBe(200);
    const body = json(response);
    expect(body).toMatchObject({ token_type: 'Bearer', scope: 'courses:read', expires_in: 900 });
    expect(body.refresh_token).toBeUndefined();
    expect(body.id_token).toBeUndefined();
    const introspected = json(
      await h.send({
        method: 'POST',
        url: '/api/oauth/introspect',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) },
        body: new URLSearchParams({ token: String(body.access_token) }).toString(),
      }),
    );
    expect(introspected).toMatchObject({
      active: true,
      client_id: client.client_id,
      sub: client.client_id,
      aud: `${ISSUER}/mcp`,
      scope: 'courses:read',
    });
  });

  it('without scope, and without default scopes in the policy, the request is invalid_scope (RFC 6749 §3.3)', async () => {
    const h = await start(enabled);
    const client = await agent(h);
    expectError(
      await h.token({ grant_type: 'client_credentials' }, { authorization: basic(client) }),
      'invalid_scope',
    );
  });

  it.each([
    ['a scope outside its registered ones', 'admin:users'],
    ['openid (there is no user)', 'openid'],
    ['offline_access', 'offline_access'],
  ])('refuses %s with invalid_scope', async (_name, scope) => {
    const h = await start(enabled);
    const client = await agent(h, { scope: 'courses:read openid' });
    expectError(
      await h.token({ grant_type: 'client_credentials', scope }, { authorization: basic(client) }),
      'invalid_scope',
    );
  });

  it('the scope policy decides the ceiling (clientCredentialsScopes)', async () => {
    const h = await start({
      options: {
        clientCredentials: { enabled: true },
        scopePolicy: createScopePolicy({
          registry: courseSchoolScopes,
          clientCredentialsScopes: () => ['courses:read'],
        }),
      },
    });
    const client = await agent(h);
    expectError(
      await h.token(
        { grant_type: 'client_credentials', scope: 'courses:write' },
        { authorization: basic(client) },
      ),
      'invalid_scope',
    );
    const ok = await h.token(
      { grant_type: 'client_credentials', scope: 'courses:read' },
      { authorization: basic(client) },
    );
    expect(ok.status).toBe(200);
  });

  it('an unknown resource is invalid_target', async () => {
    const h = await start(enabled);
    const client = await agent(h);
    expectError(
      await h.token(
        { grant_type: 'client_credentials', scope: 'courses:read', resource: 'https://elsewhere.example' },
        { authorization: basic(client) },
      ),
      'invalid_target',
    );
  });

  it('a private_key_jwt client uses it with an assertion', async () => {
    const h = await start(enabled);
    const client = await agent(h, {
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [key.publicJwk] },
    });
    const now = h.clock.now();
    const assertion = await sign(
      key,
      { iss: client.client_id, sub: client.client_id, aud: ISSUER, exp: now + 60, jti: randomUUID() },
      { kid: key.publicJwk.kid },
    );
    const response = await h.token({
      grant_type: 'client_credentials',
      scope: 'courses:read',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
    });
    expect(response.status).toBe(200);
  });

  it('public clients cannot register it, and a client not registered for it is unauthorized_client', async () => {
    const h = await start(enabled);
    expectError(
      await registerRaw(h, { grant_types: ['client_credentials'], token_endpoint_auth_method: 'none' }),
      'invalid_client_metadata',
    );
    const codeClient = await h.register({ token_endpoint_auth_method: 'client_secret_basic' });
    expectError(
      await h.token(
        { grant_type: 'client_credentials', scope: 'courses:read' },
        { authorization: basic(codeClient) },
      ),
      'unauthorized_client',
    );
    const pub = await h.register();
    expectError(
      await h.token({ grant_type: 'client_credentials', client_id: pub.client_id }),
      'unauthorized_client',
    );
  });

  it('a wrong secret is invalid_client (401 with Basic)', async () => {
    const h = await start(enabled);
    const client = await agent(h);
    expectError(
      await h.token(
        { grant_type: 'client_credentials', scope: 'courses:read' },
        { authorization: basic({ ...client, client_secret: 'wrong' }) },
      ),
      'invalid_client',
      401,
    );
  });
});

describe('CC-01 configured clients (options.clients)', () => {
  const ci = {
    clientId: 'ci-job',
    clientSecret: 'a-configured-secret-of-32-chars!',
    tokenEndpointAuthMethod: 'client_secret_basic' as const,
    grantTypes: ['client_credentials' as const],
    scope: 'courses:read',
  };
  const ciBasic = `Basic ${btoa(`${ci.clientId}:${encodeURIComponent(ci.clientSecret)}`)}`;

  it('a configured confidential client listing client_credentials, without redirect URIs, gets a token for itself', async () => {
    const h = await start({ options: { clientCredentials: { enabled: true }, clients: [ci] } });
    const response = await h.token(
      { grant_type: 'client_credentials', scope: 'courses:read' },
      { authorization: ciBasic },
    );
    expect(response.status).toBe(200);
    expect(json(response)).toMatchObject({ token_type: 'Bearer', scope: 'courses:read' });
    expect(json(response).refresh_token).toBeUndefined();
  });

  it('a configured client without client_credentials in grantTypes is unauthorized_client', async () => {
    const h = await start({
      options: {
        clientCredentials: { enabled: true },
        clients: [{ ...ci, grantTypes: undefined, redirectUris: [CB] }],
      },
    });
    expectError(
      await h.token({ grant_type: 'client_credentials', scope: 'courses:read' }, { authorization: ciBasic }),
      'unauthorized_client',
    );
  });

  it('the options refuse client_credentials without the option, for a public client, refresh_token alone, and the code grant without redirect URIs', async () => {
    const refused = async (options: Parameters<typeof Harness.start>[0], path: string) => {
      const error = await Harness.start(options).then(
        async (h) => {
          await h.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidOptionsError);
      expect((error as InvalidOptionsError).message).toContain(path);
    };
    await refused({ options: { clients: [ci] } }, 'clients.0.grantTypes');
    const { clientSecret: _, tokenEndpointAuthMethod: __, ...publicClient } = ci;
    await refused(
      { options: { clientCredentials: { enabled: true }, clients: [publicClient] } },
      'clients.0.grantTypes',
    );
    await refused(
      { options: { clients: [{ clientId: 'x', redirectUris: [CB], grantTypes: ['refresh_token'] }] } },
      'clients.0.grantTypes',
    );
    await refused({ options: { clients: [{ clientId: 'x' }] } }, 'clients.0.redirectUris');
  });
});
