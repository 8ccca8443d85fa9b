/**
 * Discovery documents: RFC 8414 authorization-server metadata, OpenID Connect Discovery 1.0,
 * RFC 9728 protected-resource metadata and the JWK Set (CONFORMANCE.md §1, MD-01..MD-17; ATK-46).
 */
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CB, consentFields, Harness, type HarnessOptions, ISSUER, json, pkce } from '../helpers/harness.js';
import { type TestRequest, type TestResponse, TRANSPORTS, type Transport } from '../helpers/transports.js';

const AS_PATH = '/.well-known/oauth-authorization-server';
const OIDC_PATH = '/.well-known/openid-configuration';
const PRM_PATH = '/.well-known/oauth-protected-resource';
const MCP_PRM_PATH = '/.well-known/oauth-protected-resource/mcp';
const JWKS_PATH = '/.well-known/jwks.json';

/** Spec §5.4, copied from the spec rather than from the library's registry. */
const SPEC_SCOPES = [
  'openid',
  'profile',
  'email',
  'courses:read',
  'courses:write',
  'students:read',
  'students:write',
  'members:read',
  'members:write',
  'analytics:read',
  'curriculum:read',
  'curriculum:write',
  'orders:read',
  'school:read',
  'school:write',
  'appearance:read',
  'appearance:write',
  'events:read',
  'events:write',
  'membership_plans:read',
  'membership_plans:write',
  'coupons:read',
  'coupons:write',
  'posts:read',
  'posts:write',
  'subscriptions:read',
  'subscriptions:write',
  'digital_products:read',
  'digital_products:write',
  'comments:read',
  'lecturers:read',
  'lecturers:write',
  'storage:write',
  'forms:read',
  'pages:read',
  'pages:write',
  'account:read',
  'account:write',
];

/** The JWK members a public key may carry (RFC 7517 §4, RFC 7518 §6.2.1, §6.3.1). */
const PUBLIC_JWK_MEMBERS = new Set(['kty', 'kid', 'alg', 'use', 'key_ops', 'n', 'e', 'crv', 'x', 'y']);

type Doc = Record<string, unknown>;

async function getDoc(h: { send(r: TestRequest): Promise<TestResponse> }, url: string): Promise<Doc> {
  const response = await h.send({ method: 'GET', url });
  expect(response.status, `GET ${url}: ${response.body.slice(0, 200)}`).toBe(200);
  return json(response);
}

/** Paths in a JSON value whose value is `null` or an empty array (RFC 8414 §3.2 omits those). */
function emptyMembers(value: unknown, path = '$'): string[] {
  if (value === null) return [path];
  if (Array.isArray(value)) {
    if (value.length === 0) return [path];
    return value.flatMap((v, i) => emptyMembers(v, `${path}[${i}]`));
  }
  if (typeof value === 'object') {
    return Object.entries(value as Doc).flatMap(([k, v]) => emptyMembers(v, `${path}.${k}`));
  }
  return [];
}

function sorted(value: unknown): string[] {
  expect(Array.isArray(value)).toBe(true);
  return [...(value as string[])].sort();
}

describe('authorization server metadata (RFC 8414) with the course-school configuration', () => {
  let h: Harness;
  let as: Doc;
  let oidc: Doc;
  beforeAll(async () => {
    h = await Harness.start();
    as = await getDoc(h, AS_PATH);
    oidc = await getDoc(h, OIDC_PATH);
  });
  afterAll(() => h.close());

  it('MD-01 answers 200 application/json with issuer exactly equal to the configured issuer (RFC 8414 §3.2, §3.3)', async () => {
    const response = await h.send({ method: 'GET', url: AS_PATH });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    expect(as.issuer).toBe(ISSUER);
    const issuer = new URL(as.issuer as string);
    expect(issuer.search).toBe('');
    expect(issuer.hash).toBe('');
    expect((as.issuer as string).endsWith('/')).toBe(false);
  });

  it('MD-02 advertises the spec endpoints, response_types_supported ["code"] and exactly the 38 spec scopes (RFC 8414 §2, spec §4.1, §5.4)', () => {
    expect(as.authorization_endpoint).toBe(`${ISSUER}/oauth/authorize`);
    expect(as.token_endpoint).toBe(`${ISSUER}/api/oauth/token`);
    expect(as.response_types_supported).toEqual(['code']);
    expect(as.scopes_supported).toHaveLength(38);
    expect(sorted(as.scopes_supported)).toEqual([...SPEC_SCOPES].sort());
  });

  it('MD-03 states grant_types_supported as exactly authorization_code and refresh_token (RFC 8414 §2; OAuth 2.1 §10)', () => {
    expect(as.grant_types_supported).toEqual(['authorization_code', 'refresh_token']);
  });

  it('MD-04 advertises code_challenge_methods_supported ["S256"] and never plain (RFC 8414 §2; RFC 9700 §2.1.1)', () => {
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
  });

  it('MD-05 states the auth methods of the token and revocation endpoints explicitly: none, client_secret_post and client_secret_basic (RFC 8414 §2, RFC 6749 §2.3.1)', () => {
    const methods = ['none', 'client_secret_post', 'client_secret_basic', 'private_key_jwt'];
    expect(as.token_endpoint_auth_methods_supported).toEqual(methods);
    expect(as.revocation_endpoint_auth_methods_supported).toEqual(methods);
  });

  it('MD-05 states the introspection auth methods explicitly, without none: introspection requires authentication (RFC 7662 §2.1)', () => {
    // CONFORMANCE.md MD-05 asks for the same list as the token endpoint; RFC 7662 §2.1 requires the
    // caller to authenticate, so the library advertises (and accepts) only the secret methods.
    expect(as.introspection_endpoint_auth_methods_supported).toEqual([
      'client_secret_post',
      'client_secret_basic',
      'private_key_jwt',
    ]);
  });

  it('MD-06 advertises registration, revocation and introspection endpoints as absolute URLs that answer (RFC 8414 §2)', async () => {
    expect(as.registration_endpoint).toBe(`${ISSUER}/api/oauth/register`);
    expect(as.revocation_endpoint).toBe(`${ISSUER}/api/oauth/revoke`);
    expect(as.introspection_endpoint).toBe(`${ISSUER}/api/oauth/introspect`);
    for (const member of ['registration_endpoint', 'revocation_endpoint', 'introspection_endpoint']) {
      const url = new URL(as[member] as string);
      expect(url.origin).toBe(ISSUER);
      const response = await h.send({
        method: 'POST',
        url: url.pathname,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: '',
      });
      // Each endpoint is routed and answers an OAuth JSON error for an empty request.
      expect(response.status, member).toBeGreaterThanOrEqual(400);
      expect(response.status, member).toBeLessThan(500);
      expect(response.status, member).not.toBe(404);
      expect(typeof json(response).error).toBe('string');
    }
  });

  it('MD-07 sets authorization_response_iss_parameter_supported and sends iss equal to issuer with the code (RFC 9207 §2, §3)', async () => {
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
    const client = await h.register();
    const { params } = await h.obtainCode(client);
    expect(params.getAll('iss')).toEqual([ISSUER]);
  });

  it('MD-08 sets client_id_metadata_document_supported to false while CIMD is off (CIMD §5)', () => {
    expect(as.client_id_metadata_document_supported).toBe(false);
    expect(oidc.client_id_metadata_document_supported).toBe(false);
  });

  it('MD-09 has no null members and no empty arrays in any document (RFC 8414 §3.2)', async () => {
    for (const path of [AS_PATH, OIDC_PATH, PRM_PATH, MCP_PRM_PATH, JWKS_PATH]) {
      expect(emptyMembers(await getDoc(h, path)), path).toEqual([]);
    }
  });

  it('MD-11 serves the OpenID Connect discovery document with the OP members (OIDC Discovery §3, §4.2)', async () => {
    const response = await h.send({ method: 'GET', url: OIDC_PATH });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    expect(oidc.issuer).toBe(ISSUER);
    expect(oidc.jwks_uri).toBe(`${ISSUER}${JWKS_PATH}`);
    expect(oidc.subject_types_supported).toEqual(['public']);
    expect(oidc.response_types_supported).toEqual(['code']);
    expect(oidc.id_token_signing_alg_values_supported).toContain('RS256');
    expect(oidc.scopes_supported).toContain('openid');
    expect(oidc.userinfo_endpoint).toBe(`${ISSUER}/api/oauth/userinfo`);
  });

  it('MD-12 carries code_challenge_methods_supported ["S256"] in the OIDC document too (MCP › Authorization Code Protection)', () => {
    expect(oidc.code_challenge_methods_supported).toEqual(['S256']);
  });

  it('MD-13 the two authorization server documents agree on every shared member (RFC 8414 §5)', () => {
    const shared = Object.keys(as).filter((key) => key in oidc);
    // Every RFC 8414 member is repeated in the OIDC document...
    expect(shared.sort()).toEqual(Object.keys(as).sort());
    // ...with the same value.
    const differences = shared.filter((key) => JSON.stringify(as[key]) !== JSON.stringify(oidc[key]));
    expect(differences).toEqual([]);
  });

  it('MD-17 lets any origin GET the documents and the JWKS (RFC 9700 §2.6)', async () => {
    for (const path of [AS_PATH, OIDC_PATH, PRM_PATH, MCP_PRM_PATH, JWKS_PATH]) {
      const response = await h.send({ method: 'GET', url: path, headers: { origin: 'https://app.example' } });
      expect(response.status, path).toBe(200);
      expect(response.headers['access-control-allow-origin'], path).toBe('*');
    }
  });

  it('MD-17 answers a CORS preflight with 204 and the allowed methods', async () => {
    for (const path of [AS_PATH, JWKS_PATH]) {
      const response = await h.send({
        method: 'OPTIONS',
        url: path,
        headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
      });
      expect(response.status, path).toBe(204);
      expect(response.headers['access-control-allow-origin'], path).toBe('*');
      expect(response.headers['access-control-allow-methods'], path).toContain('GET');
    }
  });

  it('MD-17 refuses POST, PUT and DELETE on the documents with 405 and an Allow header without them', async () => {
    for (const path of [AS_PATH, OIDC_PATH, PRM_PATH, MCP_PRM_PATH, JWKS_PATH]) {
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const response = await h.send({
          method,
          url: path,
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
        expect(response.status, `${method} ${path}`).toBe(405);
        const allow = (response.headers.allow ?? '').split(',').map((m) => m.trim());
        expect(allow, `${method} ${path}`).toContain('GET');
        expect(allow, `${method} ${path}`).not.toContain(method);
        expect(json(response).error).toBe('method_not_allowed');
      }
    }
  });
});

describe('protected resource metadata (RFC 9728)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start();
  });
  afterAll(() => h.close());

  it('MD-14 the root document names the issuer as resource, the authorization server, the scopes and header bearer tokens (RFC 9728 §2, §3.3)', async () => {
    const response = await h.send({ method: 'GET', url: PRM_PATH });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    const prm = json(response);
    expect(prm.resource).toBe(ISSUER);
    expect(prm.authorization_servers).toEqual([ISSUER]);
    expect(sorted(prm.scopes_supported)).toEqual([...SPEC_SCOPES].sort());
    expect(prm.bearer_methods_supported).toEqual(['header']);
  });

  it('MD-15 the /mcp document is served by path insertion with resource equal to $AS/mcp (RFC 9728 §3.1)', async () => {
    const prm = await getDoc(h, MCP_PRM_PATH);
    expect(prm.resource).toBe(`${ISSUER}/mcp`);
    expect(prm.authorization_servers).toEqual([ISSUER]);
    expect(prm.bearer_methods_supported).toEqual(['header']);
    // Never appended after the resource path.
    const appended = await h.send({ method: 'GET', url: `/mcp${PRM_PATH}` });
    expect(appended.status).toBe(404);
  });

  it('MD-09 omits scopes_supported when a resource lists no scopes, instead of sending []', async () => {
    const other = await Harness.start({ options: { resources: [{ resource: ISSUER, scopes: [] }] } });
    try {
      const prm = await getDoc(other, PRM_PATH);
      expect('scopes_supported' in prm).toBe(false);
      expect(emptyMembers(prm)).toEqual([]);
    } finally {
      await other.close();
    }
  });
});

describe('JWK Set (OIDC Core §10.1)', () => {
  it('MD-16 publishes public members only, with a distinct kid per key, before and after a rotation', async () => {
    const h = await Harness.start();
    try {
      for (const phase of ['initial', 'rotated']) {
        const response = await h.send({ method: 'GET', url: JWKS_PATH });
        expect(response.status).toBe(200);
        expect(response.headers['content-type']).toBe('application/json');
        const keys = json(response).keys as Doc[];
        expect(keys.length, phase).toBeGreaterThan(0);
        for (const key of keys) {
          expect(
            Object.keys(key).filter((m) => !PUBLIC_JWK_MEMBERS.has(m)),
            phase,
          ).toEqual([]);
          expect(typeof key.kid).toBe('string');
          expect(key.use).toBe('sig');
        }
        const kids = keys.map((k) => k.kid);
        expect(new Set(kids).size, phase).toBe(kids.length);
        if (phase === 'initial') await h.server.rotateSigningKeys();
      }
    } finally {
      await h.close();
    }
  });

  it('MD-16 has a key for every algorithm in id_token_signing_alg_values_supported (generated keys)', async () => {
    const h = await Harness.start();
    try {
      const oidc = await getDoc(h, OIDC_PATH);
      const keys = (await getDoc(h, JWKS_PATH)).keys as Doc[];
      for (const alg of oidc.id_token_signing_alg_values_supported as string[]) {
        expect(
          keys.some((k) => k.alg === alg),
          alg,
        ).toBe(true);
      }
    } finally {
      await h.close();
    }
  });

  it('MD-16 advertises only the ID token algorithms the configured private keys can sign (RS256 key only)', async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', kid: 'rsa-1' };
    const h = await Harness.start({
      options: { keys: { privateJwks: [jwk], idTokenAlg: 'RS256', accessTokenAlg: 'RS256' } },
    });
    try {
      const oidc = await getDoc(h, OIDC_PATH);
      const jwks = await getDoc(h, JWKS_PATH);
      expect(jwks.keys).toEqual([{ kty: 'RSA', n: jwk.n, e: jwk.e, kid: 'rsa-1', alg: 'RS256', use: 'sig' }]);
      expect(oidc.id_token_signing_alg_values_supported).toEqual(['RS256']);
    } finally {
      await h.close();
    }
  });
});

describe('metadata that follows the options', () => {
  const created: Harness[] = [];
  const harness = async (options: NonNullable<HarnessOptions['options']>) => {
    const h = await Harness.start({ options });
    created.push(h);
    return h;
  };
  afterAll(async () => {
    for (const h of created) await h.close();
  });

  it('MD-05 PKJ-05 lists client_secret_basic in all three auth-method lists by default, none of them when clientSecretBasic is false', async () => {
    const off = await getDoc(
      await harness({ clientSecretBasic: false, privateKeyJwt: { enabled: false } }),
      AS_PATH,
    );
    expect(off.token_endpoint_auth_methods_supported).toEqual(['none', 'client_secret_post']);
    expect(off.revocation_endpoint_auth_methods_supported).toEqual(['none', 'client_secret_post']);
    expect(off.introspection_endpoint_auth_methods_supported).toEqual(['client_secret_post']);
    expect(off.token_endpoint_auth_signing_alg_values_supported).toBeUndefined();
    const h = await harness({});
    for (const path of [AS_PATH, OIDC_PATH]) {
      const doc = await getDoc(h, path);
      expect(doc.token_endpoint_auth_methods_supported).toEqual([
        'none',
        'client_secret_post',
        'client_secret_basic',
        'private_key_jwt',
      ]);
      expect(doc.revocation_endpoint_auth_methods_supported).toEqual([
        'none',
        'client_secret_post',
        'client_secret_basic',
        'private_key_jwt',
      ]);
      expect(doc.introspection_endpoint_auth_methods_supported).toEqual([
        'client_secret_post',
        'client_secret_basic',
        'private_key_jwt',
      ]);
    }
  });

  it('MD-08 sets client_id_metadata_document_supported to true when clientIdMetadataDocuments is enabled', async () => {
    const h = await harness({ clientIdMetadataDocuments: { enabled: true } });
    expect((await getDoc(h, AS_PATH)).client_id_metadata_document_supported).toBe(true);
    expect((await getDoc(h, OIDC_PATH)).client_id_metadata_document_supported).toBe(true);
  });

  it('MD-09 omits optional members configured empty (ui_locales_supported: [])', async () => {
    const h = await harness({ metadata: { uiLocalesSupported: [] } });
    for (const path of [AS_PATH, OIDC_PATH]) {
      const doc = await getDoc(h, path);
      expect('ui_locales_supported' in doc, path).toBe(false);
      expect(emptyMembers(doc), path).toEqual([]);
    }
  });

  it('registration disabled: no registration_endpoint member, and its path answers 404', async () => {
    const h = await harness({ registration: { enabled: false } });
    for (const path of [AS_PATH, OIDC_PATH]) {
      expect('registration_endpoint' in (await getDoc(h, path)), path).toBe(false);
    }
    const register = await h.send({
      method: 'POST',
      url: '/api/oauth/register',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [CB] }),
    });
    expect(register.status).toBe(404);
    const node = await TRANSPORTS.node(h.server);
    try {
      const overHttp = await node.send({
        method: 'POST',
        url: '/api/oauth/register',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [CB] }),
      });
      expect(overHttp.status).toBe(404);
      expect(overHttp.body).not.toContain('client_id');
    } finally {
      await node.close();
    }
  });

  it('introspection disabled: neither the endpoint nor its auth methods are advertised', async () => {
    const h = await harness({ introspection: { enabled: false } });
    const doc = await getDoc(h, AS_PATH);
    expect('introspection_endpoint' in doc).toBe(false);
    expect('introspection_endpoint_auth_methods_supported' in doc).toBe(false);
    expect(emptyMembers(doc)).toEqual([]);
  });

  it('an issuer with a path: RFC 8414 inserts the well-known segment, OIDC Discovery appends it (RFC 8414 §3.1; OIDC Discovery §4)', async () => {
    const issuer = `${ISSUER}/tenant`;
    const h = await harness({
      issuer,
      resources: [
        { resource: issuer, scopes: ['openid'] },
        { resource: `${issuer}/mcp`, scopes: [] },
      ],
    });
    const as = await getDoc(h, `${AS_PATH}/tenant`);
    const oidc = await getDoc(h, `/tenant${OIDC_PATH}`);
    for (const doc of [as, oidc]) {
      expect(doc.issuer).toBe(issuer);
      expect(doc.authorization_endpoint).toBe(`${issuer}/oauth/authorize`);
      expect(doc.token_endpoint).toBe(`${issuer}/api/oauth/token`);
      expect(doc.jwks_uri).toBe(`${issuer}${JWKS_PATH}`);
    }
    // The documents are not also served at the origin's root, nor with the other construction.
    for (const wrong of [AS_PATH, OIDC_PATH, `/tenant${AS_PATH}`, `${OIDC_PATH}/tenant`]) {
      expect((await h.send({ method: 'GET', url: wrong })).status, wrong).toBe(404);
    }
    // The advertised endpoints are the ones that answer.
    expect((await h.send({ method: 'GET', url: `/tenant${JWKS_PATH}` })).status).toBe(200);
    const register = await h.send({
      method: 'POST',
      url: new URL(as.registration_endpoint as string).pathname,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [CB] }),
    });
    expect(register.status).toBe(201);
    // RFC 9728 §3.1 inserts the well-known segment before the resource's path, too.
    expect((await getDoc(h, `${PRM_PATH}/tenant`)).resource).toBe(issuer);
    expect((await getDoc(h, `${PRM_PATH}/tenant/mcp`)).resource).toBe(`${issuer}/mcp`);
  });
});

describe('MD-10 / ATK-46 forged Host headers over real HTTP', () => {
  let h: Harness;
  // A forged Host itself is refused 421 before any document (ABU-06, test/adapters/host-check.test.ts);
  // what a client can add beside the Host is ignored.
  const FORGED: Record<string, string> = {
    'x-forwarded-host': 'evil.example',
    'x-forwarded-proto': 'https',
    'x-forwarded-port': '443',
    forwarded: 'host=evil.example;proto=https',
  };
  const transports: Transport[] = [];
  beforeAll(async () => {
    h = await Harness.start();
    for (const make of Object.values(TRANSPORTS)) transports.push(await make(h.server));
  });
  afterAll(async () => {
    for (const t of transports) await t.close();
    await h.close();
  });

  it.each(Object.keys(TRANSPORTS))(
    'MD-10 %s: every document is byte-identical with a forged X-Forwarded-Host / Forwarded (RFC 8414 §3.3; RFC 9700 §4.4)',
    async (name) => {
      const transport = transports.find((t) => t.name === name)!;
      for (const path of [AS_PATH, OIDC_PATH, PRM_PATH, MCP_PRM_PATH]) {
        const honest = await transport.send({ method: 'GET', url: path });
        const forged = await transport.send({ method: 'GET', url: path, headers: FORGED });
        expect(honest.status, path).toBe(200);
        expect(forged.status, path).toBe(200);
        expect(forged.body, path).toBe(honest.body);
        expect(forged.body, path).not.toContain('evil.example');
        const named = (json(forged).resource ?? json(forged).issuer) as string;
        expect(named.slice(0, ISSUER.length), path).toBe(ISSUER);
      }
    },
  );

  it.each(Object.keys(TRANSPORTS))(
    'ATK-46 %s: the login redirect and the iss of the code redirect ignore a forged X-Forwarded-Host (RFC 9207 §2)',
    async (name) => {
      const transport = transports.find((t) => t.name === name)!;
      const previous = h.transport;
      h.transport = transport;
      try {
        await loginAndConsentThrough(transport);
      } finally {
        h.transport = previous;
      }
    },
  );

  it('MD-10 ABU-06 a forged Host gets no document at all: 421 before any endpoint', async () => {
    for (const path of [AS_PATH, OIDC_PATH, PRM_PATH, MCP_PRM_PATH]) {
      const forged = await h.server.handle({ method: 'GET', url: path, headers: { host: 'evil.example' } });
      expect(forged?.status, path).toBe(421);
      expect(forged?.body, path).not.toContain('evil.example');
    }
  });

  async function loginAndConsentThrough(transport: Transport): Promise<void> {
    const client = await h.register();
    const url = h.authorizeUrl(client, pkce());
    const login = await transport.send({ method: 'GET', url, headers: FORGED });
    expect(login.status).toBe(303);
    const loginPrefix = `${ISSUER}/login?return_to=${encodeURIComponent(ISSUER)}`;
    expect(login.headers.location?.slice(0, loginPrefix.length)).toBe(loginPrefix);
    const cookie = h.login('ada');
    const page = await transport.send({ method: 'GET', url, headers: { ...FORGED, cookie } });
    expect(page.status).toBe(200);
    const done = await h.decide(consentFields(page), 'allow', cookie, FORGED);
    expect(done.status).toBe(303);
    const location = new URL(done.headers.location!);
    expect(location.origin + location.pathname).toBe(CB);
    expect(location.searchParams.getAll('iss')).toEqual([ISSUER]);
  }
});
