/**
 * Logging operators see (the conformance checklist's Logging row): the default logger writes
 * warnings and errors as one JSON line each on standard error; every 5xx is logged once under a
 * request id the response carries; a database error's text never reaches the client and its
 * parameters never reach the log; risky settings announce themselves once at start.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defaultLogger, type Logger } from '../../src/core/context.js';
import { createMemoryRateLimiter } from '../../src/rate-limit/memory.js';
import { createAuthorizationServer } from '../../src/server.js';
import { memoryStorage } from '../../src/storage/memory.js';
import type { Storage } from '../../src/storage/types.js';
import { form, ISSUER } from '../helpers/harness.js';
import { recordingLogger } from '../helpers/recording-logger.js';

const SECRET = 'client-secret-that-must-not-be-logged';
const CODE = 'authorization-code-that-must-not-be-logged';

/** A PostgreSQL driver's error: a message quoting a value, and the statement with its parameters. */
function databaseError(): Error {
  return Object.assign(new Error(`invalid input syntax for type uuid: "${CODE}"`), {
    name: 'PostgresError',
    code: '22P02',
    query: 'select * from portcullis.clients where client_id = $1',
    parameters: [CODE],
  });
}

/** Memory storage whose client lookups throw `failure()` while `failing` is set. */
function failingStorage(failure: () => Error): { storage: Storage; fail(on: boolean): void } {
  const inner = memoryStorage();
  let failing = false;
  const storage: Storage = {
    ...inner,
    clients: {
      ...inner.clients,
      async get(...args) {
        if (failing) throw failure();
        return inner.clients.get(...args);
      },
    },
  };
  return {
    storage,
    fail(on) {
      failing = on;
    },
  };
}

async function server(storage: Storage, logger: Logger) {
  return createAuthorizationServer({
    issuer: ISSUER,
    storage,
    logger,
    rateLimiter: createMemoryRateLimiter(),
  });
}

function tokenRequest(headers: Record<string, string> = {}) {
  return {
    method: 'POST',
    url: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: form({
      grant_type: 'authorization_code',
      code: CODE,
      client_id: 'a-registered-client',
      client_secret: SECRET,
      redirect_uri: 'http://127.0.0.1:49152/cb',
      code_verifier: 'v'.repeat(43),
    }),
    remoteAddress: '203.0.113.7',
  };
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('the default logger', () => {
  it('writes each warning and error as one JSON line on standard error, and drops debug and info', () => {
    const written: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: unknown) => void written.push(String(line)));
    defaultLogger.debug('debug detail');
    defaultLogger.info('a key was generated', { alg: 'ES256' });
    defaultLogger.warn('a risky setting', { option: 'rateLimiter', absent: undefined });
    defaultLogger.error('request failed', { path: '/oauth/token', requestId: 'abc' });
    expect(written).toHaveLength(2);
    for (const line of written) expect(line).not.toContain('\n');
    const [warn, error] = written.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(warn).toMatchObject({ level: 'warn', message: 'a risky setting', option: 'rateLimiter' });
    expect(warn).not.toHaveProperty('absent');
    expect(error).toMatchObject({
      level: 'error',
      message: 'request failed',
      path: '/oauth/token',
      requestId: 'abc',
    });
    expect(Date.parse(String(error?.time))).not.toBeNaN();
  });

  it('is what a server logs to when no logger is given: a forced 500 reaches standard error', async () => {
    const written: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: unknown) => void written.push(String(line)));
    const { storage, fail } = failingStorage(() => new Error('boom'));
    const oauth = await createAuthorizationServer({
      issuer: ISSUER,
      storage,
      rateLimiter: createMemoryRateLimiter(),
    });
    fail(true);
    const response = await oauth.handle(tokenRequest());
    expect(response?.status).toBe(500);
    const lines = written.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.filter((line) => line.level === 'error')).toEqual([
      expect.objectContaining({ message: 'request failed', requestId: response?.headers['x-request-id'] }),
    ]);
    await oauth.close();
  });
});

describe('a 500', () => {
  it('is logged once, under the request id the response carries in X-Request-Id', async () => {
    const logger = recordingLogger();
    const { storage, fail } = failingStorage(() => new Error('the disk is on fire'));
    const oauth = await server(storage, logger);
    fail(true);
    const response = await oauth.handle(tokenRequest());
    expect(response?.status).toBe(500);
    const requestId = response?.headers['x-request-id'];
    expect(requestId).toMatch(/^[0-9a-f]{16}$/);
    const body = JSON.parse(response?.body ?? '{}') as Record<string, string>;
    expect(body.error).toBe('server_error');
    expect(response?.body).not.toContain('disk');
    const errors = logger.lines.filter((line) => line.level === 'error');
    expect(errors).toEqual([
      {
        level: 'error',
        message: 'request failed',
        fields: { path: '/oauth/token', requestId, error: 'Error: the disk is on fire' },
      },
    ]);
    // Nothing the client sent is in the log: not its secret, not its code.
    expect(logger.text()).not.toContain(SECRET);
    expect(logger.text()).not.toContain(CODE);
    await oauth.close();
  });

  it('keeps the id a proxy gave in X-Request-Id, and replaces one that is not a plain token', async () => {
    const logger = recordingLogger();
    const { storage, fail } = failingStorage(() => new Error('boom'));
    const oauth = await server(storage, logger);
    fail(true);
    const kept = await oauth.handle(tokenRequest({ 'x-request-id': 'edge-7f3a9c21' }));
    expect(kept?.headers['x-request-id']).toBe('edge-7f3a9c21');
    const forged = await oauth.handle(tokenRequest({ 'x-request-id': 'a"}\n{"level":"error' }));
    expect(forged?.headers['x-request-id']).toMatch(/^[0-9a-f]{16}$/);
    expect(
      logger.lines.filter((line) => line.level === 'error').map((line) => line.fields?.requestId),
    ).toEqual(['edge-7f3a9c21', forged?.headers['x-request-id']]);
    await oauth.close();
  });

  it('never sends a database error text to the client, nor logs the statement or its parameters', async () => {
    const logger = recordingLogger();
    const { storage, fail } = failingStorage(databaseError);
    const oauth = await server(storage, logger);
    fail(true);
    const response = await oauth.handle(tokenRequest());
    expect(response?.status).toBe(500);
    expect(response?.body).not.toMatch(/uuid|select|portcullis\.clients|22P02/i);
    expect(response?.body).not.toContain(CODE);
    const errors = logger.lines.filter((line) => line.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.fields?.error).toBe('PostgresError: SQLSTATE 22P02');
    expect(logger.text()).not.toContain(CODE);
    expect(logger.text()).not.toMatch(/select|\$1/i);
    await oauth.close();
  });

  it('of the authorization endpoint is logged with the id its page carries', async () => {
    const logger = recordingLogger();
    const { storage, fail } = failingStorage(databaseError);
    const oauth = await server(storage, logger);
    fail(true);
    const response = await oauth.handle({
      method: 'GET',
      url: '/oauth/authorize?response_type=code&client_id=a-registered-client',
      headers: {},
    });
    expect(response?.status).toBe(500);
    expect(response?.body).not.toContain('22P02');
    const requestId = response?.headers['x-request-id'];
    expect(logger.lines.filter((line) => line.level === 'error')).toEqual([
      expect.objectContaining({
        message: 'authorization request failed',
        fields: expect.objectContaining({ requestId }),
      }),
    ]);
    await oauth.close();
  });

  it('is not what a refusal is: a 400 carries no request id and logs nothing', async () => {
    const logger = recordingLogger();
    const oauth = await server(memoryStorage(), logger);
    const response = await oauth.handle({ ...tokenRequest(), body: 'grant_type=password' });
    expect(response?.status).toBe(400);
    expect(response?.headers).not.toHaveProperty('x-request-id');
    expect(logger.lines.filter((line) => line.level === 'error' || line.level === 'warn')).toEqual([]);
    await oauth.close();
  });
});

describe('risky settings announce themselves once, at start', () => {
  const warnings = (logger: ReturnType<typeof recordingLogger>) =>
    logger.lines.filter((line) => line.level === 'warn').map((line) => line.message);

  it('open registration without a rate limiter: one warning, however many requests follow', async () => {
    const logger = recordingLogger();
    const oauth = await createAuthorizationServer({ issuer: ISSUER, storage: memoryStorage(), logger });
    for (let i = 0; i < 3; i++) {
      await oauth.handle({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: {} });
    }
    expect(warnings(logger)).toEqual([expect.stringMatching(/^dynamic registration is open to anyone/)]);
    await oauth.close();
  });

  it('says nothing at warn level for a loopback http issuer in development with a limiter', async () => {
    const logger = recordingLogger();
    const oauth = await server(memoryStorage(), logger);
    expect(warnings(logger)).toEqual([]);
    expect(logger.lines.filter((line) => line.level === 'info').map((line) => line.message)).toContain(
      'the issuer uses http: acceptable on loopback for development, never in production',
    );
    await oauth.close();
  });

  it('in production: the http issuer and memory storage are warnings', async () => {
    vi.stubEnv('NODE_ENV', 'production');
    const logger = recordingLogger();
    const oauth = await server(memoryStorage(), logger);
    expect(warnings(logger)).toEqual([
      'the issuer uses http: acceptable on loopback for development, never in production',
      expect.stringMatching(/^memoryStorage\(\) in production/),
    ]);
    await oauth.close();
  });

  it('registration turned off needs no limiter', async () => {
    const logger = recordingLogger();
    const oauth = await createAuthorizationServer({
      issuer: 'https://auth.example.com',
      storage: memoryStorage(),
      registration: { enabled: false },
      logger,
    });
    expect(warnings(logger)).toEqual([]);
    await oauth.close();
  });
});
