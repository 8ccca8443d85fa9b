/**
 * One process per PGlite data directory. PGlite is PostgreSQL in one process's memory: a second
 * process opening the same directory starts fine, then each works on its own copy of the pages and
 * they overwrite each other's writes (refreshes refused, valid tokens answered 401), silently. A
 * lock file in the directory, made with an exclusive create, refuses the second process with a
 * message that says so. A lock left by a process that died (`kill -9`, a crash) is taken over:
 * its pid no longer runs on this host, or it is our own pid (a container restarted as pid 1).
 * @module
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';

/** The lock file's name inside the data directory. */
export const LOCK_FILE = 'portcullis.lock';

/** The directories this process holds, by resolved path: a second open in the same process is refused too. */
const held = new Set<string>();

interface LockOwner {
  readonly pid: number;
  readonly host: string;
}

function readOwner(path: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>;
    return typeof owner.pid === 'number' && typeof owner.host === 'string'
      ? { pid: owner.pid, host: owner.host }
      : undefined;
  } catch {
    return undefined; // unreadable or half-written: its writer died before finishing it
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, owned by another user
  }
}

/**
 * Takes the lock of `dataDir` for this process.
 *
 * @param dataDir - the data directory (it exists)
 * @returns a function that releases the lock (idempotent)
 * @throws Error when another live process holds the lock, or one on another host may
 */
export function lockDirectory(dataDir: string): () => void {
  const path = resolve(dataDir, LOCK_FILE);
  if (held.has(path)) {
    throw new Error(
      `the PGlite data directory ${dataDir} is already open in this process: open it once and share the instance`,
    );
  }
  const me: LockOwner = { pid: process.pid, host: hostname() };
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = readOwner(path);
      if (owner !== undefined && owner.host !== me.host) {
        throw new Error(
          `the PGlite data directory ${dataDir} is locked by process ${owner.pid} on host ${owner.host}: one process per directory (use SQLite for several processes on one host, PostgreSQL for several hosts); if that process is gone, delete ${path}`,
        );
      }
      if (owner !== undefined && owner.pid !== me.pid && running(owner.pid)) {
        throw new Error(
          `the PGlite data directory ${dataDir} is open in another process (pid ${owner.pid}): one process per directory (use SQLite for several processes on one host, PostgreSQL for several hosts)`,
        );
      }
      rmSync(path, { force: true }); // left by a process that is gone
      continue;
    }
    try {
      writeSync(fd, JSON.stringify(me));
    } finally {
      closeSync(fd);
    }
    held.add(path);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.delete(path);
      const owner = readOwner(path);
      if (owner?.pid === me.pid && owner.host === me.host) rmSync(path, { force: true });
    };
  }
  throw new Error(`could not lock the PGlite data directory ${dataDir}: another process keeps taking it`);
}
