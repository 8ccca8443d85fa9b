/**
 * CIMD-04, CIMD-05, CIMD-06, CIMD-10 and ATK-41: what a fetched document must say before its
 * client is used.
 */
import { describe, expect, it } from 'vitest';
import { ClientMetadataDocumentError } from '../../src/cimd/errors.js';
import { createClientIdMetadataResolver } from '../../src/cimd/resolver.js';
import { matchRedirectUri } from '../../src/protocol/redirect-uri.js';
import { CLIENT_ID, scriptedFetcher, validDocument } from '../helpers/metadata-documents.js';

function setup(body: unknown, extra: { contentType?: string; status?: number } = {}) {
  const script = scriptedFetcher();
  script.serve(CLIENT_ID, { body: body as Record<string, unknown>, ...extra });
  return { script, resolve: createClientIdMetadataResolver({ fetcher: script.fetcher }) };
}

async function refusedWith(body: unknown, extra: { contentType?: string; status?: number } = {}) {
  const { resolve } = setup(body, extra);
  const error = await resolve(CLIENT_ID).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClientMetadataDocumentError);
  const e = error as ClientMetadataDocumentError;
  expect(e.problem).toBe('invalid_document');
  expect(e.code).toBe('invalid_client');
  expect(e.status).toBe(400);
  return e.reason;
}

describe('CIMD-01 a valid document', () => {
  it('becomes a public client with the document metadata', async () => {
    const { resolve } = setup(
      validDocument(CLIENT_ID, {
        grant_types: ['authorization_code', 'refresh_token'],
        client_uri: 'https://client.example/',
        logo_uri: 'https://client.example/logo.png',
        scope: 'openid  profile openid',
        extra_member: { ignored: true },
      }),
    );
    const client = await resolve(CLIENT_ID);
    expect(client).toEqual({
      clientId: CLIENT_ID,
      origin: 'metadata_document',
      createdAt: expect.any(Number),
      metadata: {
        redirect_uris: ['http://127.0.0.1/callback'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        application_type: 'native',
        client_name: 'Example Agent',
        client_uri: 'https://client.example/',
        logo_uri: 'https://client.example/logo.png',
        scope: 'openid profile',
      },
    });
  });

  it('DPOP-02 keeps dpop_bound_access_tokens, and refuses a value that is not a boolean (RFC 9449 §5.2)', async () => {
    const { resolve } = setup(validDocument(CLIENT_ID, { dpop_bound_access_tokens: true }));
    expect((await resolve(CLIENT_ID))?.metadata.dpop_bound_access_tokens).toBe(true);
    expect(await refusedWith(validDocument(CLIENT_ID, { dpop_bound_access_tokens: 'yes' }))).toMatch(
      /dpop_bound_access_tokens/,
    );
  });

  it('accepts application/<x>+json and a charset parameter', async () => {
    const { resolve } = setup(validDocument(), {
      contentType: 'application/client-metadata+json; charset=utf-8',
    });
    await expect(resolve(CLIENT_ID)).resolves.not.toBeNull();
  });

  it('treats an omitted token_endpoint_auth_method as none, and grants only authorization_code by default', async () => {
    const doc = validDocument();
    delete doc.token_endpoint_auth_method;
    const client = await setup(doc).resolve(CLIENT_ID);
    expect(client?.metadata.token_endpoint_auth_method).toBe('none');
    expect(client?.metadata.grant_types).toEqual(['authorization_code']);
  });
});

describe('CIMD-04 malformed documents are refused', () => {
  it.each([
    ['invalid JSON', '{"client_id": ', 'not valid JSON'],
    ['a JSON array', '[]', 'not a JSON object'],
    ['JSON null', 'null', 'not a JSON object'],
    ['a JSON string', '"https://client.example/oauth/client.json"', 'not a JSON object'],
  ])('refuses %s', async (_name, body, reason) => {
    expect(await refusedWith(body)).toContain(reason);
  });

  it('refuses a body served as text/html', async () => {
    expect(await refusedWith(validDocument(), { contentType: 'text/html' })).toContain('application/json');
  });

  it('refuses a body that is not UTF-8', async () => {
    const script = scriptedFetcher();
    const resolve = createClientIdMetadataResolver({
      fetcher: async (request) => ({
        ...(await script.fetcher(request)),
        status: 200,
        body: new Uint8Array([0x7b, 0xff, 0x7d]),
      }),
    });
    await expect(resolve(CLIENT_ID)).rejects.toMatchObject({
      problem: 'invalid_document',
      reason: expect.stringContaining('UTF-8'),
    });
  });

  it.each([
    ['client_id', 'client_id'],
    ['redirect_uris', 'redirect_uris is required'],
    ['client_name', 'client_name is required'],
  ])('refuses a document without %s', async (member, reason) => {
    const doc = validDocument();
    delete doc[member];
    expect(await refusedWith(doc)).toContain(reason);
  });

  it.each([
    ['empty redirect_uris', { redirect_uris: [] }, 'redirect_uris must not be empty'],
    ['a string as redirect_uris', { redirect_uris: 'http://127.0.0.1/callback' }, 'redirect_uris'],
    ['a number among redirect_uris', { redirect_uris: [1] }, 'redirect_uris.0'],
    ['a client_name with only invisible characters', { client_name: '\u202e\u200b' }, 'client_name'],
    ['a 201-character client_name', { client_name: 'a'.repeat(201) }, 'client_name'],
    ['a javascript: logo_uri', { logo_uri: 'javascript:alert(1)' }, 'logo_uri'],
    ['an http client_uri', { client_uri: 'http://client.example/' }, 'client_uri'],
    ['the implicit grant', { grant_types: ['implicit'] }, 'grant_types'],
    ['refresh_token without authorization_code', { grant_types: ['refresh_token'] }, 'grant_types'],
    ['response type token', { response_types: ['token'] }, 'response_types'],
    ['an unknown application_type', { application_type: 'service' }, 'application_type'],
    ['a scope with a quote', { scope: 'openid "x' }, 'scope'],
    [
      'eleven redirect_uris',
      { redirect_uris: Array.from({ length: 11 }, (_, i) => `http://127.0.0.1/cb${i}`) },
      'at most 10',
    ],
  ])('refuses %s', async (_name, extra, reason) => {
    expect(await refusedWith(validDocument(CLIENT_ID, extra))).toContain(reason);
  });
});

describe('grant and response types this server does not offer (RFC 7591 §2)', () => {
  it('drops them from a document that also lists the code flow, as VS Code and Claude publish theirs', async () => {
    const resolved = await setup(
      validDocument(CLIENT_ID, {
        grant_types: [
          'authorization_code',
          'refresh_token',
          'urn:ietf:params:oauth:grant-type:device_code',
          'urn:ietf:params:oauth:grant-type:jwt-bearer',
        ],
        response_types: ['code', 'token'],
      }),
    ).resolve(CLIENT_ID);
    expect(resolved?.metadata.grant_types).toEqual(['authorization_code', 'refresh_token']);
    expect(resolved?.metadata.response_types).toEqual(['code']);
  });

  it.each([
    [
      'only the device grant',
      { grant_types: ['urn:ietf:params:oauth:grant-type:device_code'] },
      'grant_types',
    ],
    ['client_credentials only', { grant_types: ['client_credentials'] }, 'grant_types'],
  ])('still refuses a document with %s: nothing of the code flow is left', async (_name, extra, reason) => {
    expect(await refusedWith(validDocument(CLIENT_ID, extra))).toContain(reason);
  });
});

describe('CIMD-04 / ATK-41 client_id must equal the URL by simple string comparison', () => {
  it.each([
    ['a trailing slash', `${CLIENT_ID}/`],
    ['different case', CLIENT_ID.replace('client.json', 'Client.json')],
    ['an upper-case host', CLIENT_ID.replace('client.example', 'CLIENT.example')],
    ['an added query', `${CLIENT_ID}?x=1`],
    ['an explicit default port', CLIENT_ID.replace('client.example', 'client.example:443')],
    ['a percent-encoded character', CLIENT_ID.replace('client.json', 'client%2Ejson')],
    ['another host', 'https://evil.example/oauth/client.json'],
  ])('refuses a document whose client_id differs by %s', async (_name, documentClientId) => {
    expect(await refusedWith(validDocument(documentClientId))).toContain('differs from the URL');
  });
});

describe('CIMD-05 documents cannot establish a shared secret', () => {
  it.each(['client_secret_post', 'client_secret_basic', 'client_secret_jwt'])(
    'refuses token_endpoint_auth_method %s',
    async (method) => {
      expect(await refusedWith(validDocument(CLIENT_ID, { token_endpoint_auth_method: method }))).toContain(
        `'${method}' needs a shared secret`,
      );
    },
  );

  it.each([
    ['a client_secret member', { client_secret: 'hunter2hunter2hunter2' }],
    ['a client_secret_expires_at member', { client_secret_expires_at: 0 }],
  ])('refuses %s', async (_name, extra) => {
    expect(await refusedWith(validDocument(CLIENT_ID, extra))).toContain('client secret');
  });

  it('PKJ-03 accepts private_key_jwt with a jwks_uri, as a client that proves a key (RFC 7523)', async () => {
    const { resolve } = setup(
      validDocument(CLIENT_ID, {
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: 'https://client.example/jwks',
      }),
    );
    const client = await resolve(CLIENT_ID);
    expect(client?.metadata.token_endpoint_auth_method).toBe('private_key_jwt');
    expect(client?.metadata.jwks_uri).toBe('https://client.example/jwks');
  });

  it.each([
    ['without jwks or jwks_uri', {}, 'needs jwks or jwks_uri'],
    ['with an http jwks_uri', { jwks_uri: 'http://client.example/jwks' }, 'https'],
    ['with a jwks_uri on a private address', { jwks_uri: 'https://10.0.0.1/jwks' }, 'address'],
    [
      'with a private key in jwks',
      { jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'd' }] } },
      'private member',
    ],
    ['with a symmetric key in jwks', { jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }, 'jwks.keys[0]'],
  ])('PKJ-03 refuses private_key_jwt %s', async (_name, keys, reason) => {
    expect(
      await refusedWith(validDocument(CLIENT_ID, { token_endpoint_auth_method: 'private_key_jwt', ...keys })),
    ).toContain(reason);
  });

  it('refuses private_key_jwt when the server does not offer it', async () => {
    const script = scriptedFetcher();
    script.serve(CLIENT_ID, {
      body: validDocument(CLIENT_ID, {
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: 'https://client.example/jwks',
      }),
    });
    const resolve = createClientIdMetadataResolver({ fetcher: script.fetcher, keyAlgorithms: null });
    const error = await resolve(CLIENT_ID).then(
      () => undefined,
      (e: unknown) => e as ClientMetadataDocumentError,
    );
    expect(error?.reason).toContain("must be 'none'");
  });

  it('does not echo arbitrary method text into the reason', async () => {
    const reason = await refusedWith(
      validDocument(CLIENT_ID, { token_endpoint_auth_method: '<script>x</script>' }),
    );
    expect(reason).not.toContain('<script>');
  });
});

describe('CIMD-06 / CIMD-10 redirect URIs and client type', () => {
  it('lists loopback and https redirect URIs, matched exactly except for a loopback port', async () => {
    const client = await setup(
      validDocument(CLIENT_ID, {
        redirect_uris: [
          'http://127.0.0.1/callback',
          'http://localhost:33418/cb',
          'https://client.example/oauth/callback',
        ],
      }),
    ).resolve(CLIENT_ID);
    const registered = client!.metadata.redirect_uris;
    expect(client!.metadata.application_type).toBe('web');
    expect(matchRedirectUri('http://127.0.0.1:51234/callback', registered)).toBe('http://127.0.0.1/callback');
    expect(matchRedirectUri('http://localhost:1/cb', registered)).toBe('http://localhost:33418/cb');
    expect(matchRedirectUri('https://client.example/oauth/callback', registered)).toBe(
      'https://client.example/oauth/callback',
    );
    expect(matchRedirectUri('https://client.example:8443/oauth/callback', registered)).toBeUndefined();
    expect(matchRedirectUri('http://127.0.0.1:51234/callback/', registered)).toBeUndefined();
    expect(matchRedirectUri('http://[::1]:51234/callback', registered)).toBeUndefined();
    expect(matchRedirectUri('https://evil.example/oauth/callback', registered)).toBeUndefined();
  });

  it.each([
    ['a fragment', 'http://127.0.0.1/cb#x'],
    ['a non-loopback http host', 'http://client.example/cb'],
    ['user info', 'https://user@client.example/cb'],
    ['a custom scheme', 'com.example.app:/cb'],
    ['javascript:', 'javascript:alert(1)'],
    ['a dot segment', 'https://client.example/a/../cb'],
    ['a numeric host', 'https://2130706433/cb'],
  ])('refuses a redirect URI with %s', async (_name, uri) => {
    expect(await refusedWith(validDocument(CLIENT_ID, { redirect_uris: [uri] }))).toContain(
      'redirect_uris[0]',
    );
  });

  it('yields a public client: no secret hash, auth method none (CIMD-10)', async () => {
    const client = await setup(validDocument()).resolve(CLIENT_ID);
    expect(client?.secretHash).toBeUndefined();
    expect(client?.metadata.token_endpoint_auth_method).toBe('none');
  });
});
