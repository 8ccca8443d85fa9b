/**
 * FLT-01, what a client sees while the storage is unavailable, endpoint by endpoint: a storage that
 * throws {@link StorageUnavailableError} (or a host callback that throws a raw driver error of the
 * same kind) is answered `503` with `Retry-After: 2` and `{"error":"temporarily_unavailable"}`, or,
 * where the protocol answers by redirect, with `error=temporarily_unavailable` at the client's
 * redirect URI (RFC 6749 §4.1.2.1). Each failed request is logged once, at `warn`. Anything else
 * unexpected stays `500 server_error`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { LogFields, Logger } from '../../src/core/context.js';
import { errorResponse } from '../../src/core/http.js';
import { memoryStorage } from '../../src/storage/memory.js';
import type { Storage } from '../../src/storage/types.js';
import { classifyStorageFailure, StorageUnavailableError } from '../../src/storage/unavailable.js';
import { introspect, REVOKE, RS_CALLER, USERINFO } from '../helpers/endpoints.js';
import {
  CB,
  consentFields,
  form,
  Harness,
  json,
  pkce,
  type RegisteredClient,
  redirectParams,
} from '../helpers/harness.js';
import { TEST_KEYS } from '../helpers/keys.js';
import type { TestResponse } from '../helpers/transports.js';

/** A memory storage that throws `failure()` from every call while `down` is set. */
function switchableStorage(failure: () => Error) {
  const inner = memoryStorage();
  const state = { down: false };
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(object, name, receiver) {
        const value = Reflect.get(object, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (state.down) throw failure();
          return (value as (...a: unknown[]) => Promise<unknown>).apply(object, args);
        };
      },
    });
  const storage: Storage = {
    clients: wrap(inner.clients),
    interactions: wrap(inner.interactions),
    codes: wrap(inner.codes),
    grants: wrap(inner.grants),
    consents: wrap(inner.consents),
    keys: wrap(inner.keys),
    replay: wrap(inner.replay),
    deleteExpired: (now) => inner.deleteExpired(now),
    close: () => inner.close(),
  };
  return { storage, state };
}

function recordingLogger(): Logger & { lines: { level: string; message: string; fields?: LogFields }[] } {
  const lines: { level: string; message: string; fields?: LogFields }[] = [];
  const at =
    (level: string) =>
    (message: string, fields?: LogFields): void => {
      lines.push({ level, message, ...(fields === undefined ? {} : { fields }) });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function expectUnavailable(response: TestResponse): void {
  expect(response.status, response.body).toBe(503);
  expect(response.headers['retry-after']).toBe('2');
  expect(response.headers['cache-control']).toBe('no-store');
  expect(json(response).error).toBe('temporarily_unavailable');
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('FLT-01 while the storage is unavailable', () => {
  let h: Harness;
  afterEach(() => h.close());

  async function setup(failure: () => Error = () => new StorageUnavailableError('unreachable')) {
    const switchable = switchableStorage(failure);
    const logger = recordingLogger();
    h = await Harness.start({
      storage: switchable.storage,
      options: { logger, keys: TEST_KEYS, introspection: { callers: [RS_CALLER] } },
    });
    return { ...switchable, logger };
  }

  it('every JSON endpoint answers 503 + Retry-After + temporarily_unavailable, logged once each at warn', async () => {
    const { state, logger } = await setup();
    const { client, body } = await h.tokens({ grant_types: ['authorization_code', 'refresh_token'] });
    const access = String(body.access_token);
    const refresh = String(body.refresh_token);
    logger.lines.length = 0;
    state.down = true;

    const requests: [string, () => Promise<TestResponse>][] = [
      [
        'register',
        () =>
          h.send({
            method: 'POST',
            url: '/api/oauth/register',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ redirect_uris: [CB] }),
          }),
      ],
      ['refresh', () => h.refresh(client, refresh)],
      [
        'userinfo',
        () => h.send({ method: 'GET', url: USERINFO, headers: { authorization: `Bearer ${access}` } }),
      ],
      ['introspect', () => introspect(h, access)],
      [
        'revoke',
        () =>
          h.send({
            method: 'POST',
            url: REVOKE,
            headers: FORM,
            body: form({ token: refresh, client_id: client.client_id }),
          }),
      ],
    ];
    for (const [name, send] of requests) {
      const response = await send();
      expect(response.status, name).toBe(503);
      expectUnavailable(response);
    }
    expect(logger.lines.filter((line) => line.level === 'error')).toEqual([]);
    expect(logger.lines.filter((line) => line.level === 'warn')).toHaveLength(requests.length);

    // Back: the refresh token the outage did not burn works, and nothing was revoked.
    state.down = false;
    expect((await h.refresh(client, refresh)).status).toBe(200);
  });

  it('the authorization endpoint redirects temporarily_unavailable to the client (RFC 6749 §4.1.2.1); the consent decision page is a 503', async () => {
    const { state, logger } = await setup();
    const client: RegisteredClient = await h.register();
    const cookie = h.login('ada');
    const p = pkce();
    const page = await h.authorize(h.authorizeUrl(client, p), cookie);
    expect(page.status).toBe(200);
    state.down = true;
    // A new request: the pending authorization cannot be stored.
    const redirected = await h.authorize(h.authorizeUrl(client, pkce()), cookie);
    expect(redirected.status).toBe(303);
    expect(redirectParams(redirected).get('error')).toBe('temporarily_unavailable');
    // The decision on the page shown before: its pending authorization cannot be read.
    const decided = await h.decide(consentFields(page), 'allow', cookie);
    expect(decided.status).toBe(503);
    expect(decided.headers['retry-after']).toBe('2');
    expect(logger.lines.filter((line) => line.level === 'error')).toEqual([]);
    // Each failed request logged once, under the request id its response carries.
    const unavailable = logger.lines.filter((line) => line.message.includes('storage unavailable'));
    expect(unavailable.map((line) => line.fields?.requestId)).toEqual([
      redirected.headers['x-request-id'],
      decided.headers['x-request-id'],
    ]);
    // The page is not consumed: once the storage is back, the same decision completes.
    state.down = false;
    const again = await h.decide(consentFields(page), 'allow', cookie);
    expect(redirectParams(again).get('code')).not.toBeNull();
  });

  it('a raw driver error of the same kind (a host callback reading its own database) is a 503 too', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    h = await Harness.start({
      options: {
        claims: () => {
          throw refused;
        },
      },
    });
    const { body } = await h.tokens();
    const response = await h.send({
      method: 'GET',
      url: USERINFO,
      headers: { authorization: `Bearer ${String(body.access_token)}` },
    });
    expectUnavailable(response);
  });

  it('an unexpected failure that is not transient stays 500 server_error, logged at error', async () => {
    const { state, logger } = await setup(() => new TypeError('a bug'));
    const { client, body } = await h.tokens({ grant_types: ['authorization_code', 'refresh_token'] });
    state.down = true;
    const response = await h.refresh(client, String(body.refresh_token));
    expect(response.status).toBe(500);
    expect(response.headers['retry-after']).toBeUndefined();
    expect(json(response).error).toBe('server_error');
    expect(logger.lines.filter((line) => line.level === 'error')).toHaveLength(1);
  });
});

describe('classifying storage failures', () => {
  const cases: [string, Error, string | undefined][] = [
    [
      'pg_terminate_backend (57P01)',
      Object.assign(new Error('terminating connection'), { code: '57P01' }),
      'connection_lost',
    ],
    ['crash shutdown (57P02)', Object.assign(new Error('terminating'), { code: '57P02' }), 'connection_lost'],
    [
      'starting up (57P03)',
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
      'unreachable',
    ],
    [
      'connection failure (08006)',
      Object.assign(new Error('connection failure'), { code: '08006' }),
      'connection_lost',
    ],
    [
      'cannot connect (08001)',
      Object.assign(new Error('could not connect'), { code: '08001' }),
      'unreachable',
    ],
    [
      'too many connections (53300)',
      Object.assign(new Error('too many clients'), { code: '53300' }),
      'overloaded',
    ],
    [
      'statement timeout (57014)',
      Object.assign(new Error('canceling statement'), { code: '57014' }),
      'timeout',
    ],
    [
      'serialization failure (40001)',
      Object.assign(new Error('could not serialize'), { code: '40001' }),
      'conflict',
    ],
    ['deadlock (40P01)', Object.assign(new Error('deadlock detected'), { code: '40P01' }), 'conflict'],
    [
      'connection refused',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      'unreachable',
    ],
    [
      'connection reset',
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      'connection_lost',
    ],
    ['pg: terminated', new Error('Connection terminated unexpectedly'), 'connection_lost'],
    ['pg-pool: connect timeout', new Error('timeout exceeded when trying to connect'), 'unreachable'],
    ['pg: query timeout', new Error('Query read timeout'), 'timeout'],
    [
      'wrapped in cause',
      new Error('outer', { cause: Object.assign(new Error('x'), { code: '57P01' }) }),
      'connection_lost',
    ],
    [
      'AggregateError (IPv4 and IPv6 refused)',
      new AggregateError([Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })]),
      'unreachable',
    ],
    ['unique violation (a bug)', Object.assign(new Error('duplicate key'), { code: '23505' }), undefined],
    ['syntax error (a bug)', Object.assign(new Error('syntax error'), { code: '42601' }), undefined],
    [
      'wrong password (configuration)',
      Object.assign(new Error('password authentication failed'), { code: '28P01' }),
      undefined,
    ],
    ['a TypeError', new TypeError('undefined is not a function'), undefined],
  ];
  for (const [name, error, reason] of cases) {
    it(`${name} → ${reason ?? 'not transient (500)'}`, () => {
      expect(classifyStorageFailure(error)?.reason).toBe(reason);
      expect(errorResponse(error).status).toBe(reason === undefined ? 500 : 503);
    });
  }

  it('recognises a StorageUnavailableError from another copy of the library by its name', () => {
    const foreign = Object.assign(new Error('down'), {
      name: 'StorageUnavailableError',
      reason: 'overloaded',
      mayHaveApplied: false,
    });
    expect(classifyStorageFailure(foreign)?.reason).toBe('overloaded');
    expect(errorResponse(foreign).headers['retry-after']).toBe('2');
  });

  it('a connection lost mid-statement may have applied; a refusal or a rollback did not', () => {
    expect(classifyStorageFailure(Object.assign(new Error('x'), { code: '57P01' }))?.mayHaveApplied).toBe(
      true,
    );
    expect(
      classifyStorageFailure(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))?.mayHaveApplied,
    ).toBe(false);
    expect(classifyStorageFailure(Object.assign(new Error('x'), { code: '40001' }))?.mayHaveApplied).toBe(
      false,
    );
  });
});
