/**
 * PKJ-01..PKJ-04: `private_key_jwt` (RFC 7523 §2.2, OpenID Connect Core §9) at the token,
 * revocation and introspection endpoints, for a registered client (`jwks` or `jwks_uri`) and for a
 * client whose metadata document is shaped like ChatGPT's (private_key_jwt only, `jwks_uri`); and
 * each attack on an assertion refused: replay (also at another instance), wrong `iss`/`sub`/`aud`,
 * missing or long `exp`, `alg: none` and HS256, a key that is not the client's, two methods at once.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/storage/memory.js';
import { asAssertion, clientAssertion } from '../helpers/client-assertion.js';
import { CB, Harness, ISSUER, json, type RegisteredClient } from '../helpers/harness.js';
import { type ScriptedFetcher, scriptedFetcher, validDocument } from '../helpers/metadata-documents.js';
import type { TestResponse } from '../helpers/transports.js';
import { hmacSigned, sign, type TestKey, testKey, unsigned } from '../protocol/key-fixtures.js';

const TOKEN_URL = `${ISSUER}/api/oauth/token`;
const JWKS_URI = 'https://agent.example/.well-known/jwks.json';

const key = await testKey('ES256', 'agent-1');
const otherKey = await testKey('ES256', 'agent-1'); // same kid, not the client's key
const rotatedKey = await testKey('EdDSA', 'agent-2');

let h: Harness;
let script: ScriptedFetcher;

beforeEach(async () => {
  script = scriptedFetcher();
  h = await Harness.start({
    options: { clientIdMetadataDocuments: { enabled: true, fetcher: script.fetcher } },
  });
});
afterEach(() => h.close());

function servedKeys(...keys: TestKey[]): void {
  script.serve(JWKS_URI, { body: { keys: keys.map((k) => k.publicJwk) } });
}

/** A client assertion for `clientId`, valid now unless `claims` or `header` say otherwise. */
function assertion(
  clientId: string,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
  signer: TestKey = key,
): Promise<string> {
  return clientAssertion(signer, clientId, { now: h.clock.now(), aud: ISSUER, claims, header });
}

function expectError(response: TestResponse, error: string, status = 400): void {
  expect(response.status).toBe(status);
  expect(json(response).error).toBe(error);
}

async function registerWithJwks(): Promise<RegisteredClient> {
  return h.register({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [key.publicJwk] } });
}

/** A fresh code of `client`, and the parameters that exchange it (client authentication left out). */
async function codeOf(client: RegisteredClient) {
  const { code, pkce } = await h.obtainCode(client);
  return {
    grant_type: 'authorization_code',
    code,
    redirect_uri: client.redirect_uris[0],
    code_verifier: pkce.verifier,
  };
}

describe('PKJ-01 a registered private_key_jwt client', () => {
  it('registers with jwks and gets no secret; its code, refresh, introspection and revocation all authenticate with assertions', async () => {
    const client = await registerWithJwks();
    const echoed = client as unknown as Record<string, unknown>;
    expect(echoed.token_endpoint_auth_method).toBe('private_key_jwt');
    expect(client.client_secret).toBeUndefined();
    expect(echoed.jwks).toEqual({ keys: [key.publicJwk] });

    const exchanged = await h.token({
      ...(await codeOf(client)),
      ...asAssertion(await assertion(client.client_id)),
    });
    expect(exchanged.status).toBe(200);
    const tokens = json(exchanged) as { access_token: string; refresh_token: string };

    // The endpoint URL is accepted as the audience of an untyped assertion (OIDC Core §9).
    const refreshed = await h.token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      ...asAssertion(await assertion(client.client_id, { aud: TOKEN_URL })),
    });
    expect(refreshed.status).toBe(200);
    const next = json(refreshed) as { access_token: string; refresh_token: string };

    const introspected = await h.send({
      method: 'POST',
      url: '/api/oauth/introspect',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: next.access_token,
        ...asAssertion(await assertion(client.client_id)),
      }).toString(),
    });
    expect(introspected.status).toBe(200);
    expect(json(introspected)).toMatchObject({ active: true, client_id: client.client_id });

    const revoked = await h.send({
      method: 'POST',
      url: '/api/oauth/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: next.refresh_token,
        ...asAssertion(await assertion(client.client_id)),
      }).toString(),
    });
    expect(revoked.status).toBe(200);
    const after = await h.token({
      grant_type: 'refresh_token',
      refresh_token: next.refresh_token,
      ...asAssertion(await assertion(client.client_id)),
    });
    expectError(after, 'invalid_grant');
  });

  it('PKJ-03 registers with a jwks_uri, fetched through the metadata fetcher, and completes the code flow', async () => {
    servedKeys(key);
    const client = await h.register({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: JWKS_URI });
    expect(client.client_secret).toBeUndefined();
    const response = await h.token({
      ...(await codeOf(client)),
      ...asAssertion(await assertion(client.client_id)),
    });
    expect(response.status).toBe(200);
    expect(script.fetches).toEqual([JWKS_URI]);
  });

  it('PKJ-03 an unknown kid refetches the jwks_uri once (the client rotated its key), at most once a minute', async () => {
    servedKeys(key);
    const client = await h.register({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: JWKS_URI });
    expect(
      (await h.token({ ...(await codeOf(client)), ...asAssertion(await assertion(client.client_id)) }))
        .status,
    ).toBe(200);
    servedKeys(key, rotatedKey);
    // Within the refetch interval the new key is not looked for: refused, no fetch.
    const early = await h.token({
      ...(await codeOf(client)),
      ...asAssertion(await assertion(client.client_id, {}, {}, rotatedKey)),
    });
    expectError(early, 'invalid_client');
    expect(script.fetches).toHaveLength(1);
    h.clock.advance(61);
    const rotated = await h.token({
      ...(await codeOf(client)),
      ...asAssertion(await assertion(client.client_id, {}, {}, rotatedKey)),
    });
    expect(rotated.status).toBe(200);
    expect(script.fetches).toHaveLength(2);
  });

  it('ABU-04 jwks_uri fetches are bounded per host like metadata documents: past the budget, no connection', async () => {
    const bounded = await Harness.start({
      options: { clientIdMetadataDocuments: { fetcher: script.fetcher, hostFetchesPerMinute: 1 } },
    });
    try {
      const otherUri = 'https://agent.example/other/jwks.json';
      servedKeys(key);
      script.serve(otherUri, { body: { keys: [key.publicJwk] } });
      const first = await bounded.register({
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: otherUri,
      });
      const second = await bounded.register({
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: JWKS_URI,
      });
      const signed = (clientId: string) =>
        clientAssertion(key, clientId, { now: bounded.clock.now(), aud: ISSUER });
      const exchange = async (client: RegisteredClient) => {
        const got = await bounded.obtainCode(client);
        return bounded.token({
          grant_type: 'authorization_code',
          code: got.code,
          redirect_uri: CB,
          code_verifier: got.pkce.verifier,
          ...asAssertion(await signed(client.client_id)),
        });
      };
      // One fetch from agent.example per minute: the first client's; the second is refused unfetched.
      expect((await exchange(first)).status).toBe(200);
      expectError(await exchange(second), 'invalid_client');
      expect(script.fetches).toEqual([otherUri]);
    } finally {
      await bounded.close();
    }
  });

  it('a configured client (options.clients) with jwks authenticates with assertions; without keys the options are refused', async () => {
    const clientId = 'nightly-report';
    const configured = await Harness.start({
      options: {
        clients: [
          {
            clientId,
            redirectUris: [CB],
            tokenEndpointAuthMethod: 'private_key_jwt',
            jwks: { keys: [key.publicJwk] },
          },
        ],
      },
    });
    try {
      const got = await configured.obtainCode({
        client_id: clientId,
        redirect_uris: [CB],
      } as RegisteredClient);
      const signed = await clientAssertion(key, clientId, { now: configured.clock.now(), aud: ISSUER });
      const response = await configured.token({
        grant_type: 'authorization_code',
        code: got.code,
        redirect_uri: CB,
        code_verifier: got.pkce.verifier,
        ...asAssertion(signed),
      });
      expect(response.status).toBe(200);
    } finally {
      await configured.close();
    }
    await expect(
      Harness.start({
        options: { clients: [{ clientId, redirectUris: [CB], tokenEndpointAuthMethod: 'private_key_jwt' }] },
      }),
    ).rejects.toThrow(/private_key_jwt needs jwks or jwks_uri/);
  });

  it.each([
    ['without jwks or jwks_uri', {}],
    ['with both jwks and jwks_uri', { jwks: { keys: [key.publicJwk] }, jwks_uri: JWKS_URI }],
    ['with a private key in jwks', { jwks: { keys: [key.privateJwk] } }],
    ['with a symmetric key in jwks', { jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQ' }] } }],
    ['with an http jwks_uri', { jwks_uri: 'http://agent.example/jwks.json' }],
    ['with a jwks_uri on a special-use address', { jwks_uri: 'https://169.254.169.254/jwks.json' }],
  ])('PKJ-03 refuses a registration %s with invalid_client_metadata', async (_name, keys) => {
    const response = await h.send({
      method: 'POST',
      url: '/api/oauth/register',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [CB], token_endpoint_auth_method: 'private_key_jwt', ...keys }),
    });
    expectError(response, 'invalid_client_metadata');
  });

  it('is refused at registration, and not advertised, when privateKeyJwt is off', async () => {
    const off = await Harness.start({ options: { privateKeyJwt: { enabled: false } } });
    try {
      const response = await off.send({
        method: 'POST',
        url: '/api/oauth/register',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          redirect_uris: [CB],
          token_endpoint_auth_method: 'private_key_jwt',
          jwks: { keys: [key.publicJwk] },
        }),
      });
      expectError(response, 'invalid_client_metadata');
      const doc = json(
        await off.send({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: {} }),
      );
      expect(doc.token_endpoint_auth_methods_supported).not.toContain('private_key_jwt');
      expect(doc.token_endpoint_auth_signing_alg_values_supported).toBeUndefined();
    } finally {
      await off.close();
    }
  });

  it('advertises the signing algorithms for each endpoint: ES256, RS256, EdDSA, never none or HMAC (RFC 8414 §2)', async () => {
    const doc = json(
      await h.send({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: {} }),
    );
    for (const member of [
      'token_endpoint_auth_signing_alg_values_supported',
      'revocation_endpoint_auth_signing_alg_values_supported',
      'introspection_endpoint_auth_signing_alg_values_supported',
    ]) {
      expect(doc[member]).toEqual(['ES256', 'RS256', 'EdDSA']);
    }
  });
});

describe('PKJ-01 a metadata-document client shaped like ChatGPT’s (private_key_jwt only, jwks_uri)', () => {
  const clientId = 'https://agent.example/oauth/client-metadata.json';
  const document = validDocument(clientId, {
    client_name: 'ChatGPT',
    client_uri: 'https://agent.example/',
    redirect_uris: ['https://agent.example/connector_platform_oauth_redirect'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'private_key_jwt',
    jwks_uri: JWKS_URI,
  });
  const client = {
    client_id: clientId,
    redirect_uris: document.redirect_uris,
  } as unknown as RegisteredClient;

  beforeEach(() => {
    script.serve(clientId, { body: document });
    servedKeys(key);
  });

  it('completes the whole flow: consent, code with an assertion, refresh with another', async () => {
    const exchanged = await h.token({
      ...(await codeOf(client)),
      client_id: clientId,
      ...asAssertion(await assertion(clientId, { aud: TOKEN_URL })),
    });
    expect(exchanged.status).toBe(200);
    const body = json(exchanged) as { refresh_token: string; scope: string };
    expect(body.scope).toContain('courses:read');
    const refreshed = await h.token({
      grant_type: 'refresh_token',
      refresh_token: body.refresh_token,
      ...asAssertion(await assertion(clientId)),
    });
    expect(refreshed.status).toBe(200);
  });

  it('cannot redeem its code as a public client: without an assertion the exchange is invalid_client', async () => {
    const params = await codeOf(client);
    expectError(await h.token({ ...params, client_id: clientId }), 'invalid_client');
    expect((await h.token({ ...params, ...asAssertion(await assertion(clientId)) })).status).toBe(200);
  });
});

describe('attacks on client assertions, each refused', () => {
  let client: RegisteredClient;
  let params: Record<string, string | undefined>;
  beforeEach(async () => {
    client = await registerWithJwks();
    params = await codeOf(client);
  });

  /** Expects `value` to be refused as `error`, and the code to stay redeemable by the genuine client. */
  async function refused(
    value: Promise<string> | string,
    error = 'invalid_client',
    extra: Record<string, string> = {},
    headers: Record<string, string> = {},
  ) {
    expectError(await h.token({ ...params, ...asAssertion(await value), ...extra }, headers), error);
    expect((await h.token({ ...params, ...asAssertion(await assertion(client.client_id)) })).status).toBe(
      200,
    );
  }

  it('PKJ-02 a replayed assertion is invalid_client, even for another request', async () => {
    const once = await assertion(client.client_id);
    expect((await h.token({ ...params, ...asAssertion(once) })).status).toBe(200);
    const again = await codeOf(client);
    expectError(await h.token({ ...again, ...asAssertion(once) }), 'invalid_client');
  });

  it('PKJ-02 an assertion used at one instance is refused at another sharing the storage', async () => {
    const storage = memoryStorage();
    const a = await Harness.start({ storage });
    const b = await Harness.start({ storage });
    try {
      const shared = await a.register({
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [key.publicJwk] },
      });
      const now = a.clock.now();
      const once = await sign(
        key,
        {
          iss: shared.client_id,
          sub: shared.client_id,
          aud: ISSUER,
          iat: now,
          exp: now + 60,
          jti: randomUUID(),
        },
        { kid: key.publicJwk.kid },
      );
      const first = await a.obtainCode(shared);
      const second = await b.obtainCode(shared);
      const exchange = (harness: Harness, got: typeof first) =>
        harness.token({
          grant_type: 'authorization_code',
          code: got.code,
          redirect_uri: CB,
          code_verifier: got.pkce.verifier,
          ...asAssertion(once),
        });
      expect((await exchange(a, first)).status).toBe(200);
      expectError(await exchange(b, second), 'invalid_client');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('wrong iss (not the sub) is invalid_client', () =>
    refused(assertion(client.client_id, { iss: 'someone-else' })));

  it('wrong sub: an assertion for another client, signed with this key, is invalid_client', async () => {
    const victim = await registerWithJwks();
    await refused(assertion(victim.client_id, {}, {}, otherKey));
  });

  it('a client_id parameter that differs from the assertion is invalid_client', () =>
    refused(assertion(client.client_id), 'invalid_client', { client_id: 'another-client' }));

  it.each([
    ['another server', 'https://other.example'],
    ['the authorization endpoint', `${ISSUER}/oauth/authorize`],
  ])('an aud of %s is invalid_client', (_name, aud) => refused(assertion(client.client_id, { aud })));

  it('a typed assertion (client-authentication+jwt) must name the issuer alone', () =>
    refused(assertion(client.client_id, { aud: TOKEN_URL }, { typ: 'client-authentication+jwt' })));

  it('a missing exp is invalid_client', () => refused(assertion(client.client_id, { exp: undefined })));

  it('an exp further than 300 seconds away is invalid_client', () =>
    refused(assertion(client.client_id, { exp: h.clock.now() + 3600 })));

  it('an expired assertion is invalid_client', () =>
    refused(assertion(client.client_id, { iat: h.clock.now() - 200, exp: h.clock.now() - 100 })));

  it('alg none is invalid_client', () => {
    const now = h.clock.now();
    return refused(
      unsigned({
        iss: client.client_id,
        sub: client.client_id,
        aud: ISSUER,
        exp: now + 60,
        jti: randomUUID(),
      }),
    );
  });

  it('HS256 with the public key as the HMAC secret is invalid_client', async () => {
    const now = h.clock.now();
    const secret = new TextEncoder().encode(JSON.stringify(key.publicJwk));
    await refused(
      hmacSigned(
        secret,
        { iss: client.client_id, sub: client.client_id, aud: ISSUER, exp: now + 60, jti: randomUUID() },
        { kid: key.publicJwk.kid },
      ),
    );
  });

  it("a key that is not the client's (same kid) is invalid_client", () =>
    refused(assertion(client.client_id, {}, {}, otherKey)));

  it('PKJ-04 an assertion together with a client_secret is invalid_request', () =>
    refused(assertion(client.client_id), 'invalid_request', { client_secret: 'anything' }));

  it('PKJ-04 an assertion together with Basic credentials is invalid_request', async () => {
    const basic = `Basic ${btoa(`${client.client_id}:anything`)}`;
    await refused(assertion(client.client_id), 'invalid_request', {}, { authorization: basic });
  });

  it('a private_key_jwt client presenting only its client_id is invalid_client', async () => {
    expectError(await h.token({ ...params, client_id: client.client_id }), 'invalid_client');
  });

  it('a client registered with a secret cannot switch to an assertion', async () => {
    const secretClient = await h.register({ token_endpoint_auth_method: 'client_secret_post' });
    const got = await codeOf(secretClient);
    const now = h.clock.now();
    const forged = await sign(
      key,
      {
        iss: secretClient.client_id,
        sub: secretClient.client_id,
        aud: ISSUER,
        exp: now + 60,
        jti: randomUUID(),
      },
      { kid: key.publicJwk.kid },
    );
    expectError(await h.token({ ...got, ...asAssertion(forged) }), 'invalid_client');
  });
});
