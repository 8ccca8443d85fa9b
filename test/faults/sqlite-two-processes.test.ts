/**
 * FLT-04, several processes on one data directory: two compiled reference servers on one `DATA_DIR`
 * (one SQLite file, SQLite's own locks and busy timeout), one issuer, each reached on its own port,
 * work side by side: codes issued by one are redeemed at the other, races on one code or one refresh
 * token across both have exactly one winner (the losers see a replay, or a retry within the grace
 * window), a revocation at one is refused by the other at once, and under a mixed load on both no
 * token either acknowledged is refused by the other ("valid token answered 401") and nothing fails.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteDatabase } from '../../src/storage/sqlite.js';
import { tokenKey } from '../../src/tokens/token-key.js';
import { api, jwsHeader, revokeToken } from '../helpers/school-flow.js';
import {
  addUserWithCli,
  assertCompiledServerFresh,
  type ServerProcess,
  startServerProcess,
  stopAllServerProcesses,
} from '../helpers/server-process.js';
import {
  type AckedCode,
  authorizeCode,
  type Chain,
  exchange,
  newChain,
  refresh,
  register,
  signIn,
} from './load.js';

const ISSUER = 'https://school.example';
/** An https issuer has no demo accounts: the operator creates this one with the command-line tool. */
const ADA = {
  email: 'ada@school.example',
  password: 'the analytical engine',
  name: 'Ada',
  role: 'owner',
} as const;
const dataDirs: string[] = [];
/**
 * What a server printed on stderr, but the one warning Node.js 22 (and 24 before 24.15) prints when
 * `node:sqlite` first loads, and the start-up warning that `RATE_LIMIT=off` leaves registration
 * open without a limiter.
 */
const unexpectedStderr = (server: ServerProcess) =>
  server
    .stderr()
    .split('\n')
    .filter(
      (line) =>
        line !== '' &&
        !/ExperimentalWarning: SQLite|--trace-warnings|dynamic registration is open to anyone/.test(line),
    );
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-two-processes-'));
  dataDirs.push(dir);
  return dir;
};

afterAll(async () => {
  await stopAllServerProcesses();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

async function jwks(server: ServerProcess): Promise<string[]> {
  const response = await fetch(`${server.base}/.well-known/jwks.json`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid).sort();
}

describe('two server processes on one SQLite data directory', () => {
  let dataDir: string;
  let a: ServerProcess;
  let b: ServerProcess;
  let cookie: string;

  beforeAll(async () => {
    assertCompiledServerFresh();
    dataDir = freshDir();
    const env = { PORT: '0', ISSUER, ALLOWED_HOSTS: '127.0.0.1', DATA_DIR: dataDir, RATE_LIMIT: 'off' };
    a = await startServerProcess(env);
    b = await startServerProcess(env);
    // Beside the two running servers: a third process on the file.
    expect((await addUserWithCli(env, ADA)).code).toBe(0);
    cookie = await signIn(a, ADA.email, ADA.password);
  });

  /** A code issued by `issuer`, not exchanged yet. */
  async function codeAt(issuer: ServerProcess): Promise<AckedCode> {
    return authorizeCode(issuer, await register(issuer), cookie);
  }

  it('both serve the one issuer and publish the same signing keys, those in the shared file', async () => {
    expect([a.issuer, b.issuer]).toEqual([ISSUER, ISSUER]);
    expect(await jwks(b)).toEqual(await jwks(a));
  });

  it('a code issued by one is redeemed at the other; each accepts the tokens of the other', async () => {
    const code = await codeAt(a);
    const fromB = await exchange(b, code);
    expect(fromB.status).toBe(200);
    const fromA = await refresh(a, code.clientId, fromB.body.refresh_token!);
    expect(fromA.status).toBe(200);
    expect(jwsHeader(fromA.body.access_token!).kid).toBe(jwsHeader(fromB.body.access_token!).kid);
    expect((await api(a, '/account', fromB.body.access_token)).status).toBe(200);
    expect((await api(b, '/account', fromA.body.access_token)).status).toBe(200);
  });

  it('TOK-13 20 parallel exchanges of one code across both: exactly one 200, the others invalid_grant, and the replays revoke what the winner got, at both', async () => {
    const code = await codeAt(a);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => exchange(i % 2 === 0 ? a : b, code)),
    );
    const winners = answers.filter((answer) => answer.status === 200);
    expect(winners).toHaveLength(1);
    expect(answers.filter((answer) => answer.body.error === 'invalid_grant')).toHaveLength(19);
    for (const server of [a, b]) {
      expect((await api(server, '/account', winners[0]!.body.access_token)).status).toBe(401);
      expect((await refresh(server, code.clientId, winners[0]!.body.refresh_token!)).body.error).toBe(
        'invalid_grant',
      );
    }
  });

  it('FLT-03 20 parallel refreshes of one token across both: one rotation, every answer the same successor (the grace window)', async () => {
    const chain = await newChain(a, cookie);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => refresh(i % 2 === 0 ? a : b, chain.clientId, chain.refreshToken)),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 20 }, () => 200));
    const successors = new Set(answers.map((answer) => answer.body.refresh_token));
    expect(successors.size).toBe(1);
    // In the file: the presented token rotated once, to that successor, which is active.
    const presentedKey = await tokenKey(chain.refreshToken);
    const successorKey = await tokenKey([...successors][0]!);
    const db = await openSqliteDatabase({ dataDir });
    try {
      const row = db.get<{ successor_hash: string }>(
        'SELECT successor_hash FROM portcullis_refresh_tokens WHERE token_hash = ?',
        presentedKey,
      );
      expect(row?.successor_hash).toBe(successorKey);
    } finally {
      db.close();
    }
    expect((await refresh(b, chain.clientId, [...successors][0]!)).status).toBe(200);
  });

  it('a revocation at one is refused by the other on the very next request', async () => {
    const chain = await newChain(a, cookie);
    expect((await api(b, '/account', chain.accessToken)).status).toBe(200);
    await revokeToken(a, chain.clientId, chain.accessToken);
    expect((await api(b, '/account', chain.accessToken)).status).toBe(401);
  });

  it('under a mixed load on both, every token one acknowledged is accepted by the other at once, and nothing fails', {
    timeout: 120_000,
  }, async () => {
    const failures: string[] = [];
    let operations = 0;
    const other = (server: ServerProcess) => (server === a ? b : a);
    const worker = async (w: number) => {
      const home = w % 2 === 0 ? a : b;
      const chains: Chain[] = [];
      for (let step = 0; step < 30; step++) {
        if (step % 5 === 0) {
          // A flow at one, the code exchanged at the other.
          const code = await codeAt(home);
          const answer = await exchange(other(home), code);
          if (answer.status !== 200) failures.push(`exchange ${answer.status} ${answer.body.error}`);
          else
            chains.push({
              clientId: code.clientId,
              refreshToken: answer.body.refresh_token!,
              accessToken: answer.body.access_token!,
              inFlight: false,
            });
        } else {
          // A refresh at either, its access token used at once at the other.
          const chain = chains[step % chains.length]!;
          const at = step % 2 === 0 ? home : other(home);
          const answer = await refresh(at, chain.clientId, chain.refreshToken);
          if (answer.status !== 200) {
            failures.push(`refresh ${answer.status} ${answer.body.error}`);
            continue;
          }
          chain.refreshToken = answer.body.refresh_token!;
          chain.accessToken = answer.body.access_token!;
          const used = await api(other(at), '/account', chain.accessToken);
          if (used.status !== 200) failures.push(`a valid access token answered ${used.status}`);
        }
        operations++;
      }
    };
    await Promise.all(Array.from({ length: 6 }, (_, w) => worker(w)));
    expect(failures).toEqual([]);
    expect(operations).toBe(6 * 30);
    for (const server of [a, b]) expect(unexpectedStderr(server)).toEqual([]);
  });
});

describe('two server processes started at the same moment on an empty data directory', () => {
  it('both start (one migration, one seed) and publish and sign with the same keys', async () => {
    assertCompiledServerFresh();
    const env = { PORT: '0', ISSUER, ALLOWED_HOSTS: '127.0.0.1', DATA_DIR: freshDir(), RATE_LIMIT: 'off' };
    const [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    expect(await jwks(b)).toEqual(await jwks(a));
    expect((await addUserWithCli(env, ADA)).code).toBe(0);
    const cookie = await signIn(b, ADA.email, ADA.password);
    const chains = await Promise.all([a, b].map((server) => newChain(server, cookie)));
    expect(jwsHeader(chains[1]!.accessToken).kid).toBe(jwsHeader(chains[0]!.accessToken).kid);
    expect((await api(a, '/account', chains[1]!.accessToken)).status).toBe(200);
    expect((await api(b, '/account', chains[0]!.accessToken)).status).toBe(200);
    // Seeded once: one school record, and the one account the operator created.
    const db = await openSqliteDatabase({ path: join(env.DATA_DIR, 'portcullis.sqlite') });
    try {
      expect(db.get<{ n: number }>("SELECT count(*) AS n FROM cs_records WHERE kind = 'school'")?.n).toBe(1);
      expect(db.get<{ n: number }>('SELECT count(*) AS n FROM cs_users')?.n).toBe(1);
    } finally {
      db.close();
    }
    for (const server of [a, b]) expect(unexpectedStderr(server)).toEqual([]);
  });
});
