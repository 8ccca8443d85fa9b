/**
 * Options: a bad option rejects `createAuthorizationServer` with an `InvalidOptionsError` naming
 * each bad option, before anything is started; omitted options take the values of `DEFAULTS`.
 */
import { describe, expect, it } from 'vitest';
import {
  type AuthorizationServerOptions,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_PATHS,
  DEFAULTS,
  InvalidOptionsError,
  parseOptions,
} from '../src/options.js';
import { createScopePolicy } from '../src/scopes/policy.js';
import { defineScopes, oidcScopes } from '../src/scopes/registry.js';
import { createAuthorizationServer } from '../src/server.js';
import { memoryStorage } from '../src/storage/memory.js';

/** The InvalidOptionsError `createAuthorizationServer` rejects with for `options`. */
async function problemsOf(options: Record<string, unknown>): Promise<InvalidOptionsError> {
  const error = await createAuthorizationServer(options as unknown as AuthorizationServerOptions).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidOptionsError);
  return error as InvalidOptionsError;
}

const base = () => ({ issuer: 'https://auth.example.com', storage: memoryStorage() });

describe('the issuer (RFC 8414 §2)', () => {
  it('accepts https issuers, with a path or a port, and http on loopback', () => {
    for (const issuer of [
      'https://auth.example.com',
      'https://auth.example.com/tenant',
      'https://auth.example.com:8443',
      'http://127.0.0.1:3000',
      'http://localhost:3000',
      'http://[::1]:3000',
    ]) {
      expect(() => parseOptions({ ...base(), issuer }), issuer).not.toThrow();
    }
  });

  it.each([
    ['a trailing slash', 'https://auth.example.com/'],
    ['a trailing slash after a path', 'https://auth.example.com/tenant/'],
    ['a query', 'https://auth.example.com?tenant=1'],
    ['a fragment', 'https://auth.example.com#x'],
    ['http on a public host', 'http://auth.example.com'],
    ['http on a name that embeds a loopback address', 'http://127.0.0.1.nip.io:3000'],
    ['another scheme', 'ftp://auth.example.com'],
    ['a relative URL', '/auth'],
    ['no scheme', 'auth.example.com'],
    ['user info', 'https://admin:secret@auth.example.com'],
    ['an upper-case host', 'https://Auth.Example.com'],
    ['an upper-case scheme', 'HTTPS://auth.example.com'],
    ['the default port written out', 'https://auth.example.com:443'],
    ['a dot segment', 'https://auth.example.com/a/../tenant'],
    ['an IPv4 shorthand', 'http://127.1:3000'],
    ['a hexadecimal IPv4 host', 'http://0x7f.0.0.1:3000'],
  ])('refuses an issuer with %s, naming options.issuer', async (_label, issuer) => {
    const error = await problemsOf({ ...base(), issuer });
    expect(
      error.problems.some((p) => p.startsWith('options.issuer: ')),
      error.message,
    ).toBe(true);
  });

  it('names the normal form of an issuer written otherwise, since every endpoint URL is built from it (MD-01, MD-02)', async () => {
    const error = await problemsOf({ ...base(), issuer: 'https://Auth.Example.com:443/Tenant' });
    expect(error.problems.find((p) => p.startsWith('options.issuer: '))).toMatch(
      /https:\/\/auth\.example\.com\/Tenant$/,
    );
  });
});

describe('invalid options', () => {
  it('refuses a missing issuer and a missing storage', async () => {
    const error = await problemsOf({});
    expect(error.problems).toContain('options.issuer: is required');
    expect(error.problems.some((p) => p.startsWith('options.storage: '))).toBe(true);
  });

  it('refuses an unknown option at any depth, naming it (a typo must not silently keep a default)', async () => {
    const error = await problemsOf({ ...base(), clientSecretBsic: true, tokens: { codeTTLSeconds: 30 } });
    expect(error.problems).toContain('options: unknown option(s): clientSecretBsic');
    expect(error.problems).toContain('options.tokens: unknown option(s): codeTTLSeconds');
  });

  it('refuses a storage that does not implement the Storage interface, naming what it lacks', async () => {
    const { rotateRefreshToken: _dropped, ...grants } = memoryStorage().grants;
    const incomplete = { ...memoryStorage(), grants };
    expect((await problemsOf({ ...base(), storage: incomplete })).problems).toEqual([
      'options.storage: must implement the Storage interface (missing grants.rotateRefreshToken; docs/storage.md)',
    ]);
    for (const storage of [{}, null]) {
      const error = await problemsOf({ ...base(), storage });
      expect(error.problems.some((p) => p.startsWith('options.storage: '))).toBe(true);
    }
  });

  it('refuses a function option that is not a function, and an object option without its methods', async () => {
    const error = await problemsOf({ ...base(), authenticate: 'cookie', logger: { info() {} } });
    expect(error.problems).toContain('options.authenticate: must be a function (request => user | null)');
    expect(error.problems).toContain('options.logger: must implement Logger (missing debug, warn, error)');
  });

  it('refuses a signing algorithm this library does not sign with, listing those it does (RFC 7518 §3.1)', async () => {
    const error = await problemsOf({ ...base(), keys: { idTokenAlg: 'HS256' } });
    expect(error.problems).toEqual(['options.keys.idTokenAlg: must be one of "RS256", "ES256"']);
  });

  it('says which type an option must have', async () => {
    const error = await problemsOf({ ...base(), resources: 'https://auth.example.com', maxBodyBytes: '64k' });
    expect(error.problems).toEqual([
      'options.resources: must be an array',
      'options.maxBodyBytes: must be a number',
    ]);
  });

  it.each([
    [
      'a negative access token lifetime',
      { accessTokenTtlSeconds: -1 },
      'options.tokens.accessTokenTtlSeconds: ',
    ],
    [
      'a zero refresh token lifetime',
      { refreshTokenIdleTtlSeconds: 0 },
      'options.tokens.refreshTokenIdleTtlSeconds: ',
    ],
    ['a fractional lifetime', { idTokenTtlSeconds: 1.5 }, 'options.tokens.idTokenTtlSeconds: '],
    ['a code lifetime over 600 s', { codeTtlSeconds: 601 }, 'options.tokens.codeTtlSeconds: '],
    ['a refresh grace over 60 s', { refreshGraceSeconds: 61 }, 'options.tokens.refreshGraceSeconds: '],
  ])('refuses %s, naming the option', async (_label, tokens, prefix) => {
    const error = await problemsOf({ ...base(), tokens });
    expect(
      error.problems.some((p) => p.startsWith(prefix)),
      error.message,
    ).toBe(true);
  });

  it('caps the code lifetime at 10 minutes and says why (RFC 6749 §4.1.2), accepting exactly 600 s', async () => {
    const error = await problemsOf({ ...base(), tokens: { codeTtlSeconds: 601 } });
    expect(error.problems).toEqual(['options.tokens.codeTtlSeconds: must be at most 600 (RFC 6749 §4.1.2)']);
    expect(() => parseOptions({ ...base(), tokens: { codeTtlSeconds: 600 } })).not.toThrow();
  });

  it('bounds the metadata-document fetch limits (ABU-04), accepting 0 for failureCacheSeconds (remember nothing)', async () => {
    const error = await problemsOf({
      ...base(),
      clientIdMetadataDocuments: {
        maxConcurrentFetches: 0,
        hostFetchesPerMinute: 100_001,
        failureCacheSeconds: 3601,
      },
    });
    expect(error.problems).toEqual([
      'options.clientIdMetadataDocuments.maxConcurrentFetches: must be at least 1',
      'options.clientIdMetadataDocuments.hostFetchesPerMinute: must be at most 100000',
      'options.clientIdMetadataDocuments.failureCacheSeconds: must be at most 3600',
    ]);
    const bounds = { maxConcurrentFetches: 1000, hostFetchesPerMinute: 1, failureCacheSeconds: 0 };
    expect(
      parseOptions({ ...base(), clientIdMetadataDocuments: bounds }).clientIdMetadataDocuments,
    ).toMatchObject(bounds);
  });

  it('names every problem at once, each on its own line of the message', async () => {
    const error = await problemsOf({
      issuer: 'http://auth.example.com/',
      storage: {},
      tokens: { codeTtlSeconds: 3600 },
      maxBodyBytes: 10,
      loginUrl: 'javascript:alert(1)',
    });
    for (const option of ['issuer', 'storage', 'tokens.codeTtlSeconds', 'maxBodyBytes', 'loginUrl']) {
      expect(
        error.problems.some((p) => p.startsWith(`options.${option}: `)),
        option,
      ).toBe(true);
      expect(error.message).toContain(`\n  options.${option}: `);
    }
  });

  it('rejects with an InvalidOptionsError that is a TypeError', async () => {
    const error = await problemsOf({ ...base(), issuer: 'https://auth.example.com/' });
    expect(error).toBeInstanceOf(TypeError);
    expect(error.name).toBe('InvalidOptionsError');
  });
});

describe('options checked against each other', () => {
  it('refuses a resource scope the scope policy does not support (RFC 9728 §2 scopes_supported)', async () => {
    const error = await problemsOf({
      ...base(),
      resources: [{ resource: 'https://auth.example.com', scopes: ['openid', 'notes:read'] }],
    });
    expect(error.problems).toEqual([
      "options.resources.0.scopes: scope 'notes:read' of https://auth.example.com is not supported by the scope policy",
    ]);
  });

  it('refuses several resources of which one does not say which scopes it uses (RFC 9728 §2 scopes_supported)', async () => {
    const error = await problemsOf({
      ...base(),
      resources: [
        { resource: 'https://auth.example.com', scopes: ['openid'] },
        { resource: 'https://auth.example.com/mcp' },
      ],
    });
    expect(error.problems).toEqual([
      "options.resources.1.scopes: with several resources, say which scopes https://auth.example.com/mcp uses (its metadata's scopes_supported, which MCP clients request as a whole)",
    ]);
    // One resource may leave it out: every supported scope is for it.
    expect(() =>
      parseOptions({ ...base(), resources: [{ resource: 'https://auth.example.com' }] }),
    ).not.toThrow();
  });

  it('accepts a resource scope the configured policy supports', () => {
    const scopePolicy = createScopePolicy({
      registry: defineScopes([...oidcScopes, { name: 'notes:read', description: 'Read your notes' }]),
    });
    expect(() =>
      parseOptions({
        ...base(),
        scopePolicy,
        resources: [{ resource: 'https://auth.example.com', scopes: ['notes:read'] }],
      }),
    ).not.toThrow();
  });

  it('refuses a configured client whose redirect URI is not loopback or https (RFC 8252 §7.3)', async () => {
    const error = await problemsOf({
      ...base(),
      clients: [{ clientId: 'web', redirectUris: ['http://app.example.com/cb'] }],
    });
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatch(
      /^options\.clients\.0\.redirectUris\.0: http:\/\/app\.example\.com\/cb: /,
    );
  });

  it('refuses a secret without a secret auth method, and a secret auth method without a secret', async () => {
    for (const client of [
      { clientId: 'a', clientSecret: '0123456789abcdef', tokenEndpointAuthMethod: 'none' },
      { clientId: 'b', tokenEndpointAuthMethod: 'client_secret_post' },
    ]) {
      const error = await problemsOf({
        ...base(),
        clients: [{ redirectUris: ['http://127.0.0.1/cb'], ...client }],
      });
      expect(error.problems).toEqual([
        'options.clients.0.tokenEndpointAuthMethod: a client secret goes with a secret auth method, and only then',
      ]);
    }
  });

  it('refuses client_secret_basic for a configured client when clientSecretBasic is false (RFC 6749 §2.3.1)', async () => {
    const client = {
      clientId: 'web',
      clientSecret: '0123456789abcdef',
      redirectUris: ['https://app.example.com/cb'],
      tokenEndpointAuthMethod: 'client_secret_basic',
    };
    const error = await problemsOf({ ...base(), clients: [client], clientSecretBasic: false });
    expect(error.problems).toEqual([
      'options.clients.0.tokenEndpointAuthMethod: client_secret_basic needs options.clientSecretBasic',
    ]);
    expect(() => parseOptions({ ...base(), clients: [client] })).not.toThrow();
  });

  it('refuses a UserInfo audience that is neither the issuer nor a configured resource (RFC 8707 §2)', async () => {
    const error = await problemsOf({
      ...base(),
      resources: [{ resource: 'https://auth.example.com/mcp' }],
      userinfo: { audiences: ['https://auth.example.com/mcp', 'https://elsewhere.example/api'] },
    });
    expect(error.problems).toEqual([
      'options.userinfo.audiences.1: https://elsewhere.example/api is not one of options.resources',
    ]);
    expect(() =>
      parseOptions({ ...base(), userinfo: { audiences: ['https://auth.example.com'] } }),
    ).not.toThrow();
  });

  it('refuses configured keys without a key for the ID token or access token algorithm (RFC 7518 §3)', async () => {
    const error = await problemsOf({
      ...base(),
      keys: { privateJwks: [{ kty: 'EC', crv: 'P-256', d: 'x', x: 'x', y: 'y', alg: 'ES256' }] },
    });
    expect(error.problems).toEqual(['options.keys.privateJwks: no RS256 key (idTokenAlg)']);
  });
});

describe('defaults', () => {
  it('applies DEFAULTS to every omitted option', () => {
    const parsed = parseOptions(base());
    const { paths, registration, clientSecretBasic, tokens, keys, introspection, userinfo, consent } = parsed;
    expect({
      paths,
      registration,
      clientSecretBasic,
      tokens,
      keys,
      introspection,
      userinfo,
      consent,
    }).toEqual({
      paths: DEFAULTS.paths,
      registration: DEFAULTS.registration,
      clientSecretBasic: DEFAULTS.clientSecretBasic,
      tokens: DEFAULTS.tokens,
      keys: DEFAULTS.keys,
      introspection: DEFAULTS.introspection,
      userinfo: DEFAULTS.userinfo,
      consent: DEFAULTS.consent,
    });
    expect(parsed.clientIdMetadataDocuments).toEqual(DEFAULTS.clientIdMetadataDocuments);
    expect(parsed.metadata).toEqual(DEFAULTS.metadata);
    expect([parsed.maxBodyBytes, parsed.housekeepingIntervalSeconds, parsed.clientCacheSeconds]).toEqual([
      DEFAULTS.maxBodyBytes,
      DEFAULTS.housekeepingIntervalSeconds,
      DEFAULTS.clientCacheSeconds,
    ]);
  });

  it('keeps the defaults of the options left out of a partly given group', () => {
    const parsed = parseOptions({ ...base(), tokens: { codeTtlSeconds: 30 }, paths: { token: '/token' } });
    expect(parsed.tokens).toEqual({ ...DEFAULTS.tokens, codeTtlSeconds: 30 });
    expect(parsed.paths).toEqual({ ...DEFAULTS.paths, token: '/token' });
  });

  it('are neutral endpoint paths under /oauth, with the JWK Set at /.well-known/jwks.json (RFC 8414 §2)', () => {
    expect(DEFAULT_PATHS).toEqual({
      authorization: '/oauth/authorize',
      authorizationDecision: '/oauth/authorize/decision',
      token: '/oauth/token',
      registration: '/oauth/register',
      userinfo: '/oauth/userinfo',
      revocation: '/oauth/revoke',
      introspection: '/oauth/introspect',
      jwks: '/.well-known/jwks.json',
    });
    expect(DEFAULT_MAX_BODY_BYTES).toBe(DEFAULTS.maxBodyBytes);
  });

  it('cannot be changed by a host (DEFAULTS is frozen all the way down)', () => {
    expect(Object.isFrozen(DEFAULTS)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.tokens)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.clientIdMetadataDocuments.cache)).toBe(true);
    expect(() => {
      (DEFAULTS.tokens as { codeTtlSeconds: number }).codeTtlSeconds = 600;
    }).toThrow(TypeError);
  });
});
