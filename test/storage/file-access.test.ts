/**
 * The embedded stores' directories, from other accounts on the same host: the SQLite file and the
 * PGlite files hold the private signing keys (unless `keys.wrapping` is set) and a hash of every
 * token. A data directory the storage creates is the owner's only (`0700`); an existing one is
 * left as the operator made it, and PGlite's (whose files PGlite writes `0666`) is warned about
 * when other accounts can enter it. The SQLite file's own modes are tested per driver in
 * `sqlite-database.test.ts`.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openEmbeddedDatabase } from '../../src/storage/pglite.js';
import { openSqliteDatabase } from '../../src/storage/sqlite.js';
import { availableDrivers } from './sqlite-drivers.js';

const roots: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function scratch(): string {
  const root = mkdtempSync(join(tmpdir(), 'portcullis-file-access-'));
  roots.push(root);
  return root;
}

const modeOf = (path: string) => statSync(path).mode & 0o777;
const [driver] = [...(await availableDrivers()).keys()];

describe('SQLite data directory', () => {
  it('is created with its missing parents for the owner only (0700), the file inside 0600', async () => {
    const root = scratch();
    const dataDir = join(root, 'var', 'auth');
    const db = await openSqliteDatabase({ dataDir, ...(driver === undefined ? {} : { driver }) });
    db.close();
    expect([modeOf(join(root, 'var')), modeOf(dataDir), modeOf(join(dataDir, 'portcullis.sqlite'))]).toEqual([
      0o700, 0o700, 0o600,
    ]);
  });

  it('an existing directory keeps its mode (the file inside is what is protected)', async () => {
    const dataDir = join(scratch(), 'shared');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    const warnings: string[] = [];
    const db = await openSqliteDatabase({
      dataDir,
      // Only the file-mode warning: an old SQLite (Node 24.0's node:sqlite) warns about something else.
      onWarning: (message) => {
        if (message.includes('other accounts')) warnings.push(message);
      },
    });
    db.close();
    expect(modeOf(dataDir)).toBe(0o755);
    expect(modeOf(join(dataDir, 'portcullis.sqlite'))).toBe(0o600);
    expect(warnings).toEqual([]);
  });
});

describe('PGlite data directory', () => {
  it("a new one is the owner's only (0700): the 0666 files PGlite writes in it are out of other accounts' reach", async () => {
    const dataDir = join(scratch(), 'pglite');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const db = await openEmbeddedDatabase(dataDir);
    await db.close();
    expect(modeOf(dataDir)).toBe(0o700);
    expect(readdirSync(dataDir)).toContain('PG_VERSION');
    expect(warn).not.toHaveBeenCalled();
  }, 60_000);

  it('an existing one other accounts can enter: one warning naming it and the chmod; its mode left as it was', async () => {
    const dataDir = join(scratch(), 'pglite');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const db = await openEmbeddedDatabase(dataDir);
    await db.close();
    expect(warn.mock.calls).toEqual([
      [
        `portcullis: the PGlite data directory ${dataDir} (mode 0755) can be entered by other accounts on ` +
          'this host, and PGlite writes its files readable and writable by every account: they hold the ' +
          'private signing keys (unless keys.wrapping is set) and a hash of every token. Unless that is ' +
          `intended: chmod 700 ${dataDir}`,
      ],
    ]);
    expect(modeOf(dataDir)).toBe(0o755);
  }, 60_000);
});
