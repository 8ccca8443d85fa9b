/**
 * FLT-01 on the embedded default, with a real full disk: the compiled reference server on SQLite
 * (no `STORAGE`, no `DATABASE_URL`: what `npm start` runs) keeps its `DATA_DIR` on a small tmpfs,
 * and the file system is filled to the last byte under it. While it is full the process lives,
 * every write it cannot make is answered `503 temporarily_unavailable` with `Retry-After` (never a
 * 500), reads still answer, and nothing acknowledged is lost or half-written; once space is freed,
 * the next request works without a restart, and the file is intact after one.
 *
 * Mounting needs root (CAP_SYS_ADMIN), as CI runs: under `CI=true` a failed mount fails the run;
 * on a developer machine without it the test is skipped with a printed reason.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteDatabase } from '../../src/storage/sqlite.js';
import { ADA, refreshRequest, registerClient } from '../helpers/school-flow.js';
import {
  assertCompiledServerFresh,
  freePort,
  type ServerProcess,
  startServerProcess,
  stopAllServerProcesses,
} from '../helpers/server-process.js';
import { type Chain, newChain, refresh, signIn, userinfo } from './load.js';

const mountPoint = mkdtempSync(join(tmpdir(), 'portcullis-disk-full-'));
const dataDir = join(mountPoint, 'data');
const filler = join(mountPoint, 'filler');

/** Mounts a 32 MB tmpfs on the mount point; the reason it could not, or undefined. */
function mountSmallDisk(): string | undefined {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m,mode=0700', 'tmpfs', mountPoint], {
      stdio: 'pipe',
    });
    return undefined;
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return stderr || (error instanceof Error ? error.message : String(error));
  }
}

const mountFailure = mountSmallDisk();
if (mountFailure !== undefined) {
  rmSync(mountPoint, { recursive: true, force: true });
  const message = `cannot mount a tmpfs (${mountFailure}): needs root`;
  if (process.env.CI === 'true') throw new Error(`${message}; required when CI=true (the full-disk test)`);
  console.warn(`SKIPPED the full-disk test (FLT-01 on SQLite): ${message}.`);
}

/** Writes zeros to the filler file until the file system refuses (ENOSPC); returns the bytes written. */
function fillDisk(): number {
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  let written = 0;
  try {
    for (;;) {
      // A partial write means the last blocks are gone; the next one fails with ENOSPC.
      written += writeSync(fd, chunk);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    return written;
  } finally {
    closeSync(fd);
  }
}

/** The lines a server logged at `error`: none are expected, a full disk is transient. */
const errorLines = (server: ServerProcess) =>
  `${server.stdout()}${server.stderr()}`.split('\n').filter((line) => line.includes('"level":"error"'));

describe.skipIf(mountFailure !== undefined)('FLT-01 a full disk under the default SQLite storage', () => {
  let server: ServerProcess;
  let chains: Chain[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    assertCompiledServerFresh();
    mkdirSync(dataDir);
    // The same port for both starts: the issuer, and so every token's iss and aud, derive from it.
    env = { PORT: String(await freePort()), DATA_DIR: dataDir, RATE_LIMIT: 'off' };
    server = await startServerProcess(env);
    const cookie = await signIn(server, ADA.email, ADA.password);
    chains = [];
    for (let i = 0; i < 4; i++) chains.push(await newChain(server, cookie));
  });

  afterAll(async () => {
    await stopAllServerProcesses();
    if (mountFailure === undefined) {
      try {
        execFileSync('umount', ['-l', mountPoint], { stdio: 'pipe' });
      } finally {
        rmSync(mountPoint, { recursive: true, force: true });
      }
    }
  });

  it('answers 503 with Retry-After while the disk is full, stays up, and works again once space is freed', async () => {
    expect(fillDisk()).toBeGreaterThan(0);

    // Refresh the chains until a write is refused: SQLite may still fit a few commits in log pages
    // it already holds. The first answer that is not a rotation must be the 503.
    let refused: { status: number; body: Record<string, string> } | undefined;
    for (let attempt = 0; attempt < 2000 && refused === undefined; attempt++) {
      const chain = chains[attempt % chains.length]!;
      const answer = await refresh(server, chain.clientId, chain.refreshToken);
      if (answer.status === 200) {
        chain.refreshToken = answer.body.refresh_token!;
        chain.accessToken = answer.body.access_token!;
      } else refused = answer;
    }
    expect(refused?.status).toBe(503);
    expect(refused?.body.error).toBe('temporarily_unavailable');

    // Full: every write refused the same way, with Retry-After; reads still answer.
    const chain = chains[0]!;
    const refreshWhileFull = await refreshRequest(server, chain.clientId, chain.refreshToken);
    expect(refreshWhileFull.status).toBe(503);
    expect(refreshWhileFull.headers.get('retry-after')).toBe('2');
    expect(await refreshWhileFull.json()).toMatchObject({ error: 'temporarily_unavailable' });
    const registration = await fetch(`${server.base}/api/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'While full',
        redirect_uris: ['http://127.0.0.1:49152/callback'],
        token_endpoint_auth_method: 'none',
      }),
    });
    expect(registration.status).toBe(503);
    expect(registration.headers.get('retry-after')).toBe('2');
    expect(await registration.json()).toMatchObject({ error: 'temporarily_unavailable' });
    for (const { accessToken } of chains) {
      expect(await userinfo(server, accessToken)).toBe(200);
    }

    // Space freed: the next requests work, with no restart; nothing acknowledged was lost, and the
    // refresh token the refused rotation presented was not rotated (the client keeps its grant).
    rmSync(filler);
    for (const each of chains) {
      const answer = await refresh(server, each.clientId, each.refreshToken);
      expect(answer.status).toBe(200);
      each.refreshToken = answer.body.refresh_token!;
      each.accessToken = answer.body.access_token!;
    }
    expect(await registerClient(server, 'http://127.0.0.1:49152/callback')).toEqual(expect.any(String));
    expect(errorLines(server)).toEqual([]);
    expect(server.stderr()).toContain('database or disk is full');

    // After a restart on the same directory the file is intact and every chain still works.
    const exit = await server.stop();
    expect(exit.code).toBe(0);
    const db = await openSqliteDatabase({ dataDir });
    try {
      expect(db.get<{ integrity_check: string }>('PRAGMA integrity_check')?.integrity_check).toBe('ok');
    } finally {
      db.close();
    }
    server = await startServerProcess(env);
    for (const each of chains) {
      expect(await userinfo(server, each.accessToken)).toBe(200);
      expect((await refresh(server, each.clientId, each.refreshToken)).status).toBe(200);
    }
  }, 120_000);
});
