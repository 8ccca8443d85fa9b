/**
 * FLT-04, durability of the embedded default: the compiled reference server on SQLite (no
 * `STORAGE`, no `DATABASE_URL`: what `npm start` runs) is killed with SIGKILL in the middle of a
 * load of registrations, code flows and refreshes, at a random point (after a random number of
 * acknowledged operations, with other requests in flight). Then, before anything opens the file
 * again, the file is intact and nothing is half-written; and after a restart on the same directory
 * every acknowledged client, code, access token and refresh token is still there and works: a
 * refresh token whose refresh was in flight at the kill was either not rotated or is answered as a
 * retry within the grace window (the same successor), never refused. Several runs, each bounded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteDatabase } from '../../src/storage/sqlite.js';
import { tokenKey } from '../../src/tokens/token-key.js';
import { ADA, api } from '../helpers/school-flow.js';
import {
  assertCompiledServerFresh,
  freePort,
  startServerProcess,
  stopAllServerProcesses,
} from '../helpers/server-process.js';
import { type Chain, exchange, newChain, newRecord, refresh, runLoad, signIn } from './load.js';

const RUNS = 3;
const WORKERS = 6;
const dataDirs: string[] = [];

beforeAll(() => assertCompiledServerFresh());
afterAll(async () => {
  await stopAllServerProcesses();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** What SQLite says about the file after the crash, before any server opens it again. */
async function inspect(dataDir: string, clients: readonly string[]) {
  const db = await openSqliteDatabase({ dataDir });
  try {
    const one = (sql: string) => Object.values(db.get<Record<string, unknown>>(sql) ?? {})[0];
    return {
      integrity: one('PRAGMA integrity_check'),
      foreignKeyViolations: db.all('PRAGMA foreign_key_check').length,
      // A rotation is whole: every rotated refresh token's successor exists, with its access token.
      rotatedWithoutSuccessor:
        one(`SELECT count(*) FROM portcullis_refresh_tokens t WHERE t.rotated_at IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM portcullis_refresh_tokens s WHERE s.token_hash = t.successor_hash)`),
      // A redemption is whole: every consumed code has its grant, and the grant its tokens.
      consumedWithoutGrant:
        one(`SELECT count(*) FROM portcullis_authorization_codes c WHERE c.consumed_at IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM portcullis_grants g WHERE g.grant_id = c.grant_id)`),
      grantsWithoutTokens: one(`SELECT count(*) FROM portcullis_grants g
        WHERE NOT EXISTS (SELECT 1 FROM portcullis_access_tokens t WHERE t.grant_id = g.grant_id)
           OR NOT EXISTS (SELECT 1 FROM portcullis_refresh_tokens t WHERE t.grant_id = g.grant_id)`),
      clientsFound: clients.filter(
        (id) => db.get('SELECT 1 AS found FROM portcullis_clients WHERE client_id = ?', id) !== undefined,
      ).length,
    };
  } finally {
    db.close();
  }
}

/** What one run saw: the load, the file after the crash, and the answers after the restart. */
interface RunResult {
  killAfter: number;
  record: ReturnType<typeof newRecord>;
  file: Awaited<ReturnType<typeof inspect>> | undefined;
  /** Refresh tokens whose refresh was in flight at the kill and had been committed (rotated). */
  rotatedInFlight: number;
  chains: { inFlight: boolean; access: number; refresh: number }[];
  /** Refreshes whose answer the client dropped just before the kill, retried after the restart. */
  lostAnswers: { sameSuccessor: boolean; status: number }[];
  codes: number[];
  codesInFlight: { status: number; error: string | undefined }[];
}

/** Starts the server on a fresh directory, loads it, kills it with SIGKILL, restarts it, checks. */
async function killAndRestart(variables: Record<string, string>): Promise<RunResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'portcullis-kill9-'));
  dataDirs.push(dataDir);
  // The same port for both starts: the issuer, and so every token's iss and aud, derive from it.
  const env = { PORT: String(await freePort()), DATA_DIR: dataDir, RATE_LIMIT: 'off', ...variables };
  const server = await startServerProcess(env);
  const cookie = await signIn(server, ADA.email, ADA.password);
  const record = newRecord();
  // Two chains of its own for the lost answers: refreshed just before the kill, answer dropped.
  const reserved = await Promise.all([0, 1].map(() => newChain(server, cookie)));
  const lost: { chain: Chain; successor: string }[] = [];
  // The kill comes after a random number of acknowledged operations, then a random few
  // milliseconds more (the point is a random moment: while the server is between a commit and
  // its answer, or inside a transaction), while the other workers have requests in flight.
  const killAfter = 40 + Math.floor(Math.random() * 160);
  let killed: Promise<unknown> | undefined;
  const until = {
    stopped: false,
    onOperation: (count: number) => {
      if (count < killAfter || killed !== undefined) return;
      killed = (async () => {
        for (const chain of reserved) {
          const answer = await refresh(server, chain.clientId, chain.refreshToken);
          if (answer.status === 200) lost.push({ chain, successor: answer.body.refresh_token! });
        }
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 12));
        until.stopped = true;
        return server.stop('SIGKILL');
      })();
    },
  };
  await runLoad(server, cookie, WORKERS, record, until);
  expect(record.errors).toEqual([]);
  expect(await killed).toMatchObject({ signal: 'SIGKILL' });

  const persistent = variables['STORAGE'] !== 'memory';
  const file = persistent ? await inspect(dataDir, record.clients) : undefined;
  let rotatedInFlight = 0;
  if (persistent) {
    const db = await openSqliteDatabase({ dataDir });
    for (const chain of record.chains.filter((c) => c.inFlight)) {
      const row = db.get<{ rotated_at: number | null }>(
        'SELECT rotated_at FROM portcullis_refresh_tokens WHERE token_hash = ?',
        await tokenKey(chain.refreshToken),
      );
      if (row?.rotated_at != null) rotatedInFlight++;
    }
    db.close();
  }

  const again = await startServerProcess(env);
  // The client never saw these answers: it retries with the token it has, within the grace window.
  const lostAnswers = await Promise.all(
    lost.map(async ({ chain, successor }) => {
      const answer = await refresh(again, chain.clientId, chain.refreshToken);
      return { status: answer.status, sameSuccessor: answer.body.refresh_token === successor };
    }),
  );
  // Every acknowledged access token is accepted; every acknowledged refresh token refreshes:
  // rotated now, or (its refresh was in flight and committed) answered as a retry.
  const chains = await Promise.all(
    record.chains.map(async (chain) => ({
      inFlight: chain.inFlight,
      access: (await api(again, '/account', chain.accessToken)).status,
      refresh: (await refresh(again, chain.clientId, chain.refreshToken)).status,
    })),
  );
  // Every acknowledged code, never exchanged, is exchanged now.
  const codes = await Promise.all(record.codes.map(async (code) => (await exchange(again, code)).status));
  // A code whose exchange was in flight was redeemed (a retry is a replay) or not (it works).
  const codesInFlight = [];
  for (const code of record.codesInFlight) {
    const answer = await exchange(again, code);
    codesInFlight.push({ status: answer.status, error: answer.body.error });
  }
  await again.stop('SIGTERM');
  return { killAfter, record, file, rotatedInFlight, chains, lostAnswers, codes, codesInFlight };
}

describe('FLT-04 kill -9 of the server on the embedded default (SQLite)', () => {
  it(`every answered registration, code and token survives SIGKILL at a random point; nothing is half-written (${RUNS} runs)`, {
    timeout: 240_000,
  }, async () => {
    for (let run = 0; run < RUNS; run++) {
      const result = await killAndRestart({});
      expect(result.file).toEqual({
        integrity: 'ok',
        foreignKeyViolations: 0,
        rotatedWithoutSuccessor: 0,
        consumedWithoutGrant: 0,
        grantsWithoutTokens: 0,
        clientsFound: result.record.clients.length,
      });
      expect(result.chains.filter((c) => c.access !== 200 || c.refresh !== 200)).toEqual([]);
      // A refresh committed before the kill whose answer was lost: the retry gets that same successor.
      expect(result.lostAnswers).toEqual([
        { status: 200, sameSuccessor: true },
        { status: 200, sameSuccessor: true },
      ]);
      expect(result.codes.filter((status) => status !== 200)).toEqual([]);
      for (const answer of result.codesInFlight) {
        expect(answer.status === 200 || answer.error === 'invalid_grant').toBe(true);
      }
      const { record } = result;
      console.log(
        `kill -9 run ${run + 1}: killed after ${result.killAfter} acknowledged operations; ` +
          `${record.clients.length} clients, ${record.chains.length} refresh chains ` +
          `(${result.chains.filter((c) => c.inFlight).length} with a refresh in flight, ${result.rotatedInFlight} of them committed), ` +
          `${record.codes.length} unexchanged codes, ${record.codesInFlight.length} exchanges in flight`,
      );
    }
  });

  it('the same check fails on memory storage, which promises nothing across a crash (the control)', {
    timeout: 120_000,
  }, async () => {
    const result = await killAndRestart({ STORAGE: 'memory' });
    expect(result.chains.length).toBeGreaterThan(0);
    // Nothing survived: every acknowledged token is refused after the restart.
    expect(result.chains.filter((c) => c.access === 200 || c.refresh === 200)).toEqual([]);
  });
});
