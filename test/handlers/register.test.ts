/**
 * Dynamic client registration, `POST /api/oauth/register` (CONFORMANCE.md §2, REG-01..REG-14;
 * ATK-29, ATK-30, ATK-45 registration side; spec §5.3).
 */
import { createHash } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuthError } from '../../src/core/errors.js';
import type { OAuthRequest } from '../../src/core/http.js';
import type { RateLimitBucket, RateLimiter } from '../../src/core/rate-limit.js';
import type { ClientMetadata } from '../../src/storage/types.js';
import { CB, Harness, json, START } from '../helpers/harness.js';
import { type TestResponse, TRANSPORTS, type Transport } from '../helpers/transports.js';

const REGISTER = '/api/oauth/register';
const JSON_HEADERS = { 'content-type': 'application/json' };
const BASE64URL_128_BITS = /^[A-Za-z0-9_-]{22,}$/;

interface Sender {
  send: Harness['send'];
}

/** Posts `body` (serialised as JSON unless it is already a string or bytes). */
function post(
  h: Sender,
  body: unknown,
  headers: Record<string, string> = JSON_HEADERS,
): Promise<TestResponse> {
  const raw = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
  return h.send({ method: 'POST', url: REGISTER, headers, body: raw });
}

/** Asserts an RFC 7591 §3.2.2 error response and returns its body. */
function expectError(response: TestResponse, status: number, codes: string | readonly string[]) {
  expect(response.status, response.body.slice(0, 300)).toBe(status);
  expect(response.headers['content-type']).toBe('application/json');
  expect(response.headers['cache-control']).toBe('no-store');
  const body = json(response);
  expect(typeof codes === 'string' ? [codes] : codes).toContain(body.error);
  return body;
}

function sha256Base64url(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

describe('REG-01..REG-03 successful registration', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start();
  });
  afterAll(() => h.close());

  it('REG-01 registers a native public client: 201, a random client_id, no secret, every registered value echoed (RFC 7591 §3.2.1)', async () => {
    const response = await post(h, {
      client_name: 'Course CLI',
      application_type: 'native',
      redirect_uris: [CB],
      token_endpoint_auth_method: 'none',
    });
    expect(response.status).toBe(201);
    expect(response.headers['content-type']).toBe('application/json');
    const body = json(response);
    expect(body.client_id).toMatch(BASE64URL_128_BITS);
    // The time in eight ordered characters, then 144 random bits: ids sort by registration time.
    // The first is a letter: an id starting with `-` is an option on a command line
    // (`--client-id -P86…`), refused by Node's parseArgs and Python's argparse.
    expect(body.client_id).toMatch(/^[A-Za-z][A-Za-z0-9_-]{7}[A-Za-z0-9_-]{24}$/);
    expect(body.client_id_issued_at).toBe(START);
    expect(body).toMatchObject({
      client_name: 'Course CLI',
      application_type: 'native',
      redirect_uris: [CB],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    expect('client_secret' in body).toBe(false);
    expect('client_secret_expires_at' in body).toBe(false);
    // The registration is real: the client is stored with the metadata that was echoed.
    const record = await h.storage.clients.get(body.client_id as string, START);
    expect(record?.metadata).toMatchObject({ redirect_uris: [CB], token_endpoint_auth_method: 'none' });
    expect(record?.secretHash).toBeUndefined();
  });

  it('REG-01 client_ids are unique and never in the https:// namespace of CIMD client ids (CIMD §6.9)', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const id = json(await post(h, { redirect_uris: [CB] })).client_id as string;
      expect(id).toMatch(BASE64URL_128_BITS);
      expect(id.startsWith('https://')).toBe(false);
      ids.add(id);
    }
    expect(ids.size).toBe(8);
  });

  it('REG-01 client_ids sort by registration time (new ids append to the storage index), however their random parts fall', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push(json(await post(h, { redirect_uris: [CB] })).client_id as string);
      h.clock.advance(0.001); // a millisecond: the seconds the other tests read stay at START
    }
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids.map((id) => id.slice(8))).size).toBe(6);
  });

  it('REG-01 echoes the effective defaults when only redirect_uris is sent (REG-07, REG-09)', async () => {
    const body = json(await post(h, { redirect_uris: [CB] }));
    expect(body).toMatchObject({
      redirect_uris: [CB],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
  });

  it('REG-02 registers a client_secret_post client with a unique high-entropy secret that never expires (RFC 7591 §3.2.1)', async () => {
    const first = json(
      await post(h, { redirect_uris: [CB], token_endpoint_auth_method: 'client_secret_post' }),
    );
    const second = json(
      await post(h, { redirect_uris: [CB], token_endpoint_auth_method: 'client_secret_post' }),
    );
    for (const body of [first, second]) {
      expect(body.token_endpoint_auth_method).toBe('client_secret_post');
      expect(body.client_secret).toMatch(BASE64URL_128_BITS);
      expect(body.client_secret).not.toBe(body.client_id);
      expect(body.client_secret_expires_at).toBe(0);
    }
    expect(first.client_secret).not.toBe(second.client_secret);
  });

  it('REG-02 stores the client secret only as a hash (RFC 6749 §10.10)', async () => {
    const body = json(
      await post(h, { redirect_uris: [CB], token_endpoint_auth_method: 'client_secret_post' }),
    );
    const secret = body.client_secret as string;
    const record = await h.storage.clients.get(body.client_id as string, START);
    expect(record).not.toBeNull();
    expect(record!.secretHash).toBe(sha256Base64url(secret));
    expect(record!.secretHash).not.toBe(secret);
    expect(JSON.stringify(record)).not.toContain(secret);
    expect(Object.keys(record!).filter((k) => /secret/i.test(k))).toEqual(['secretHash']);
  });

  it('REG-02 the returned secret authenticates the client at the token endpoint, and only it does', async () => {
    const { client, body } = await h.tokens({ token_endpoint_auth_method: 'client_secret_post' });
    expect(typeof body.access_token).toBe('string');
    const refresh = await h.refresh(client, body.refresh_token as string, {
      client_secret: `${client.client_secret}x`,
    });
    expectError(refresh, 400, 'invalid_client');
  });

  it('REG-03 answers the registration with Cache-Control: no-store and Pragma: no-cache', async () => {
    for (const method of ['none', 'client_secret_post']) {
      const response = await post(h, { redirect_uris: [CB], token_endpoint_auth_method: method });
      expect(response.status).toBe(201);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers.pragma).toBe('no-cache');
    }
  });
});

describe('REG-04..REG-06 redirect URIs', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start();
  });
  afterAll(() => h.close());

  it('REG-04 refuses an https redirect URI with invalid_redirect_uri and a description (spec §5.3)', async () => {
    const body = expectError(
      await post(h, { redirect_uris: ['https://app.example.com/cb'] }),
      400,
      'invalid_redirect_uri',
    );
    expect(body.error_description).toMatch(/https/);
  });

  it('REG-04 refuses the whole registration when one of several redirect URIs is https', async () => {
    expectError(
      await post(h, { redirect_uris: [CB, 'https://app.example.com/cb'] }),
      400,
      'invalid_redirect_uri',
    );
  });

  it('REG-04 accepts an https redirect URI only when the host opted in with registration.allowHttpsRedirectUris', async () => {
    const open = await Harness.start({ options: { registration: { allowHttpsRedirectUris: true } } });
    try {
      const response = await post(open, { redirect_uris: ['https://app.example.com/cb'] });
      expect(response.status).toBe(201);
      expect(json(response).redirect_uris).toEqual(['https://app.example.com/cb']);
      // Still no fragment, user info or plain http on a public host.
      for (const uri of [
        'https://app.example.com/cb#x',
        'https://u@app.example.com/cb',
        'http://app.example.com/cb',
      ]) {
        expectError(await post(open, { redirect_uris: [uri] }), 400, 'invalid_redirect_uri');
      }
    } finally {
      await open.close();
    }
  });

  const REFUSED: readonly (readonly [string, string])[] = [
    ['a fragment', `${CB}#x`],
    ['an empty fragment', `${CB}#`],
    ['a relative reference', '/cb'],
    ['a network-path reference', '//127.0.0.1:49152/cb'],
    ['javascript:', 'javascript:alert(1)'],
    ['data:', 'data:text/html,<script>alert(1)</script>'],
    ['file:', 'file:///etc/passwd'],
    ['a private-use scheme', 'com.example.app:/cb'],
    ['a custom scheme with an authority', 'myapp://callback'],
    ['a non-loopback http host', 'http://app.example.com/cb'],
    ['a private-network http host', 'http://192.168.1.10:49152/cb'],
    ['https on the loopback address (ATK-12)', 'https://127.0.0.1:49152/cb'],
    ['an upper-case scheme (ATK-12)', 'HTTP://127.0.0.1:49152/cb'],
    ['an upper-case localhost', 'http://LOCALHOST:49152/cb'],
    ['user info', 'http://u@127.0.0.1:1/cb'],
    ['user info that hides the real host (ATK-11)', 'http://127.0.0.1:1@evil.example/cb'],
    ['a fragment that hides the real host (ATK-11)', 'http://evil.example#@127.0.0.1/cb'],
    ['127.0.0.2 (ATK-11)', 'http://127.0.0.2:49152/cb'],
    ['127.1 (ATK-11)', 'http://127.1:49152/cb'],
    ['a decimal IPv4 host, 2130706433 (ATK-11)', 'http://2130706433:49152/cb'],
    ['a hexadecimal IPv4 host, 0x7f.0.0.1 (ATK-11)', 'http://0x7f.0.0.1:49152/cb'],
    ['an octal IPv4 host, 0177.0.0.1', 'http://0177.0.0.1:49152/cb'],
    ['an IPv4-mapped IPv6 host (ATK-11)', 'http://[::ffff:127.0.0.1]:49152/cb'],
    ['an uncompressed IPv6 loopback', 'http://[0:0:0:0:0:0:0:1]:49152/cb'],
    ['an IPv6 zone id', 'http://[::1%25lo0]:49152/cb'],
    ['a DNS name that embeds 127.0.0.1 (ATK-11)', 'http://127.0.0.1.nip.io:49152/cb'],
    ['localhost with a trailing dot', 'http://localhost.:49152/cb'],
    ['a subdomain of localhost', 'http://app.localhost:49152/cb'],
    ['fullwidth digits (ATK-13)', 'http://１２７.０.０.１:49152/cb'],
    ['a percent-encoded host, %31%32%37.0.0.1 (ATK-13)', 'http://%31%32%37.0.0.1:49152/cb'],
    ['backslashes instead of slashes (ATK-11)', 'http:\\\\127.0.0.1\\cb'],
    ['a backslash after the authority', 'http://127.0.0.1:49152\\cb'],
    ['a TAB inside (ATK-13)', 'http://127.0.0.1:49152/c\tb'],
    ['a LF inside (ATK-13)', 'http://127.0.0.1:49152/c\nb'],
    ['a CR inside', 'http://127.0.0.1:49152/c\rb'],
    ['a TAB inside the host', 'http://127.0.0.\t1:49152/cb'],
    ['a space', 'http://127.0.0.1:49152/c b'],
    ['a Cyrillic letter in the path (ATK-13)', 'http://127.0.0.1:49152/\u0441b'],
    ['a right-to-left override in the path (ATK-13)', 'http://127.0.0.1:49152/cb\u202egnp.exe'],
    ['port 0 (ATK-10)', 'http://127.0.0.1:0/cb'],
    ['port 65536 (ATK-10)', 'http://127.0.0.1:65536/cb'],
    ['a port with a leading zero (ATK-10)', 'http://127.0.0.1:049152/cb'],
    ['a non-numeric port (ATK-10)', 'http://127.0.0.1:abc/cb'],
    ['an empty port', 'http://127.0.0.1:/cb'],
    ['a dot segment', 'http://127.0.0.1:49152/cb/../x'],
    ['a percent-encoded dot segment', 'http://127.0.0.1:49152/%2e%2e/x'],
    ['an empty string', ''],
    ['a URI over 2000 characters', `http://127.0.0.1:49152/${'a'.repeat(2000)}`],
  ];

  it.each(REFUSED)('REG-05 refuses a redirect URI with %s: 400 invalid_redirect_uri', async (_label, uri) => {
    expectError(await post(h, { redirect_uris: [uri] }), 400, 'invalid_redirect_uri');
  });

  const ACCEPTED: readonly (readonly [string, string])[] = [
    ['127.0.0.1 with a port', 'http://127.0.0.1:49152/cb'],
    ['127.0.0.1 without a port', 'http://127.0.0.1/cb'],
    ['[::1] with a port', 'http://[::1]:49152/cb'],
    ['[::1] without a port', 'http://[::1]/cb'],
    ['localhost with a port', 'http://localhost:3000/callback'],
    ['localhost without a port', 'http://localhost/callback'],
    ['a query', 'http://127.0.0.1:49152/cb?client=cli&v=1'],
    ['a percent-encoded path', 'http://127.0.0.1:49152/c%20b'],
    ['the highest port', 'http://127.0.0.1:65535/cb'],
  ];

  it.each(ACCEPTED)(
    'REG-05 accepts the loopback redirect URI form %s and echoes it unchanged (RFC 8252 §7.3)',
    async (_label, uri) => {
      const response = await post(h, { redirect_uris: [uri] });
      expect(response.status, response.body).toBe(201);
      expect(json(response).redirect_uris).toEqual([uri]);
    },
  );

  const MALFORMED: readonly (readonly [string, unknown])[] = [
    ['missing', undefined],
    ['null', null],
    ['empty', []],
    ['a string', CB],
    ['an object', { 0: CB }],
    ['a number', 42],
    ['an array holding a number', [42]],
    ['an array holding null', [null]],
    ['an array holding a string and a number', [CB, 7]],
    ['an array holding an array', [[CB]]],
  ];

  it.each(MALFORMED)('REG-06 refuses redirect_uris %s with 400 (RFC 7591 §2)', async (_label, value) => {
    const body = value === undefined ? { client_name: 'x' } : { redirect_uris: value };
    expectError(await post(h, body), 400, ['invalid_redirect_uri', 'invalid_client_metadata']);
  });

  it('REG-06 refuses more redirect URIs than registration.maxRedirectUris (default 10)', async () => {
    const uris = Array.from({ length: 11 }, (_, i) => `http://127.0.0.1/cb${i}`);
    expectError(await post(h, { redirect_uris: uris }), 400, 'invalid_redirect_uri');
    expect((await post(h, { redirect_uris: uris.slice(0, 10) })).status).toBe(201);
  });
});

describe('REG-07..REG-10 client metadata', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start();
  });
  afterAll(() => h.close());

  it.each(['client_secret_jwt', 'tls_client_auth', 'self_signed_tls_client_auth', 'unknown'])(
    'REG-07 refuses token_endpoint_auth_method %s with invalid_client_metadata (RFC 7591 §2)',
    async (method) => {
      expectError(
        await post(h, { redirect_uris: [CB], token_endpoint_auth_method: method }),
        400,
        'invalid_client_metadata',
      );
    },
  );

  it('REG-07 substitutes none for an omitted token_endpoint_auth_method and echoes it', async () => {
    const body = json(await post(h, { redirect_uris: [CB] }));
    expect(body.token_endpoint_auth_method).toBe('none');
    expect('client_secret' in body).toBe(false);
  });

  it('REG-07 PKJ-05 accepts client_secret_basic by default, and refuses it when clientSecretBasic is false', async () => {
    const body = json(
      await post(h, { redirect_uris: [CB], token_endpoint_auth_method: 'client_secret_basic' }),
    );
    expect(body.token_endpoint_auth_method).toBe('client_secret_basic');
    expect(body.client_secret).toMatch(BASE64URL_128_BITS);
    const off = await Harness.start({ options: { clientSecretBasic: false } });
    try {
      expectError(
        await post(off, { redirect_uris: [CB], token_endpoint_auth_method: 'client_secret_basic' }),
        400,
        'invalid_client_metadata',
      );
    } finally {
      await off.close();
    }
  });

  it('REG-07 refuses confidential clients when registration.allowConfidentialClients is false', async () => {
    const publicOnly = await Harness.start({
      options: { registration: { allowConfidentialClients: false } },
    });
    try {
      expectError(
        await post(publicOnly, { redirect_uris: [CB], token_endpoint_auth_method: 'client_secret_post' }),
        400,
        'invalid_client_metadata',
      );
      expect((await post(publicOnly, { redirect_uris: [CB] })).status).toBe(201);
    } finally {
      await publicOnly.close();
    }
  });

  it.each([
    'implicit',
    'client_credentials',
    'password',
    'urn:ietf:params:oauth:grant-type:token-exchange',
    'urn:ietf:params:oauth:grant-type:jwt-bearer',
    'urn:ietf:params:oauth:grant-type:device_code',
  ])('REG-08 refuses grant_types containing %s with invalid_client_metadata (RFC 7591 §2)', async (grant) => {
    expectError(
      await post(h, { redirect_uris: [CB], grant_types: ['authorization_code', grant] }),
      400,
      'invalid_client_metadata',
    );
  });

  it.each(['token', 'id_token', 'code id_token', 'none'])(
    'REG-08 refuses response_types containing %s with invalid_client_metadata',
    async (type) => {
      expectError(
        await post(h, { redirect_uris: [CB], response_types: ['code', type] }),
        400,
        'invalid_client_metadata',
      );
    },
  );

  it.each([
    ['the code response type without the authorization_code grant', { grant_types: ['refresh_token'] }],
    ['no grant types', { grant_types: [] }],
    ['no response types', { response_types: [] }],
  ])('REG-08 refuses an inconsistent pair: %s (RFC 7591 §2.1)', async (_label, metadata) => {
    expectError(await post(h, { redirect_uris: [CB], ...metadata }), 400, 'invalid_client_metadata');
  });

  it('REG-08 registers a narrower consistent set and echoes it', async () => {
    const body = json(
      await post(h, { redirect_uris: [CB], grant_types: ['authorization_code'], response_types: ['code'] }),
    );
    expect(body.grant_types).toEqual(['authorization_code']);
    expect(body.response_types).toEqual(['code']);
  });

  it.each(['web', 'browser', ''])(
    'REG-09 refuses application_type "%s" with invalid_client_metadata (spec §2.1)',
    async (type) => {
      expectError(
        await post(h, { redirect_uris: [CB], application_type: type }),
        400,
        'invalid_client_metadata',
      );
    },
  );

  it('REG-09 treats an omitted application_type as native, and echoes it', async () => {
    expect(json(await post(h, { redirect_uris: [CB] })).application_type).toBe('native');
  });

  it('REG-10 ignores unknown members: 201, not echoed, not stored (RFC 7591 §2)', async () => {
    const unknown = {
      foo: 'bar',
      admin: true,
      jwks_uri: 'https://evil.example/jwks',
      software_statement: 'eyJhbGciOiJub25lIn0.e30.',
      post_logout_redirect_uris: ['https://evil.example/'],
      client_secret: 'chosen-by-the-client-0123456789',
    };
    const response = await post(h, { redirect_uris: [CB], ...unknown });
    expect(response.status).toBe(201);
    const body = json(response);
    const record = await h.storage.clients.get(body.client_id as string, START);
    for (const key of Object.keys(unknown)) {
      expect(key in body, key).toBe(false);
      expect(key in record!.metadata, key).toBe(false);
    }
    expect(record!.secretHash).toBeUndefined();
  });

  it('registration refuses an id_token_signed_response_alg that no configured key can sign', async () => {
    expect(json(await post(h, { redirect_uris: [CB], id_token_signed_response_alg: 'ES256' }))).toMatchObject(
      {
        id_token_signed_response_alg: 'ES256',
      },
    );
    expectError(
      await post(h, { redirect_uris: [CB], id_token_signed_response_alg: 'HS256' }),
      400,
      'invalid_client_metadata',
    );
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256' };
    const rsaOnly = await Harness.start({
      options: { keys: { privateJwks: [jwk], idTokenAlg: 'RS256', accessTokenAlg: 'RS256' } },
    });
    try {
      expectError(
        await post(rsaOnly, { redirect_uris: [CB], id_token_signed_response_alg: 'ES256' }),
        400,
        'invalid_client_metadata',
      );
      expect(
        (await post(rsaOnly, { redirect_uris: [CB], id_token_signed_response_alg: 'RS256' })).status,
      ).toBe(201);
    } finally {
      await rsaOnly.close();
    }
  });
});

describe('REG-11 malformed requests', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start();
  });
  afterAll(() => h.close());
  const valid = JSON.stringify({ redirect_uris: [CB] });

  it.each([
    ['text/plain', { 'content-type': 'text/plain' }],
    ['a form', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['multipart', { 'content-type': 'multipart/form-data; boundary=x' }],
    ['a look-alike media type', { 'content-type': 'application/jsonx' }],
    ['no content type', {}],
  ])(
    'REG-11 refuses a JSON body sent as %s with 400 invalid_client_metadata, never 415 (RFC 7591 §3)',
    async (_label, headers) => {
      expectError(await post(h, valid, headers), 400, 'invalid_client_metadata');
    },
  );

  it.each(['application/json; charset=utf-8', 'Application/JSON'])(
    'REG-11 accepts the media type written %s',
    async (type) => {
      expect((await post(h, valid, { 'content-type': type })).status).toBe(201);
    },
  );

  it.each([
    ['invalid JSON', '{"redirect_uris": ['],
    ['an empty body', ''],
    ['a JSON array', `[${valid}]`],
    ['a JSON string', JSON.stringify(valid)],
    ['a JSON number', '42'],
    ['JSON null', 'null'],
    ['JSON true', 'true'],
    ['two JSON objects', `${valid}${valid}`],
  ])('REG-11 refuses %s with 400 invalid_client_metadata (RFC 7591 §3.2.2)', async (_label, body) => {
    expectError(await post(h, body), 400, 'invalid_client_metadata');
  });

  it('REG-11 refuses a body that is not UTF-8 with 400 invalid_client_metadata', async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode('{"client_name":"'), 0xff, 0xfe, 0x22, 0x7d]);
    expectError(await post(h, bytes), 400, 'invalid_client_metadata');
  });
});

describe('REG-12 open registration and the host hooks', () => {
  it('REG-12 needs no initial access token', async () => {
    const h = await Harness.start();
    try {
      const response = await post(h, { redirect_uris: [CB] });
      expect(response.status).toBe(201);
    } finally {
      await h.close();
    }
  });

  it('REG-12 the policy hook sees the effective metadata and the request, and its OAuthError is the answer (RFC 7591 §3)', async () => {
    const seen: { metadata: ClientMetadata; authorization: string | undefined }[] = [];
    const h = await Harness.start({
      options: {
        registration: {
          policy: ({ request, metadata }: { request: OAuthRequest; metadata: ClientMetadata }) => {
            seen.push({ metadata, authorization: request.headers.authorization });
            if (request.headers.authorization !== 'Bearer initial-access-token') {
              throw new OAuthError('invalid_token', 'an initial access token is required', {
                status: 401,
                headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
              });
            }
          },
        },
      },
    });
    try {
      const refused = await post(h, { redirect_uris: [CB], client_name: 'Refused' });
      const body = expectError(refused, 401, 'invalid_token');
      expect(body.error_description).toBe('an initial access token is required');
      expect(refused.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
      // A refused client is not stored.
      expect(h.events.filter((e) => e.type === 'client.registered')).toEqual([]);
      expect(seen[0]?.metadata).toMatchObject({
        redirect_uris: [CB],
        client_name: 'Refused',
        token_endpoint_auth_method: 'none',
        application_type: 'native',
      });

      const accepted = await post(
        h,
        { redirect_uris: [CB] },
        {
          ...JSON_HEADERS,
          authorization: 'Bearer initial-access-token',
        },
      );
      expect(accepted.status).toBe(201);
      expect(h.events.filter((e) => e.type === 'client.registered')).toHaveLength(1);

      // Invalid metadata is refused before the policy runs.
      const calls = seen.length;
      expectError(
        await post(h, { redirect_uris: ['https://app.example.com/cb'] }),
        400,
        'invalid_redirect_uri',
      );
      expect(seen.length).toBe(calls);
    } finally {
      await h.close();
    }
  });

  it('REG-12 a policy hook that fails unexpectedly answers 500 server_error without its message', async () => {
    const h = await Harness.start({
      options: {
        registration: {
          policy: () => {
            throw new Error('connection to db-internal:5432 refused, password hunter2');
          },
        },
      },
    });
    try {
      const response = await post(h, { redirect_uris: [CB] });
      expectError(response, 500, 'server_error');
      expect(response.body).not.toMatch(/hunter2|db-internal/);
      expect(h.events.filter((e) => e.type === 'client.registered')).toEqual([]);
    } finally {
      await h.close();
    }
  });

  it('REG-12 the rate-limit hook is asked per client IP, and a refusal is 429 with Retry-After', async () => {
    const asked: [RateLimitBucket, string][] = [];
    const limiter: RateLimiter = {
      async consume(bucket, key) {
        asked.push([bucket, key]);
        const count = asked.filter(([b]) => b === 'register').length;
        return count <= 2 ? { allowed: true } : { allowed: false, retryAfterSeconds: 29.2 };
      },
    };
    const h = await Harness.start({ options: { rateLimiter: limiter } });
    try {
      expect((await post(h, { redirect_uris: [CB] })).status).toBe(201);
      expect((await post(h, { redirect_uris: [CB] })).status).toBe(201);
      const limited = await post(h, { redirect_uris: [CB] });
      expectError(limited, 429, 'too_many_requests');
      expect(limited.headers['retry-after']).toBe('30');
      expect(asked).toEqual([
        ['register', '127.0.0.1'],
        ['register', '127.0.0.1'],
        ['register', '127.0.0.1'],
      ]);
      expect(h.events.filter((e) => e.type === 'client.registered')).toHaveLength(2);
    } finally {
      await h.close();
    }
  });
});

describe('REG-13 other methods', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start();
  });
  afterAll(() => h.close());

  it.each(['GET', 'PUT', 'DELETE', 'PATCH'])(
    'REG-13 answers %s with 405 and Allow: POST (no RFC 7592 management)',
    async (method) => {
      const response = await h.send({ method, url: REGISTER, headers: JSON_HEADERS, body: '{}' });
      expectError(response, 405, 'method_not_allowed');
      expect(response.headers.allow).toBe('POST');
    },
  );
});

describe('REG-14 / ATK-45 self-asserted display metadata', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start();
  });
  afterAll(() => h.close());

  it.each([
    ['client_name over 200 characters', { client_name: 'a'.repeat(201) }],
    ['client_name with a NUL', { client_name: 'a\u0000b' }],
    ['client_name of nothing but invisible characters', { client_name: '\u202e\u200b\u2066' }],
    ['a non-string client_name', { client_name: ['a'] }],
    ['client_uri over http', { client_uri: 'http://app.example.com' }],
    ['logo_uri javascript: (ATK-45)', { logo_uri: 'javascript:alert(document.cookie)' }],
    ['logo_uri data:', { logo_uri: 'data:image/svg+xml,<svg onload=alert(1)>' }],
    ['client_uri javascript:', { client_uri: 'javascript:alert(1)' }],
    ['policy_uri with a fragment', { policy_uri: 'https://app.example.com/p#x' }],
    ['tos_uri with a space', { tos_uri: 'https://app.example.com/t os' }],
    ['logo_uri over 2000 characters', { logo_uri: `https://app.example.com/${'a'.repeat(2000)}` }],
  ])('REG-14 refuses %s with invalid_client_metadata (RFC 7591 §5)', async (_label, metadata) => {
    expectError(await post(h, { redirect_uris: [CB], ...metadata }), 400, 'invalid_client_metadata');
  });

  it('REG-14 accepts https display URLs and echoes them', async () => {
    const urls = {
      client_uri: 'https://app.example.com',
      logo_uri: 'https://app.example.com/logo.png',
      policy_uri: 'https://app.example.com/privacy',
      tos_uri: 'https://app.example.com/terms',
    };
    const response = await post(h, { redirect_uris: [CB], ...urls });
    expect(response.status).toBe(201);
    expect(json(response)).toMatchObject(urls);
  });

  it('ATK-45 stores client_name with markup raw and returns it raw in JSON (escaping is the page’s job)', async () => {
    const name = `<img src=x onerror="alert('x')"> & "Course" \\ App`;
    const response = await post(h, { redirect_uris: [CB], client_name: name });
    expect(response.status).toBe(201);
    expect(response.headers['content-type']).toBe('application/json');
    const body = json(response);
    expect(body.client_name).toBe(name);
    expect((await h.storage.clients.get(body.client_id as string, START))?.metadata.client_name).toBe(name);
  });
});

describe('ATK-30 malformed JSON types and prototype pollution', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start();
  });
  afterAll(async () => {
    await h.close();
    // Nothing may have leaked onto Object.prototype during the file.
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it.each([
    ['redirect_uris as a string', JSON.stringify({ redirect_uris: CB })],
    ['redirect_uris null', JSON.stringify({ redirect_uris: null })],
    ['redirect_uris a number', JSON.stringify({ redirect_uris: 49152 })],
    ['redirect_uris of numbers', JSON.stringify({ redirect_uris: [127001, 49152] })],
    ['a __proto__ key', '{"__proto__":{"admin":true}}'],
    ['a constructor.prototype key', '{"constructor":{"prototype":{"admin":true}}}'],
    ['redirect_uris hidden behind __proto__', `{"__proto__":{"redirect_uris":["${CB}"]}}`],
  ])('ATK-30 refuses %s with 400, and pollutes nothing (RFC 7591 §3.2.2)', async (_label, body) => {
    expectError(await post(h, body), 400, ['invalid_client_metadata', 'invalid_redirect_uri']);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('admin');
    expect(Object.prototype).not.toHaveProperty('redirect_uris');
  });

  it('ATK-30 ignores __proto__ and constructor members beside valid metadata, without echoing or storing them', async () => {
    const raw = `{"redirect_uris":["${CB}"],"__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}}}`;
    const response = await post(h, raw);
    expect(response.status).toBe(201);
    expect(response.body).not.toContain('admin');
    const body = json(response);
    const record = await h.storage.clients.get(body.client_id as string, START);
    expect((record!.metadata as unknown as Record<string, unknown>).admin).toBeUndefined();
    expect(Object.hasOwn(record!.metadata, '__proto__')).toBe(false);
    expect(Object.hasOwn(record!.metadata, 'constructor')).toBe(false);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it.each([
    ['a client_name object carrying __proto__', { client_name: JSON.parse('{"__proto__":{"admin":true}}') }],
    ['an inherited name as auth method', { token_endpoint_auth_method: 'toString' }],
    ['an inherited name as grant type', { grant_types: ['authorization_code', 'constructor'] }],
    ['inherited names as scopes', { scope: '__proto__ constructor hasOwnProperty' }],
  ])('ATK-30 refuses %s with invalid_client_metadata', async (_label, metadata) => {
    expectError(await post(h, { redirect_uris: [CB], ...metadata }), 400, 'invalid_client_metadata');
  });
});

/** A JSON value nested `depth` levels deep. */
function nested(depth: number, open: string, close: string, inner: string): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

describe.each(Object.keys(TRANSPORTS) as (keyof typeof TRANSPORTS)[])(
  'ATK-29 huge JSON at /register through %s',
  (name) => {
    let h: Harness;
    let transport: Transport;
    beforeAll(async () => {
      h = await Harness.start();
      transport = await TRANSPORTS[name](h.server);
    });
    afterAll(async () => {
      await transport.close();
      await h.close();
    });

    it('ATK-29 answers a 10 MB body with 413, and the server answers the next request (RFC 7591 §3)', async () => {
      const huge = JSON.stringify({ redirect_uris: [CB], client_name: 'x'.repeat(10 * 1024 * 1024) });
      const response = await post(transport, huge);
      expectError(response, 413, 'invalid_request');
      const next = await post(transport, { redirect_uris: [CB] });
      expect(next.status).toBe(201);
    });

    it('ATK-29 answers a 10 MB chunked body (no Content-Length) with 413', async () => {
      const huge = `{"redirect_uris":["${CB}"],"client_name":"${'x'.repeat(10 * 1024 * 1024)}"}`;
      const response = await post(transport, huge, { ...JSON_HEADERS, 'transfer-encoding': 'chunked' });
      expectError(response, 413, 'invalid_request');
      expect((await post(transport, { redirect_uris: [CB] })).status).toBe(201);
    });

    it('ATK-29 refuses 10 000-deep nesting in redirect_uris, and in the whole body, with 400', async () => {
      const deepUris = `{"redirect_uris":${nested(10_000, '[', ']', `"${CB}"`)}}`;
      expectError(await post(transport, deepUris), 400, ['invalid_redirect_uri', 'invalid_client_metadata']);
      const deepBody = nested(10_000, '[', ']', '{}');
      expectError(await post(transport, deepBody), 400, 'invalid_client_metadata');
    });

    it('ATK-29 ignores a 10 000-deep unknown member (REG-10) and does not echo it', async () => {
      const deep = `{"redirect_uris":["${CB}"],"x":${nested(10_000, '{"a":', '}', '1')}}`;
      const response = await post(transport, deep);
      expect(response.status).toBe(201);
      expect('x' in json(response)).toBe(false);
    });

    it('ATK-29 answers 10 000 redirect URIs and a 1 MB client_name over the default body limit with 413', async () => {
      const uris = Array.from({ length: 10_000 }, () => CB);
      expectError(await post(transport, { redirect_uris: uris }), 413, 'invalid_request');
      expectError(
        await post(transport, { redirect_uris: [CB], client_name: 'n'.repeat(1024 * 1024) }),
        413,
        'invalid_request',
      );
      expect((await post(transport, { redirect_uris: [CB] })).status).toBe(201);
    });
  },
);

describe('ATK-29 with a body limit large enough to parse them', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ options: { maxBodyBytes: 2 * 1024 * 1024 } });
  });
  afterAll(() => h.close());

  it('ATK-29 refuses 10 000 redirect URIs with invalid_redirect_uri', async () => {
    const uris = Array.from({ length: 10_000 }, (_, i) => `http://127.0.0.1/cb${i}`);
    expectError(await post(h, { redirect_uris: uris }), 400, 'invalid_redirect_uri');
  });

  it('ATK-29 refuses a 1 MB client_name with invalid_client_metadata', async () => {
    expectError(
      await post(h, { redirect_uris: [CB], client_name: 'n'.repeat(1024 * 1024) }),
      400,
      'invalid_client_metadata',
    );
  });
});
