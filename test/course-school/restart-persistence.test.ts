/**
 * On the embedded default storage (SQLite, `DATA_DIR/portcullis.sqlite`), and on PGlite
 * (`STORAGE=pglite`), the compiled server stopped with SIGTERM and started again on the same directory still knows the registered client,
 * accepts the access token issued before the restart, rotates the refresh token, keeps the signing
 * keys and the user's session, and does not seed the demo data again (what the owner deleted stays
 * deleted). With `TIME_IN_TOKENS=off` it issues tokens as earlier releases did (what their
 * instances, still running beside it in a rolling upgrade, find), and those keep working once it
 * is switched back on.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/core/crypto.js';
import { openSqliteDatabase } from '../../src/storage/sqlite.js';
import { newChain, refresh, signIn } from '../faults/load.js';
import {
  ADA,
  api,
  authorize,
  exchangeCode,
  refreshRequest,
  registerClient,
  type TokenSet,
} from '../helpers/school-flow.js';
import {
  assertCompiledServerFresh,
  type Exit,
  freePort,
  startServerProcess,
  stopAllServerProcesses,
} from '../helpers/server-process.js';

const dataDirs: string[] = [];

beforeAll(() => assertCompiledServerFresh());
afterAll(async () => {
  await stopAllServerProcesses();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** A clean stop: exit 0, nothing on stderr, nothing on stdout but the start line. */
function expectCleanExit(exit: Exit, storage: string): void {
  expect(exit.stderr).toBe('');
  expect(exit).toMatchObject({ code: 0, signal: null });
  expect(exit.stdout).toBe(exit.stdout.split('\n')[0] + '\n');
  expect(exit.stdout).toContain(`storage: ${storage})`);
}

/** The published signing keys (their `kid`s), from the JWK Set. */
async function publishedKids(base: string): Promise<string[]> {
  const response = await fetch(`${base}/.well-known/jwks.json`);
  expect(response.status).toBe(200);
  const kids = ((await response.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid).sort();
  expect(kids.length).toBeGreaterThan(0);
  return kids;
}

async function publicPages(base: string): Promise<string[]> {
  const response = await fetch(`${base}/api/v1/pages`);
  return ((await response.json()) as { data: { id: string }[] }).data.map((p) => p.id).sort();
}

const stores = [
  {
    name: 'the embedded default storage (SQLite)',
    variables: {},
    describe: (dir: string) => `SQLite ${join(dir, 'portcullis.sqlite')}`,
  },
  {
    name: 'PGlite (STORAGE=pglite)',
    variables: { STORAGE: 'pglite' },
    describe: (dir: string) => `PGlite ${dir}`,
  },
];

describe.each(stores)('restart on $name', (store) => {
  it('keeps the client, the tokens, the keys and the session; seeds nothing twice', {
    timeout: 150_000,
  }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'course-school-restart-'));
    dataDirs.push(dataDir);
    // The same port both times: the issuer (and so every token's iss and aud) derives from it.
    const env = { PORT: String(await freePort()), DATA_DIR: dataDir, ...store.variables };
    const first = await startServerProcess(env);
    expect(first.stdout()).toContain(`storage: ${store.describe(dataDir)})`);
    const redirectUri = 'http://127.0.0.1:49152/callback';
    const clientId = await registerClient(first, redirectUri, { client_name: 'Survives restarts' });
    const authorized = await authorize(
      first,
      { clientId, redirectUri, scope: 'openid account:read pages:write' },
      ADA,
    );
    const tokens = await exchangeCode(first, clientId, redirectUri, authorized);
    const kids = await publishedKids(first.base);
    // The owner deletes a seeded page; a second seeding would bring it back.
    expect(await publicPages(first.base)).toEqual(['pag_about', 'pag_terms']);
    const deleted = await api(first, '/pages/pag_terms', tokens.access_token, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect(await publicPages(first.base)).toEqual(['pag_about']);

    expectCleanExit(await first.stop('SIGTERM'), store.describe(dataDir));

    const second = await startServerProcess(env);
    expect(second.issuer).toBe(first.issuer);
    // The access token issued before the restart is still accepted (same keys, same token records).
    const account = await api(second, '/account', tokens.access_token);
    expect(account.status).toBe(200);
    expect(await account.json()).toMatchObject({ email: ADA.email });
    expect(await publishedKids(second.base)).toEqual(kids);

    // The refresh token still works, and rotates.
    const refreshed = await refreshRequest(second, clientId, tokens.refresh_token);
    const rotated = (await refreshed.json()) as TokenSet;
    expect(refreshed.status).toBe(200);
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    expect((await api(second, '/account', rotated.access_token)).status).toBe(200);
    // Presented again at once, it is a retry within the grace window: the same successor (FLT-03).
    const retried = await refreshRequest(second, clientId, tokens.refresh_token);
    expect(await retried.json()).toMatchObject({ refresh_token: rotated.refresh_token });

    // The client is still registered, and ada's session too: straight to the consent page, then a code.
    const again = await authorize(
      second,
      { clientId, redirectUri, scope: 'openid' },
      { cookie: authorized.cookie },
    );
    expect(again.consent).toContain('Survives restarts');
    await exchangeCode(second, clientId, redirectUri, again);

    // Not seeded again: the deleted page stays deleted, the demo accounts still sign in.
    expect(await publicPages(second.base)).toEqual(['pag_about']);
    const courses = (await (await api(second, '/courses')).json()) as { data: { id: string }[] };
    expect(courses.data.map((c) => c.id)).toEqual([
      'crs_analytical_engines',
      'crs_compilers',
      'crs_debugging',
    ]);

    expectCleanExit(await second.stop('SIGTERM'), store.describe(dataDir));
  });
});

describe('moving from PGlite, the embedded default before SQLite', () => {
  it('refuses to start SQLite on a PGlite data directory, then starts with its data imported (PGLITE_IMPORT_DIR)', {
    timeout: 150_000,
  }, async () => {
    const pgliteDir = mkdtempSync(join(tmpdir(), 'course-school-pglite-'));
    const sqliteDir = mkdtempSync(join(tmpdir(), 'course-school-imported-'));
    dataDirs.push(pgliteDir, sqliteDir);
    const port = String(await freePort());
    const old = await startServerProcess({ PORT: port, DATA_DIR: pgliteDir, STORAGE: 'pglite' });
    const redirectUri = 'http://127.0.0.1:49152/callback';
    const clientId = await registerClient(old, redirectUri, { client_name: 'Moves to SQLite' });
    const authorized = await authorize(old, { clientId, redirectUri, scope: 'openid account:read' }, ADA);
    const tokens = await exchangeCode(old, clientId, redirectUri, authorized);
    const kids = await publishedKids(old.base);
    expectCleanExit(await old.stop('SIGTERM'), `PGlite ${pgliteDir}`);

    // The new default on the old directory: refused, saying what to do; nothing created there.
    await expect(startServerProcess({ PORT: port, DATA_DIR: pgliteDir })).rejects.toThrow(
      /holds a PGlite database.*STORAGE=pglite.*PGLITE_IMPORT_DIR/s,
    );
    expect(existsSync(join(pgliteDir, 'portcullis.sqlite'))).toBe(false);

    const moved = await startServerProcess({ PORT: port, DATA_DIR: sqliteDir, PGLITE_IMPORT_DIR: pgliteDir });
    expect(moved.stdout()).toMatch(/storage: SQLite \S+portcullis\.sqlite; imported from PGlite .*1 clients/);
    expect(await publishedKids(moved.base)).toEqual(kids);
    expect((await api(moved, '/account', tokens.access_token)).status).toBe(200);
    const refreshed = await refreshRequest(moved, clientId, tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    // ada's session came along: straight to the consent page of the imported client.
    const again = await authorize(
      moved,
      { clientId, redirectUri, scope: 'openid' },
      { cookie: authorized.cookie },
    );
    expect(again.consent).toContain('Moves to SQLite');
    await moved.stop('SIGTERM');

    // Started again with the variable still set: the import is not repeated.
    const later = await startServerProcess({ PORT: port, DATA_DIR: sqliteDir, PGLITE_IMPORT_DIR: pgliteDir });
    expect(later.stdout()).not.toContain('imported from');
    expect(await publishedKids(later.base)).toEqual(kids);
    expectCleanExit(await later.stop('SIGTERM'), `SQLite ${join(sqliteDir, 'portcullis.sqlite')}`);
  });
});

describe('TIME_IN_TOKENS=off (tokens.timeInTokens: false), for a rolling upgrade from an earlier release', () => {
  it('TIME_IN_TOKENS=off issues tokens under their bare hash; switched back on, they keep working and new ones carry the time', {
    timeout: 60_000,
  }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'portcullis-rolling-'));
    dataDirs.push(dataDir);
    const env = { PORT: String(await freePort()), DATA_DIR: dataDir, RATE_LIMIT: 'off' };

    const off = await startServerProcess({ ...env, TIME_IN_TOKENS: 'off' });
    const chain = await newChain(off, await signIn(off, ADA.email, ADA.password));
    expect(chain.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await off.stop();
    // Stored where an instance of an earlier release looks: under the bare hash.
    const db = await openSqliteDatabase({ dataDir });
    try {
      const row = db.get<{ client_id: string }>(
        'SELECT client_id FROM portcullis_refresh_tokens WHERE token_hash = ?',
        await sha256(chain.refreshToken),
      );
      expect(row?.client_id).toBe(chain.clientId);
    } finally {
      db.close();
    }

    const on = await startServerProcess(env);
    expect((await api(on, '/account', chain.accessToken)).status).toBe(200);
    const rotated = await refresh(on, chain.clientId, chain.refreshToken);
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).toMatch(/^[A-Za-z0-9_-]{51}$/);
    expect((await api(on, '/account', rotated.body.access_token!)).status).toBe(200);
    await on.stop();
  });
});
