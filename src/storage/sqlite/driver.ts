/**
 * Which SQLite library runs the database. Every supported driver already offers the same small
 * synchronous surface (`exec`, `prepare` -> `run`/`get`/`all`, `close`), so the storage codes
 * against {@link SqliteConnection} and never against a driver:
 *
 * - `node:sqlite`, built into Node.js (unflagged from 22.13; without the "experimental" warning from
 *   24.15). Chosen when the runtime's SQLite has the WAL-reset fix (3.51.3: Node 22.23+, 24.15+, 26).
 * - `@photostructure/sqlite`, node:sqlite's API as an N-API addon whose prebuilt binaries ship inside
 *   the npm package (no compiler, no download, one build for every Node line): the fallback for Node
 *   20.19+, 22.12 and older 22/24 releases. An optional peer dependency.
 * - `better-sqlite3` or `libsql`, only when asked for by name (see the spike report: a source build of
 *   minutes and one build per Node ABI; libsql bundles SQLite 3.45.1, before the WAL-reset fix).
 * @module
 */
import { builtinModule } from '../../core/builtins.js';
import { SqliteUnavailableError } from './errors.js';

/**
 * A value SQLite stores or returns: `NULL`, an integer or real, text, or a blob.
 *
 * @example
 * ```ts
 * import type { SqliteValue } from 'portcullis/sqlite';
 *
 * const params: SqliteValue[] = ['user-42', Date.now(), null];
 * ```
 * @see https://sqlite.org/datatype3.html
 * @group Storage
 */
export type SqliteValue = null | number | bigint | string | Uint8Array;

/** A row as the drivers return it: column name to value. */
export type SqliteRow = Record<string, SqliteValue>;

/**
 * What a write statement reports.
 *
 * @example
 * ```ts
 * import type { SqliteDatabase } from 'portcullis/sqlite';
 *
 * declare const db: SqliteDatabase;
 * const { changes } = db.run('DELETE FROM cs_sessions WHERE expires_at <= ?', Date.now());
 * console.log(`${changes} sessions removed`);
 * ```
 * @see https://sqlite.org/c3ref/changes.html
 * @group Storage
 */
export interface SqliteRunResult {
  /** Rows inserted, updated or deleted by the statement. */
  readonly changes: number | bigint;
  readonly lastInsertRowid: number | bigint;
}

/** A prepared statement, reusable until its connection closes. Parameters are positional (`?`). */
export interface SqliteStatement {
  run(...params: SqliteValue[]): SqliteRunResult;
  /** The first row, or `undefined` when there is none. */
  get(...params: SqliteValue[]): unknown;
  all(...params: SqliteValue[]): unknown[];
}

/** One open database connection, as every supported driver offers it. */
export interface SqliteConnection {
  exec(sql: string): void;
  prepare(sql: string): SqliteStatement;
  close(): void;
}

/**
 * The SQLite drivers the storage knows how to load. Without a choice it picks `node:sqlite` when the
 * runtime's SQLite has the WAL-reset fix, else `@photostructure/sqlite` when installed, else an older
 * `node:sqlite` with a warning. `better-sqlite3` and `libsql` are loaded only when named.
 *
 * @example
 * ```ts
 * import { openSqliteDatabase, type SqliteDriverName } from 'portcullis/sqlite';
 *
 * const driver: SqliteDriverName = '@photostructure/sqlite';
 * const db = await openSqliteDatabase({ dataDir: './.data', driver });
 * ```
 * @see docs/storage.md, "SQLite"
 * @group Storage
 */
export type SqliteDriverName = 'node:sqlite' | '@photostructure/sqlite' | 'better-sqlite3' | 'libsql';

/** A loaded driver: opens connections. */
export interface SqliteDriver {
  readonly name: SqliteDriverName;
  /** The SQLite library version the driver runs, e.g. `3.53.4`. */
  readonly sqliteVersion: string;
  open(file: string): SqliteConnection;
}

/**
 * The first SQLite release without the WAL-reset bug, a race that can corrupt a WAL database when
 * two connections (two processes on one file) write and checkpoint at the same moment:
 * https://sqlite.org/wal.html#walresetbug
 */
export const WAL_RESET_FIX_VERSION = '3.51.3';

/** Whether SQLite `version` (e.g. `3.47.2`) is at least `minimum`. */
export function sqliteVersionAtLeast(version: string, minimum: string): boolean {
  const a = version.split('.').map(Number);
  const b = minimum.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x > y;
  }
  return true;
}

/** node:sqlite's shape, which @photostructure/sqlite copies. */
interface NodeSqliteModule {
  DatabaseSync: new (path: string) => SqliteConnection;
}

/** better-sqlite3's shape, which libsql copies: the module's default export is the constructor. */
type BetterSqliteConstructor = new (path: string, options?: { timeout?: number }) => SqliteConnection;

function versionOf(open: (file: string) => SqliteConnection): string {
  const db = open(':memory:');
  try {
    const row = db.prepare('SELECT sqlite_version() AS v').get() as { v?: unknown } | undefined;
    return String(row?.v);
  } finally {
    db.close();
  }
}

function driverFrom(name: SqliteDriverName, open: (file: string) => SqliteConnection): SqliteDriver {
  return { name, sqliteVersion: versionOf(open), open };
}

/** node:sqlite when the runtime has it unflagged, without loading it (loading prints a warning on 22). */
function builtinSqliteVersion(): string | undefined {
  const proc = (globalThis as { process?: { versions?: Record<string, string | undefined> } }).process;
  return proc?.versions?.['sqlite'];
}

function loadBuiltin(): SqliteDriver | undefined {
  if (builtinSqliteVersion() === undefined) return undefined;
  const mod = builtinModule<NodeSqliteModule>('node:sqlite');
  if (mod === undefined || typeof mod.DatabaseSync !== 'function') return undefined;
  const { DatabaseSync } = mod;
  return driverFrom('node:sqlite', (file) => new DatabaseSync(file));
}

/** `import(name)` of an optional package: `undefined` when it is not installed. */
async function importOptional(name: string): Promise<unknown> {
  try {
    // A variable specifier: bundlers leave the optional peer alone, and tsc needs no types for it.
    const specifier: string = name;
    const mod: unknown = await import(specifier);
    return mod;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return undefined;
    throw new SqliteUnavailableError(`the SQLite driver ${name} is installed but does not load`, {
      cause: error,
    });
  }
}

function member(mod: unknown, key: string): unknown {
  if ((typeof mod !== 'object' && typeof mod !== 'function') || mod === null) return undefined;
  return (mod as Record<string, unknown>)[key];
}

async function loadNamed(name: SqliteDriverName): Promise<SqliteDriver | undefined> {
  if (name === 'node:sqlite') return loadBuiltin();
  const mod = await importOptional(name);
  if (mod === undefined) return undefined;
  if (name === '@photostructure/sqlite') {
    const DatabaseSync = member(mod, 'DatabaseSync') ?? member(member(mod, 'default'), 'DatabaseSync');
    if (typeof DatabaseSync !== 'function') return undefined;
    const ctor = DatabaseSync as NodeSqliteModule['DatabaseSync'];
    return driverFrom(name, (file) => new ctor(file));
  }
  const ctor = member(mod, 'default') ?? mod;
  if (typeof ctor !== 'function') return undefined;
  const Database = ctor as BetterSqliteConstructor;
  // timeout 0: the busy timeout is set by pragma on every connection, the same for every driver.
  return driverFrom(name, (file) => new Database(file, { timeout: 0 }));
}

/** Options of {@link loadSqliteDriver}. */
export interface LoadSqliteDriverOptions {
  /** Load this driver and no other (tests, measurements, or a host that prefers one). */
  readonly driver?: SqliteDriverName;
}

/**
 * Loads the SQLite driver for this runtime. Without `driver`, in this order: `node:sqlite` when its
 * SQLite has the WAL-reset fix; else `@photostructure/sqlite` when installed; else `node:sqlite` with
 * an older SQLite (the caller warns: see {@link WAL_RESET_FIX_VERSION}).
 *
 * @param options - {@link LoadSqliteDriverOptions}
 * @returns the driver
 * @throws SqliteUnavailableError when no driver can be loaded, naming what to install
 */
export async function loadSqliteDriver(options: LoadSqliteDriverOptions = {}): Promise<SqliteDriver> {
  if (options.driver !== undefined) {
    const driver = await loadNamed(options.driver);
    if (driver === undefined) {
      throw new SqliteUnavailableError(
        options.driver === 'node:sqlite'
          ? 'node:sqlite is not available on this runtime (it needs Node.js 22.13 or later)'
          : `the SQLite driver ${options.driver} is not installed (npm install ${options.driver})`,
      );
    }
    return driver;
  }
  const builtinVersion = builtinSqliteVersion();
  if (builtinVersion !== undefined && sqliteVersionAtLeast(builtinVersion, WAL_RESET_FIX_VERSION)) {
    const builtin = loadBuiltin();
    if (builtin !== undefined) return builtin;
  }
  const addon = await loadNamed('@photostructure/sqlite');
  if (addon !== undefined) return addon;
  const builtin = loadBuiltin();
  if (builtin !== undefined) return builtin;
  throw new SqliteUnavailableError(
    'SQLite storage needs Node.js 22.13 or later (node:sqlite) or the package @photostructure/sqlite ' +
      '(npm install @photostructure/sqlite); this runtime has neither',
  );
}
