/**
 * External services the tests need, and the one rule for when they are missing: under `CI=true` a
 * missing service FAILS the run (a CI that silently skips proves nothing); on a developer machine
 * the tests that need it are skipped, with a printed line saying what and why.
 */
import { connect } from 'node:net';
import pg from 'pg';

/** A reachable PostgreSQL server. */
export interface PostgresService {
  /** The connection string: `DATABASE_URL`, else the local default. */
  readonly url: string;
  /** Drops a schema and everything in it. */
  dropSchema(name: string): Promise<void>;
}

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';

let probe: Promise<string | undefined> | undefined;

/**
 * A new random schema name. Other test runs may share the database: every run works in a schema of
 * its own and drops it afterwards ({@link PostgresService.dropSchema}).
 */
export function randomSchemaName(): string {
  return `pc_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`;
}

/** The URL without its password, for messages. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable DATABASE_URL)';
  }
}

/** Connects once; resolves to the failure reason, or undefined when the server answers. */
async function reach(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Resolves the PostgreSQL server for tests that need one, applying the availability rule.
 *
 * @param what - what will be skipped without it, for the printed message
 * @returns the service, or undefined (tests skip) when unreachable outside CI
 * @throws Error when unreachable and `CI=true`
 * @example
 * ```ts
 * const postgres = await requirePostgres('PostgreSQL storage conformance');
 * // vitest still runs the body of a skipped suite to collect it: connect in hooks and tests only.
 * describe.skipIf(postgres === undefined)('on PostgreSQL', () => { ... });
 * ```
 */
export async function requirePostgres(what: string): Promise<PostgresService | undefined> {
  const url = process.env.DATABASE_URL ?? DEFAULT_URL;
  probe ??= reach(url);
  const failure = await probe;
  if (failure !== undefined) {
    const message = `PostgreSQL unreachable at ${redact(url)} (${failure})`;
    if (process.env.CI === 'true') throw new Error(`${message}: required when CI=true (${what})`);
    console.warn(`SKIPPED ${what}: ${message}. Start PostgreSQL or set DATABASE_URL to run it.`);
    return undefined;
  }
  return {
    url,
    async dropSchema(name) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

export type ServiceProbe = { readonly available: true; readonly url: string } | { readonly available: false };

function ping(
  host: string,
  port: number,
  hello: string,
  expected: string,
  timeoutMs = 1000,
): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write(hello));
    socket.once('data', (data) => done(data.toString('latin1').startsWith(expected)));
  });
}

function unavailable(name: string, url: string): ServiceProbe {
  const message = `${name} is not reachable at ${url}`;
  if (process.env.CI === 'true') throw new Error(`${message}; CI requires it`);
  console.warn(`skipping ${name} tests: ${message} (set CI=true to make this a failure)`);
  return { available: false };
}

/** Redis at `REDIS_URL` (default `redis://127.0.0.1:6379`), answered by PING. */
export async function requireRedis(): Promise<ServiceProbe> {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const { hostname, port } = new URL(url);
  const ok = await ping(hostname, Number(port || 6379), 'PING\r\n', '+PONG');
  return ok ? { available: true, url } : unavailable('Redis', url);
}
