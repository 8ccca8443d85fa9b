/**
 * Who else on the host can open the embedded stores' files. A SQLite file or a PGlite directory
 * holds the private halves of the signing keys (unless `keys.wrapping` is set), the session secret
 * a host keeps there, and a hash of every token: another account on the same machine that can read
 * it can sign tokens the resource servers accept. So the stores create their directory `0700` and
 * the SQLite file `0600` (SQLite gives its `-wal` and `-shm` files the database file's mode), and
 * they warn, without changing anything, about an existing file or directory that group or others
 * can open: that is the operator's file, perhaps shared with a backup account on purpose.
 *
 * File modes mean nothing on Windows, and runtimes without `node:fs` have no files: both skip this.
 * @module
 */
import { builtinModule } from '../core/builtins.js';

/** Mode of a directory the stores create: the owner only. */
export const PRIVATE_DIRECTORY_MODE = 0o700;
/** Mode of a database file the stores create: the owner only. */
export const PRIVATE_FILE_MODE = 0o600;

type PathModule = { dirname(path: string): string };

type FsModule = {
  openSync(path: string, flags: string, mode: number): number;
  closeSync(fd: number): void;
  statSync(path: string, options: { throwIfNoEntry: false }): { mode: number } | undefined;
};

function files(): FsModule | undefined {
  const platform = (globalThis as { process?: { platform?: string } }).process?.platform;
  return platform === 'win32' ? undefined : builtinModule<FsModule>('node:fs');
}

/**
 * Creates `path` empty with mode `0600` when nothing is there yet; anything else (it exists, its
 * directory does not, no permission) is left for the caller's open to report in its own words.
 * An empty file is a new SQLite database.
 * @param path - a database file's path
 */
export function createPrivateFile(path: string): void {
  const fs = files();
  if (fs === undefined) return;
  try {
    fs.closeSync(fs.openSync(path, 'wx', PRIVATE_FILE_MODE));
  } catch {
    // EEXIST (the usual case), ENOENT, EACCES, EISDIR: the open that follows says what is wrong.
  }
}

/** A path group or others can open, with its permission bits (`0644`). */
export interface OpenPath {
  readonly path: string;
  readonly mode: string;
}

/** Group's and others' permission bits: any of them. */
const ANY_ACCESS = 0o077;
/** Group's and others' write bits. */
const WRITE_ACCESS = 0o022;

function granting(paths: readonly string[], bits: number): OpenPath[] {
  const fs = files();
  if (fs === undefined) return [];
  const open: OpenPath[] = [];
  for (const path of paths) {
    let stat: { mode: number } | undefined;
    try {
      stat = fs.statSync(path, { throwIfNoEntry: false });
    } catch {
      continue; // not ours to stat (EACCES on a parent): the open reports that
    }
    if (stat !== undefined && (stat.mode & bits) !== 0) {
      open.push({ path, mode: (stat.mode & 0o7777).toString(8).padStart(4, '0') });
    }
  }
  return open;
}

/**
 * Those of `paths` that exist and grant group or others any permission.
 * @param paths - files or directories; missing ones are skipped
 */
export function openToOthers(paths: readonly string[]): OpenPath[] {
  return granting(paths, ANY_ACCESS);
}

/**
 * The directory holding `file`, when group or others may write it: there another account can
 * replace the file, or put one beside it (a SQLite `-wal` that SQLite would read), sticky bit or not
 * (the sticky bit only protects files that exist).
 * @param file - a database file's path
 */
export function directoryWritableByOthers(file: string): OpenPath | undefined {
  const path = builtinModule<PathModule>('node:path');
  return path === undefined ? undefined : granting([path.dirname(file)], WRITE_ACCESS)[0];
}
