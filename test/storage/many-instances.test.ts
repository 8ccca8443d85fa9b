/**
 * Several instances on one PostgreSQL database. Two compiled reference-server
 * processes share a fresh database and one issuer (as behind a load balancer), and each is reached
 * on its own port: a code issued by one is redeemed at the other; the same refresh token sent to
 * both at once rotates once and both get the same successor (the grace window), while a rotated
 * token in another client's hands trips reuse detection at either; a revocation at one is refused
 * by the other's guard on the very next request; both publish and sign with the same keys, held in
 * storage.
 *
 * Needs PostgreSQL (`DATABASE_URL`, default postgres://postgres@127.0.0.1:5432/test): skipped
 * without it, FAILS without it when `CI=true`. Creates `pc_e2e_<random>` and drops it afterwards.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  authorize,
  bearerChallenge,
  exchangeCode,
  jwsHeader,
  obtainTokens,
  refreshRequest,
  registerClient,
  revokeToken,
  type TokenSet,
} from '../helpers/school-flow.js';
import {
  addUserWithCli,
  assertCompiledServerFresh,
  type ServerProcess,
  startServerProcess,
  stopAllServerProcesses,
} from '../helpers/server-process.js';
import { requirePostgres } from '../helpers/services.js';

const postgres = await requirePostgres('two reference-server processes on one PostgreSQL database');
/** The issuer both instances share, as behind a load balancer; each is reached on its own port. */
const ISSUER = 'https://school.example';
/** An https issuer has no demo accounts: the operator creates this one with the command-line tool. */
const ADA = {
  email: 'ada@school.example',
  password: 'the analytical engine',
  name: 'Ada',
  role: 'owner',
} as const;
/** Databases this file created, dropped when it ends. */
const databases: string[] = [];

async function admin<T>(work: (client: pg.Client) => Promise<T>, url = postgres!.url): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty database; returns its URL. */
async function freshDatabase(): Promise<string> {
  const name = `pc_e2e_${randomBytes(8).toString('hex')}`;
  databases.push(name);
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(postgres!.url);
  url.pathname = `/${name}`;
  return url.href;
}

afterAll(async () => {
  await stopAllServerProcesses();
  for (const name of databases.splice(0)) {
    await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  }
});

/** The published keys of an instance. */
async function jwks(server: ServerProcess): Promise<{ kid: string; alg: string }[]> {
  const response = await fetch(`${server.base}/.well-known/jwks.json`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { keys: { kid: string; alg: string }[] }).keys;
}

describe.skipIf(postgres === undefined)('two instances on one PostgreSQL database', () => {
  let databaseUrl: string;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    assertCompiledServerFresh();
    databaseUrl = await freshDatabase();
    const env = { PORT: '0', ISSUER, ALLOWED_HOSTS: '127.0.0.1', DATABASE_URL: databaseUrl };
    // One after the other: the first creates the schema, the seed and the signing keys.
    a = await startServerProcess(env);
    b = await startServerProcess(env);
    expect((await addUserWithCli(env, ADA)).code).toBe(0);
  });

  it('both serve the one issuer, each on its own socket', () => {
    expect([a.issuer, b.issuer]).toEqual([ISSUER, ISSUER]);
    expect(a.base).not.toBe(b.base);
  });

  it('both publish the same keys: those in storage, one per algorithm', async () => {
    const [fromA, fromB] = [await jwks(a), await jwks(b)];
    expect(fromB).toEqual(fromA);
    const stored = await admin(
      (c) =>
        c.query<{ kid: string; alg: string }>('SELECT kid, alg FROM portcullis.signing_keys ORDER BY alg'),
      databaseUrl,
    );
    expect(stored.rows.map((r) => r.alg)).toEqual(['ES256', 'RS256']);
    expect(fromA.map((k) => k.kid).sort()).toEqual(stored.rows.map((r) => r.kid).sort());
  });

  it('a code issued by one instance is redeemed at the other; both sign with the same kid', async () => {
    const redirectUri = 'http://127.0.0.1:49152/callback';
    const clientId = await registerClient(a, redirectUri);
    const authorized = await authorize(a, { clientId, redirectUri, scope: 'openid email account:read' }, ADA);
    expect(authorized.callback.searchParams.get('iss')).toBe(ISSUER);
    const fromB = await exchangeCode(b, clientId, redirectUri, authorized);
    // And across again: A rotates the refresh token B issued; each accepts the access token of the other.
    const refreshed = await refreshRequest(a, clientId, fromB.refresh_token);
    expect(refreshed.status).toBe(200);
    const fromA = (await refreshed.json()) as TokenSet;
    expect(jwsHeader(fromA.access_token).kid).toBe(jwsHeader(fromB.access_token).kid);
    expect((await api(a, '/account', fromB.access_token)).status).toBe(200);
    expect((await api(b, '/account', fromA.access_token)).status).toBe(200);
    const userinfo = await fetch(`${b.base}/api/oauth/userinfo`, {
      headers: { authorization: `Bearer ${fromA.access_token}` },
    });
    expect(await userinfo.json()).toMatchObject({ email: ADA.email });
    // A second redemption of the code, at the first instance, is a replay.
    const replay = await fetch(`${a.base}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: authorized.callback.searchParams.get('code')!,
        redirect_uri: redirectUri,
        client_id: clientId,
        code_verifier: authorized.verifier,
      }),
    });
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('a revocation at one instance is refused by the other’s guard on the very next request', async () => {
    const { clientId, tokens } = await obtainTokens(a, { scope: 'account:read', user: ADA });
    expect((await api(b, '/account', tokens.access_token)).status).toBe(200);
    await revokeToken(a, clientId, tokens.access_token);
    const refused = await api(b, '/account', tokens.access_token);
    expect(refused.status).toBe(401);
    expect(bearerChallenge(refused).error).toBe('invalid_token');
  });

  it('the same refresh token at both at once: one rotation, both answered with the same successor (grace window, FLT-03)', async () => {
    const { clientId, tokens } = await obtainTokens(a, { scope: 'account:read', user: ADA });
    const answers = await Promise.all(
      [a, b].map(async (server) => {
        const response = await refreshRequest(server, clientId, tokens.refresh_token);
        return { status: response.status, body: (await response.json()) as TokenSet };
      }),
    );
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    expect(answers[1]!.body.refresh_token).toBe(answers[0]!.body.refresh_token);
    expect(answers[1]!.body.access_token).not.toBe(answers[0]!.body.access_token);
    // Both continue: the one successor rotates at either instance, both access tokens work.
    for (const [i, server] of [a, b].entries()) {
      expect((await api(server, '/account', answers[1 - i]!.body.access_token)).status).toBe(200);
    }
    expect((await refreshRequest(b, clientId, answers[0]!.body.refresh_token)).status).toBe(200);
  });

  it('a rotated refresh token presented at the other instance by another client is reuse: the grant is revoked everywhere', async () => {
    const { clientId, tokens } = await obtainTokens(a, { scope: 'account:read', user: ADA });
    const refreshed = await refreshRequest(a, clientId, tokens.refresh_token);
    const winner = (await refreshed.json()) as TokenSet;
    const thief = await registerClient(b, 'http://127.0.0.1:49153/callback');
    const stolen = await refreshRequest(b, thief, tokens.refresh_token);
    expect(stolen.status).toBe(400);
    expect(await stolen.json()).toMatchObject({ error: 'invalid_grant' });
    // The reuse revoked the grant: the winner's successor and access token are dead at both.
    for (const server of [a, b]) {
      const successor = await refreshRequest(server, clientId, winner.refresh_token);
      expect(await successor.json()).toMatchObject({ error: 'invalid_grant' });
      expect((await api(server, '/account', winner.access_token)).status).toBe(401);
    }
  });
});

describe.skipIf(postgres === undefined)(
  'two instances started at the same moment on an empty database',
  () => {
    it('both start (one migration, one seed) and publish and sign with the same keys', async () => {
      assertCompiledServerFresh();
      const env = { PORT: '0', ISSUER, ALLOWED_HOSTS: '127.0.0.1', DATABASE_URL: await freshDatabase() };
      const [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
      expect(await jwks(b)).toEqual(await jwks(a));
      expect((await addUserWithCli(env, ADA)).code).toBe(0);
      // Tokens from both are signed with the same key.
      const kids = await Promise.all(
        [a, b].map(
          async (server) =>
            jwsHeader((await obtainTokens(server, { scope: 'openid', user: ADA })).tokens.access_token).kid,
        ),
      );
      expect(kids[1]).toBe(kids[0]);
      expect((await jwks(a)).map((k) => k.kid)).toContain(kids[0]);
      for (const server of [a, b]) expect(server.stderr()).toBe('');
    });
  },
);
