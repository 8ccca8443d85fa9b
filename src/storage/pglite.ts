/**
 * `portcullis/pglite`: the embedded persistent storage. PGlite (`@electric-sql/pglite`, an optional
 * peer dependency) is PostgreSQL compiled to WebAssembly, running inside the process with its data
 * in a directory: no database server, data that survives restarts, and the same schema and
 * statements as `portcullis/postgres`. One process per data directory; for several instances behind
 * a load balancer, use PostgreSQL.
 * @module portcullis/pglite
 */
import { mkdir } from 'node:fs/promises';
import { PGlite, type PGliteInterface } from '@electric-sql/pglite';
import { builtinModule } from '../core/builtins.js';
import { lockDirectory } from './directory-lock.js';
import { openToOthers, PRIVATE_DIRECTORY_MODE } from './file-access.js';
import type { SqlExecutor, SqlQueryable, SqlStatement } from './sql/executor.js';
import { DEFAULT_SCHEMA } from './sql/schema-name.js';
import { SqlStorage } from './sql/sql-storage.js';
import type { Storage } from './types.js';

/**
 * Which database: a data directory the storage opens (and closes), nothing for an in-memory database
 * (tests, demos: lost when the storage closes), or a PGlite instance the host owns and closes.
 *
 * @example
 * ```ts
 * import type { PgliteConnection } from 'portcullis/pglite';
 *
 * const onDisk: PgliteConnection = { dataDir: './.data/portcullis' };
 * const inMemory: PgliteConnection = {};
 * ```
 * @see docs/storage.md, "Choosing"
 * @group Storage
 */
export type PgliteConnection =
  | {
      /** Directory of the database files, created (with its parents) when missing. Omit for an in-memory database. */
      readonly dataDir?: string;
    }
  | { readonly pglite: PGliteInterface };

/**
 * Options of {@link pgliteStorage}.
 *
 * @example
 * ```ts
 * import { pgliteStorage, type PgliteStorageOptions } from 'portcullis/pglite';
 *
 * const options: PgliteStorageOptions = { schema: 'oauth' };
 * const storage = pgliteStorage({ dataDir: './.data' }, options);
 * ```
 * @see docs/storage.md
 * @group Storage
 */
export interface PgliteStorageOptions {
  /** The schema holding the tables, created and migrated on first use. Default `portcullis`. */
  readonly schema?: string;
  /** Rows deleted per statement by `deleteExpired` (default 1000). */
  readonly deleteBatchSize?: number;
}

type PgliteQueryable = Pick<PGliteInterface, 'query'>;

/**
 * Settings for an embedded database inside a server process: PGlite's defaults (128 MB of shared
 * buffers) are a database server's. With these the whole process of the reference server stays
 * well under 256 MB resident (measured in the benchmark).
 */
const EMBEDDED_SETTINGS = [
  'shared_buffers = 16MB',
  'work_mem = 2MB',
  'maintenance_work_mem = 8MB',
  'temp_buffers = 2MB',
  'wal_buffers = 1MB',
];

type ChildProcessModule = {
  spawn(
    command: string,
    args: readonly string[],
    options: { stdio: ['ignore', 'ignore', 'pipe'] },
  ): {
    stderr: { on(event: 'data', listener: (chunk: Uint8Array) => void): void } | null;
    on(event: 'exit', listener: (code: number | null) => void): void;
    on(event: 'error', listener: (error: Error) => void): void;
  };
};
type UrlModule = { pathToFileURL(path: string): URL };
type FsModule = { existsSync(path: string): boolean };

/** Where PGlite's entry point is, as a URL the child process can import. */
function pgliteUrl(url: UrlModule): string {
  // The ES module build has `import.meta.resolve`; in the CommonJS build `import.meta` is empty and
  // `require` is the real one.
  const meta = import.meta as { resolve?: (specifier: string) => string };
  if (typeof meta.resolve === 'function') return meta.resolve('@electric-sql/pglite');
  return url.pathToFileURL(require.resolve('@electric-sql/pglite')).href;
}

/**
 * Initialises a new data directory (PostgreSQL's initdb) in a short-lived child process. initdb
 * runs a second WebAssembly program whose memory PGlite does not give back: done in the server's
 * own process it leaves about 500 MB resident for the life of the process.
 */
async function initializeInChildProcess(dataDir: string): Promise<boolean> {
  const childProcess = builtinModule<ChildProcessModule>('node:child_process');
  const url = builtinModule<UrlModule>('node:url');
  const proc = (globalThis as { process?: { execPath?: string } }).process;
  if (childProcess === undefined || url === undefined || proc?.execPath === undefined) return false;
  const script =
    'const { PGlite } = await import(process.argv[1]);' +
    'const db = await PGlite.create({ dataDir: process.argv[2] });' +
    'await db.close();';
  await new Promise<void>((resolve, reject) => {
    const child = childProcess.spawn(
      proc.execPath!,
      ['--input-type=module', '-e', script, pgliteUrl(url), dataDir],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    const decoder = new TextDecoder();
    child.stderr?.on('data', (chunk) => {
      if (stderr.length < 4000) stderr += decoder.decode(chunk);
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`initialising the PGlite data directory failed (exit ${code}): ${stderr.trim()}`)),
    );
  });
  return true;
}

/**
 * Opens (creating if needed) an embedded PostgreSQL database in `dataDir`, tuned to live inside a
 * server process: a new directory is initialised in a child process, and the shared buffers are
 * sized for one process. Share the returned instance between {@link pgliteStorage} (`{ pglite }`)
 * and your own tables; one process per directory.
 *
 * @param dataDir - directory of the database files, created with its parents when missing, mode
 *   `0700` (PGlite writes its files `0666`); an existing one other accounts can enter is warned about
 * @returns the open database; close it when the server stops
 * @throws Error when the directory cannot be created or initialised, or another process has it open
 *   (its lock file, `portcullis.lock`, names a process that still runs; a stale one is taken over)
 * @see docs/storage.md, "Choosing" (memory and start-up costs)
 * @example
 * ```ts
 * import { openEmbeddedDatabase, pgliteStorage } from 'portcullis/pglite';
 *
 * const db = await openEmbeddedDatabase('./.data');
 * const storage = pgliteStorage({ pglite: db });
 * ```
 * @group Storage
 */
export async function openEmbeddedDatabase(dataDir: string): Promise<PGliteInterface> {
  // The owner only: PGlite writes its files readable and writable by every account (0666), so the
  // directory is what keeps the private signing keys in them from other accounts (file-access.ts).
  await mkdir(dataDir, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  for (const open of openToOthers([dataDir])) {
    console.warn(
      `portcullis: the PGlite data directory ${open.path} (mode ${open.mode}) can be entered by other ` +
        'accounts on this host, and PGlite writes its files readable and writable by every account: ' +
        'they hold the private signing keys (unless keys.wrapping is set) and a hash of every token. ' +
        `Unless that is intended: chmod 700 ${open.path}`,
    );
  }
  const unlock = lockDirectory(dataDir);
  try {
    const fs = builtinModule<FsModule>('node:fs');
    if (fs !== undefined && !fs.existsSync(`${dataDir}/PG_VERSION`)) await initializeInChildProcess(dataDir);
    const db = await PGlite.create({ dataDir, postgresqlconf: EMBEDDED_SETTINGS });
    const close = db.close.bind(db);
    db.close = async () => {
      try {
        await close();
      } finally {
        unlock();
      }
    };
    return db;
  } catch (error) {
    unlock();
    throw error;
  }
}

function queryable(db: PgliteQueryable): SqlQueryable {
  return {
    async query<Row>(statement: SqlStatement, params: unknown[]): Promise<Row[]> {
      return (await db.query<Row>(statement.text, params)).rows;
    },
  };
}

function pgliteExecutor(connection: PgliteConnection): SqlExecutor {
  let opening: Promise<PGliteInterface> | undefined;
  const owned = !('pglite' in connection);
  // Opening takes a moment (WebAssembly start-up, and initdb for a new directory): do it on first
  // use, once, so that creating the storage stays synchronous like the other adapters.
  const open = (): Promise<PGliteInterface> => {
    if ('pglite' in connection) return Promise.resolve(connection.pglite);
    const { dataDir } = connection;
    opening ??= (async () => {
      if (dataDir === undefined) return PGlite.create();
      // `idb://`-style URLs are not paths: PGlite opens those itself.
      if (dataDir.includes('://')) return PGlite.create({ dataDir });
      return openEmbeddedDatabase(dataDir);
    })().catch((error: unknown) => {
      opening = undefined;
      throw error;
    });
    return opening;
  };
  return {
    async query<Row>(statement: SqlStatement, params: unknown[]): Promise<Row[]> {
      return queryable(await open()).query<Row>(statement, params);
    },
    async transaction<T>(body: (tx: SqlQueryable) => Promise<T>): Promise<T> {
      const db = await open();
      return db.transaction((tx) => body(queryable(tx)));
    },
    async close() {
      if (owned && opening !== undefined) {
        const db = await opening;
        opening = undefined;
        await db.close();
      }
    },
  };
}

/**
 * Creates a {@link Storage} in an embedded PostgreSQL (PGlite): persistent when given a `dataDir`,
 * in memory otherwise. The schema is created and migrated on first use. Only one process may open
 * a data directory at a time.
 *
 * @param connection - `{ dataDir }` for data on disk, `{}` for memory, or `{ pglite }` to share an instance
 * @param options - schema and cleanup batch size
 * @returns the storage; its `close()` closes the database unless it was passed in as `pglite`
 * @throws TypeError when the schema name is not a plain identifier or the batch size not a positive integer
 * @see RFC 6749 §4.1.2 and §10.5 (single-use codes), RFC 9700 §4.14.2 (refresh rotation): the atomic steps, as single conditional statements; docs/storage.md
 * @example
 * ```ts
 * import { createAuthorizationServer } from 'portcullis';
 * import { pgliteStorage } from 'portcullis/pglite';
 *
 * const storage = pgliteStorage({ dataDir: './.data/portcullis' });
 * const server = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage });
 * ```
 * @group Storage
 */
export function pgliteStorage(
  connection: PgliteConnection = {},
  options: PgliteStorageOptions = {},
): Storage {
  return new SqlStorage(pgliteExecutor(connection), {
    schema: options.schema ?? DEFAULT_SCHEMA,
    autoMigrate: true,
    deleteBatchSize: options.deleteBatchSize ?? 1000,
  });
}
