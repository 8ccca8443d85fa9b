/**
 * The reference server's `rotate-keys` command (ABU-10 as an operator runs it; the upgrading guide
 * tells reference-server operators whose files other accounts could read to treat the signing keys
 * as leaked): new keys are published at once and sign only after the JWKS cache lifetime, or at
 * once with `--immediate`; what the retired keys signed stays valid. Each check reads the server
 * started after the command, which loads the keys as every server does on its next re-read.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Chain, newChain, refresh, signIn } from '../faults/load.js';
import { ADA, jwsHeader, type Site } from '../helpers/school-flow.js';
import {
  assertCompiledServerFresh,
  freePort,
  runCli,
  type ServerProcess,
  startServerProcess,
  stopAllServerProcesses,
  unexpectedStderr,
} from '../helpers/server-process.js';

const root = mkdtempSync(join(tmpdir(), 'portcullis-cli-rotate-keys-'));
const dataDir = join(root, 'data');

afterAll(async () => {
  await stopAllServerProcesses();
  rmSync(root, { recursive: true, force: true });
});

/** The kids the server publishes. */
async function publishedKids(site: Site): Promise<string[]> {
  const response = await fetch(`${site.base}/.well-known/jwks.json`);
  const { keys } = (await response.json()) as { keys: { kid: string }[] };
  return keys.map((key) => key.kid);
}

/** Runs `rotate-keys [flags]`; the new ES256 and RS256 kids and when they sign, from its output. */
async function rotateKeys(...flags: string[]) {
  const run = await runCli({ DATA_DIR: dataDir }, ['rotate-keys', ...flags]);
  expect(unexpectedStderr(run.stderr)).toEqual([]);
  expect(run.code).toBe(0);
  const match =
    /^new signing keys (\S+) \(ES256\), (\S+) \(RS256\) in SQLite .*: published now, signing from (\S+?),?( |\n)/.exec(
      run.stdout,
    );
  expect(match, run.stdout).not.toBeNull();
  return { es256: match![1]!, rs256: match![2]!, signsFrom: Date.parse(match![3]!) };
}

describe('cli.js rotate-keys', () => {
  let env: Record<string, string>;
  let server: ServerProcess;
  let chain: Chain;
  let firstKid: string;

  beforeAll(async () => {
    assertCompiledServerFresh();
    // The same port for every start: the issuer, and so every token's iss and aud, derive from it.
    env = { PORT: String(await freePort()), DATA_DIR: dataDir, RATE_LIMIT: 'off' };
    server = await startServerProcess(env);
    chain = await newChain(server, await signIn(server, ADA.email, ADA.password));
    firstKid = jwsHeader(chain.accessToken).kid as string;
  });

  /** Restarts the server on the same directory and refreshes the chain: the new access token. */
  async function restartAndRefresh(): Promise<string> {
    await server.stop();
    server = await startServerProcess(env);
    const answer = await refresh(server, chain.clientId, chain.refreshToken);
    expect(answer.status).toBe(200);
    chain = { ...chain, refreshToken: answer.body.refresh_token!, accessToken: answer.body.access_token! };
    return chain.accessToken;
  }

  it('publishes new keys at once and signs with them only after the JWKS cache lifetime', async () => {
    const started = Date.now();
    const rotated = await rotateKeys();
    // 300 s of JWKS cache plus the 60 s in which every server re-reads its keys.
    expect(rotated.signsFrom).toBeGreaterThanOrEqual(Math.floor(started / 1000) * 1000 + 360_000);
    expect(rotated.signsFrom).toBeLessThanOrEqual(Date.now() + 360_000);
    const token = await restartAndRefresh();
    expect(await publishedKids(server)).toEqual(
      expect.arrayContaining([firstKid, rotated.es256, rotated.rs256]),
    );
    expect(jwsHeader(token).kid).toBe(firstKid);
  });

  it('--immediate signs with the new keys at once; what the retired keys signed stays valid', async () => {
    const signedBefore = chain.accessToken;
    const rotated = await rotateKeys('--immediate');
    expect(rotated.signsFrom).toBeLessThanOrEqual(Date.now());
    const token = await restartAndRefresh();
    expect(jwsHeader(token).kid).toBe(rotated.es256);
    expect(jwsHeader(signedBefore).kid).toBe(firstKid);
    for (const accessToken of [signedBefore, token]) {
      const response = await fetch(`${server.base}/api/oauth/userinfo`, {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      expect(response.status).toBe(200);
    }
    expect(await publishedKids(server)).toEqual(
      expect.arrayContaining([firstKid, rotated.es256, rotated.rs256]),
    );
  });

  it('refuses where there are no keys to rotate, and unknown options', async () => {
    const missing = await runCli({ DATA_DIR: join(root, 'none') }, ['rotate-keys']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`there is no database at ${join(root, 'none', 'portcullis.sqlite')}`);
    const memory = await runCli({ STORAGE: 'memory' }, ['rotate-keys']);
    expect(memory.code).toBe(1);
    expect(memory.stderr).toContain('STORAGE=memory keeps no keys to rotate');
    const unknown = await runCli({ DATA_DIR: dataDir }, ['rotate-keys', '--now']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("Unknown option '--now'");
    expect(unknown.stderr).toContain('rotate-keys [--immediate]');
  });
});
