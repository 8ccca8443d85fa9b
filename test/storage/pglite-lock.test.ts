/**
 * FLT-04 for the PGlite storage: one process per data directory. A second process (or a second
 * open in the same process) is refused with a message that says so, instead of both running on
 * their own copies of the pages and overwriting each other's writes; a lock left by a process
 * that died is taken over.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_FILE } from '../../src/storage/directory-lock.js';
import { openEmbeddedDatabase } from '../../src/storage/pglite.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pglite-lock-'));
  dirs.push(dir);
  return dir;
}

/** A process that runs until killed: a live pid on this host that is not ours. */
function otherProcess() {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    pid: child.pid!,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

describe('FLT-04 one process per PGlite data directory', () => {
  it('a directory another live process holds is refused, naming it; once that process is gone, its lock is taken over', async () => {
    const dir = dataDir();
    const other = otherProcess();
    try {
      writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: other.pid, host: hostname() }));
      await expect(openEmbeddedDatabase(dir)).rejects.toThrow(
        `is open in another process (pid ${other.pid})`,
      );
    } finally {
      await other.kill();
    }
    const db = await openEmbeddedDatabase(dir);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toEqual({
      pid: process.pid,
      host: hostname(),
    });
    await db.close();
  }, 60_000);

  it('a lock from another host is refused (its process cannot be checked from here)', async () => {
    const dir = dataDir();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: 1, host: 'another-host' }));
    await expect(openEmbeddedDatabase(dir)).rejects.toThrow('locked by process 1 on host another-host');
  });

  it('a second open in the same process is refused, and closing releases the directory', async () => {
    const dir = dataDir();
    const db = await openEmbeddedDatabase(dir);
    await expect(openEmbeddedDatabase(dir)).rejects.toThrow('already open in this process');
    await db.close();
    expect(() => readFileSync(join(dir, LOCK_FILE))).toThrow();
    const again = await openEmbeddedDatabase(dir);
    await again.close();
  }, 60_000);
});
