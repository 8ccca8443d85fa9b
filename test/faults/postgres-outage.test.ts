/**
 * FLT-01 on one server: PostgreSQL stopped (its port closed), PostgreSQL not answering (a network
 * partition), and its connections terminated by the database. The server stays up, answers `503
 * temporarily_unavailable` with `Retry-After` within the configured bounds, never a 500 and never
 * a hang, and serves again by itself once the database is back, with the tokens it had issued.
 *
 * The database is reached through a TCP proxy the test switches (./tcp-proxy.ts). Needs
 * PostgreSQL: skipped without it, FAILS without it when `CI=true`.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LogFields, Logger } from '../../src/core/context.js';
import { postgresStorage } from '../../src/storage/postgres.js';
import { USERINFO } from '../helpers/endpoints.js';
import { Harness, ISSUER, json, type RegisteredClient } from '../helpers/harness.js';
import { randomSchemaName, requirePostgres } from '../helpers/services.js';
import type { TestResponse } from '../helpers/transports.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

const postgres = await requirePostgres('PostgreSQL outage tests (FLT-01)');

/** The bounds the storage is configured with here: short, so that the test is quick. */
const CONNECT_MS = 1000;
const QUERY_MS = 1500;
/** The longest a call may take: a connection, a statement, and the timer's slack. */
const BOUND_MS = CONNECT_MS + QUERY_MS + 1000;

/** A logger that keeps what it is given. */
function recordingLogger(): Logger & { lines: { level: string; message: string; fields?: LogFields }[] } {
  const lines: { level: string; message: string; fields?: LogFields }[] = [];
  const at =
    (level: string) =>
    (message: string, fields?: LogFields): void => {
      lines.push({ level, message, ...(fields === undefined ? {} : { fields }) });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** Asserts the answer of an unavailable storage: 503, `Retry-After`, the OAuth JSON shape. */
function expectUnavailable(response: TestResponse): void {
  expect(response.status, response.body).toBe(503);
  expect(response.headers['retry-after']).toBe('2');
  expect(json(response)).toEqual({
    error: 'temporarily_unavailable',
    error_description: 'the service is temporarily unavailable; retry shortly',
  });
}

async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
}

describe.skipIf(postgres === undefined)('FLT-01 PostgreSQL outages on one server', () => {
  const schemas: string[] = [];
  let proxy: TcpProxy;
  let h: Harness;
  let logger: ReturnType<typeof recordingLogger>;
  let client: RegisteredClient;
  let tokens: { access_token: string; refresh_token: string };
  let application: string;

  afterAll(async () => {
    for (const schema of schemas) await postgres?.dropSchema(schema);
  });

  beforeEach(async () => {
    proxy = await startTcpProxy();
    const schema = randomSchemaName();
    schemas.push(schema);
    application = `pc_fault_${schema}`;
    const storage = postgresStorage(
      // Named, so that the test terminates its own connections and no other test's.
      { connectionString: proxy.urlFor(postgres!.url), poolConfig: { application_name: application } },
      { schema, connectionTimeoutMillis: CONNECT_MS, queryTimeoutMillis: QUERY_MS },
    );
    logger = recordingLogger();
    h = await Harness.start({ storage, options: { logger } });
    const issued = await h.tokens({ grant_types: ['authorization_code', 'refresh_token'] });
    client = issued.client;
    tokens = issued.body as typeof tokens;
  });

  afterEach(async () => {
    await h.close();
    await proxy.close();
  });

  const refresh = (token = tokens.refresh_token) => h.refresh(client, token);
  const userinfo = () =>
    h.send({ method: 'GET', url: USERINFO, headers: { authorization: `Bearer ${tokens.access_token}` } });

  it('FLT-01 PostgreSQL stopped (port closed): 503 + Retry-After + temporarily_unavailable at once, the guard too; the same tokens work when it is back', async () => {
    await proxy.setMode('refuse');
    // The pool's idle connections were cut under it: their `error` events must not end the process.
    const refreshed = await timed(() => refresh());
    expectUnavailable(refreshed.result);
    expect(refreshed.ms).toBeLessThan(BOUND_MS);
    expectUnavailable((await timed(userinfo)).result);
    const guarded = await h.server.guard({ resource: ISSUER }).check({
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(guarded.ok).toBe(false);
    if (!guarded.ok) {
      expect(guarded.response.status).toBe(503);
      expect(guarded.response.headers['retry-after']).toBe('2');
      expect(guarded.error.code).toBe('temporarily_unavailable');
    }
    // Logged at warn, once per request, naming the failure and no statement's parameters.
    expect(logger.lines.filter((line) => line.level === 'error')).toEqual([]);
    const warnings = logger.lines.filter((line) => line.message.includes('storage unavailable'));
    expect(warnings).toHaveLength(2);
    for (const line of warnings) {
      expect(line.message).toBe('request failed: storage unavailable');
      expect(line.fields?.reason).toBe('unreachable');
      expect(JSON.stringify(line.fields)).not.toContain(tokens.refresh_token);
    }

    // Back: the next request is served, with the refresh token the outage did not burn.
    await proxy.setMode('forward');
    const after = await refresh();
    expect(after.status, after.body).toBe(200);
    expect((await userinfo()).status).toBe(200);
  });

  it('FLT-01 PostgreSQL not answering (a partition): 503 within the connect and statement bounds, never a hang; recovery by itself', async () => {
    await proxy.setMode('blackhole');
    // An open connection frozen mid-statement, and new connections never served: both bounded.
    const attempts = await Promise.all([timed(() => refresh()), timed(userinfo), timed(userinfo)]);
    for (const { result, ms } of attempts) {
      expectUnavailable(result);
      expect(ms).toBeLessThan(BOUND_MS);
    }
    await proxy.setMode('forward');
    const after = await refresh();
    expect(after.status, after.body).toBe(200);
    expect((await userinfo()).status).toBe(200);
  });

  it('FLT-01 connections terminated by PostgreSQL (pg_terminate_backend) are replaced: requests after it succeed, none answers 500', async () => {
    // Two requests at once, so the pool holds two connections; then the database ends both.
    expect((await Promise.all([userinfo(), userinfo()])).map((r) => r.status)).toEqual([200, 200]);
    const admin = new pg.Client({ connectionString: postgres!.url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ terminated: boolean }>(
        `SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = $1`,
        [application],
      );
      expect(rows.length).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    const statuses = (await Promise.all([refresh(), userinfo(), userinfo()])).map((r) => r.status);
    expect(statuses).toEqual([200, 200, 200]);
    expect(logger.lines.filter((line) => line.level === 'error')).toEqual([]);
  });
});
