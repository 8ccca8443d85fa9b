/**
 * The server's lifecycle: `await createAuthorizationServer(options)` resolves with a server that is
 * ready, or rejects once with an error saying what failed (`StartupError` and its `code`); with no
 * `paths` option the endpoints are served at the library's neutral defaults, which the metadata
 * advertises (RFC 8414 §3).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogFields, Logger } from '../src/core/context.js';
import { InvalidOptionsError } from '../src/options.js';
import { type AuthorizationServer, createAuthorizationServer } from '../src/server.js';
import { StartupError } from '../src/startup.js';
import { memoryStorage } from '../src/storage/memory.js';
import { postgresStorage } from '../src/storage/postgres.js';
import type { Storage } from '../src/storage/types.js';
import { StorageUnavailableError } from '../src/storage/unavailable.js';
import { recordingStorage } from './helpers/recording-storage.js';
import { randomSchemaName, requirePostgres } from './helpers/services.js';

const ISSUER = 'https://auth.example.com';

/** Memory storage whose method `store.method` (`keys.list`) rejects with `error`. */
function failing(path: `${'clients' | 'grants' | 'keys'}.${string}`, error: unknown): Storage {
  const storage = memoryStorage();
  const [store, method] = path.split('.') as ['clients' | 'grants' | 'keys', string];
  const inner = new Proxy(storage[store], {
    get(target, name, receiver) {
      if (name === method) return async () => Promise.reject(error);
      return Reflect.get(target, name, receiver) as unknown;
    },
  });
  return { ...storage, [store]: inner };
}

/** A driver's error: a message and a `code` (Node errno or SQLSTATE). */
const driverError = (message: string, code: string) => Object.assign(new Error(message), { code });

/** The rejection of `createAuthorizationServer(options)`. */
async function startupFailure(
  options: Parameters<typeof createAuthorizationServer>[0],
): Promise<StartupError> {
  const error = await createAuthorizationServer(options).then(
    (server) => server.close().then(() => undefined),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StartupError);
  return error as StartupError;
}

function recordingLogger(): Logger & { lines: { level: string; message: string; fields?: LogFields }[] } {
  const lines: { level: string; message: string; fields?: LogFields }[] = [];
  const log =
    (level: string) =>
    (message: string, fields?: LogFields): void => {
      lines.push({ level, message, ...(fields === undefined ? {} : { fields }) });
    };
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

describe('start-up', () => {
  it('resolves with a server that is ready: it routes, and its keys are published, at once', async () => {
    const { storage, calls } = recordingStorage();
    const server = await createAuthorizationServer({ issuer: ISSUER, storage });
    expect(calls).toContain('keys.list');
    expect(calls).toContain('keys.add');
    expect(server.matches('/oauth/token')).toBe(true);
    const jwks = await server.handle({ method: 'GET', url: '/.well-known/jwks.json', headers: {} });
    expect(JSON.parse(jwks?.body ?? '{}').keys).toHaveLength(2);
    await server.close();
  });

  it('touches nothing when the options are invalid: the storage is never called', async () => {
    const { storage, calls } = recordingStorage();
    const starting = createAuthorizationServer({ issuer: `${ISSUER}/`, storage });
    await expect(starting).rejects.toBeInstanceOf(InvalidOptionsError);
    expect(calls).toEqual([]);
  });

  it('rejects with storage_unavailable, the driver error as cause, when the storage cannot be reached', async () => {
    const refused = driverError('connect ECONNREFUSED 10.0.0.5:5432', 'ECONNREFUSED');
    const error = await startupFailure({ issuer: ISSUER, storage: failing('keys.list', refused) });
    expect(error.code).toBe('storage_unavailable');
    expect(error.cause).toBe(refused);
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('rejects with storage_migration_failed when the storage fails a statement on first use', async () => {
    const denied = driverError('permission denied for database auth', '42501');
    const error = await startupFailure({ issuer: ISSUER, storage: failing('keys.list', denied) });
    expect(error.code).toBe('storage_migration_failed');
    expect(error.cause).toBe(denied);
  });

  it('takes the code a storage states itself', async () => {
    const stated = driverError('schema is two versions behind', 'storage_migration_failed');
    const error = await startupFailure({ issuer: ISSUER, storage: failing('keys.list', stated) });
    expect(error.code).toBe('storage_migration_failed');
  });

  it('rejects with signing_keys_unavailable when a generated key cannot be stored', async () => {
    const full = driverError('could not extend file: No space left on device', '53100');
    const error = await startupFailure({ issuer: ISSUER, storage: failing('keys.add', full) });
    expect(error.code).toBe('signing_keys_unavailable');
    expect(error.cause).toBe(full);
  });

  it('rejects with signing_keys_unavailable when a configured key does not import (RFC 7517 §4)', async () => {
    const broken = { kty: 'RSA', alg: 'RS256', n: 'AQAB', e: 'AQAB', d: 'AQAB' };
    const error = await startupFailure({
      issuer: ISSUER,
      storage: memoryStorage(),
      keys: { privateJwks: [broken], accessTokenAlg: 'RS256' },
    });
    expect(error.code).toBe('signing_keys_unavailable');
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('rejects with invalid_configuration when a host object throws while the options are checked', async () => {
    const failure = new Error('registry not loaded');
    const scopePolicy = {
      supported: ['openid'],
      describe: () => {
        throw failure;
      },
      filterRequested: () => [],
      grantable: async () => [],
      consentRequired: () => true,
    };
    const error = await startupFailure({
      issuer: ISSUER,
      storage: memoryStorage(),
      scopePolicy: scopePolicy as never,
      resources: [{ resource: ISSUER, scopes: ['openid'] }],
    });
    expect(error.code).toBe('invalid_configuration');
    expect(error.cause).toBe(failure);
  });

  it('notes once, through the logger, that an http issuer is for development only', async () => {
    const logger = recordingLogger();
    const server = await createAuthorizationServer({
      issuer: 'http://127.0.0.1:3000',
      storage: memoryStorage(),
      logger,
    });
    await server.handle({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: {} });
    expect(logger.lines.filter((line) => line.message.includes('http'))).toEqual([
      {
        level: 'info',
        message: 'the issuer uses http: acceptable on loopback for development, never in production',
        fields: { issuer: 'http://127.0.0.1:3000' },
      },
    ]);
    await server.close();
  });
});

const postgres = await requirePostgres('start-up failures on PostgreSQL');

describe.skipIf(postgres === undefined)('start-up on PostgreSQL', () => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await postgres?.dropSchema(schema);
  });

  /** The start-up failure on a storage for `connectionString`, the storage closed afterwards. */
  async function failureOn(connectionString: string, options: { autoMigrate?: boolean } = {}) {
    const schema = randomSchemaName();
    schemas.push(schema);
    const storage = postgresStorage({ connectionString }, { schema, ...options });
    try {
      return await startupFailure({ issuer: ISSUER, storage });
    } finally {
      await storage.close();
    }
  }

  it('rejects with storage_unavailable when nothing listens at the address', async () => {
    const url = new URL(postgres!.url);
    url.port = '1';
    const error = await failureOn(url.toString());
    expect(error.code).toBe('storage_unavailable');
    // The storage classifies the refusal (a transient failure), keeping the driver's error as its cause.
    expect(error.cause).toBeInstanceOf(StorageUnavailableError);
    expect(error.cause).toMatchObject({ reason: 'unreachable', mayHaveApplied: false });
    expect(((error.cause as Error).cause as { code?: string }).code).toBe('ECONNREFUSED');
  });

  it('rejects with storage_unavailable when the database does not exist (SQLSTATE 3D000)', async () => {
    const url = new URL(postgres!.url);
    url.pathname = '/portcullis_no_such_database';
    const error = await failureOn(url.toString());
    expect(error.code).toBe('storage_unavailable');
    expect((error.cause as { code?: string }).code).toBe('3D000');
  });

  it('rejects with storage_migration_failed when autoMigrate is off and the schema is behind', async () => {
    const error = await failureOn(postgres!.url, { autoMigrate: false });
    expect(error.code).toBe('storage_migration_failed');
    expect(error.message).toMatch(/run portcullis-migrate/);
  });

  it('migrates on start, so that the first request finds the schema in place', async () => {
    const schema = randomSchemaName();
    schemas.push(schema);
    const storage = postgresStorage({ connectionString: postgres!.url }, { schema });
    const server = await createAuthorizationServer({ issuer: ISSUER, storage });
    expect((await storage.keys.list()).map((key) => key.alg).sort()).toEqual(['ES256', 'RS256']);
    await server.close();
    await storage.close();
  });
});

describe('neutral default paths (RFC 8414 §3)', () => {
  const paths = {
    authorization_endpoint: '/oauth/authorize',
    token_endpoint: '/oauth/token',
    registration_endpoint: '/oauth/register',
    userinfo_endpoint: '/oauth/userinfo',
    revocation_endpoint: '/oauth/revoke',
    introspection_endpoint: '/oauth/introspect',
    jwks_uri: '/.well-known/jwks.json',
  };
  let server: AuthorizationServer;
  beforeAll(async () => {
    server = await createAuthorizationServer({ issuer: ISSUER, storage: memoryStorage() });
  });
  afterAll(() => server.close());

  async function get(s: AuthorizationServer, url: string) {
    const response = await s.handle({ method: 'GET', url, headers: {} });
    return {
      status: response?.status,
      body: JSON.parse(response?.body ?? 'null') as Record<string, unknown>,
    };
  }

  it('advertises every endpoint under /oauth of the issuer when no paths are configured', async () => {
    const { status, body } = await get(server, '/.well-known/oauth-authorization-server');
    expect(status).toBe(200);
    for (const [member, path] of Object.entries(paths)) expect(body[member], member).toBe(`${ISSUER}${path}`);
  });

  it('routes each default path to its endpoint, and no /api/oauth path', async () => {
    for (const path of [...Object.values(paths), '/oauth/authorize/decision']) {
      expect(server.matches(path), path).toBe(true);
    }
    expect(server.matches('/api/oauth/token')).toBe(false);
    const registered = await server.handle({
      method: 'POST',
      url: '/oauth/register',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:49152/cb'] }),
    });
    expect(registered?.status).toBe(201);
    expect((await get(server, '/oauth/token')).status).toBe(405);
    expect((await get(server, '/oauth/userinfo')).status).toBe(401);
    expect((await get(server, '/.well-known/jwks.json')).status).toBe(200);
  });

  it('puts the default paths below an issuer with a path (RFC 8414 §3.1)', async () => {
    const tenant = await createAuthorizationServer({ issuer: `${ISSUER}/tenant`, storage: memoryStorage() });
    const { body } = await get(tenant, '/.well-known/oauth-authorization-server/tenant');
    expect(body.token_endpoint).toBe(`${ISSUER}/tenant/oauth/token`);
    expect(tenant.matches('/tenant/oauth/token')).toBe(true);
    await tenant.close();
  });

  it('serves a configured path instead of its default, and the other defaults unchanged', async () => {
    const custom = await createAuthorizationServer({
      issuer: ISSUER,
      storage: memoryStorage(),
      paths: { token: '/api/oauth/token' },
    });
    const { body } = await get(custom, '/.well-known/oauth-authorization-server');
    expect(body.token_endpoint).toBe(`${ISSUER}/api/oauth/token`);
    expect(body.registration_endpoint).toBe(`${ISSUER}/oauth/register`);
    expect(custom.matches('/oauth/token')).toBe(false);
    await custom.close();
  });
});
