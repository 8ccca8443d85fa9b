/**
 * The one place that chooses storage. The library's records (clients, grants, tokens, keys) and
 * the server's own data (users, sessions, school) live in the same database:
 *
 * | choice | library storage | own data |
 * |---|---|---|
 * | `STORAGE=memory` | `memoryStorage()` | in-memory store |
 * | `DATABASE_URL=postgres://...` | `postgresStorage({ pool })` | `cs_*` tables via the same `pg.Pool` |
 * | default (`STORAGE=sqlite`) | `sqliteStorage({ database })` | `cs_*` tables in the same SQLite file, `DATA_DIR/portcullis.sqlite` |
 * | `STORAGE=pglite` | `pgliteStorage({ pglite })` | `cs_*` tables in the same PGlite under `DATA_DIR` |
 *
 * SQLite: one database handle for both, the library's tables prefixed `portcullis_`. Several
 * processes may run on one `DATA_DIR` (SQLite's locks). PGlite allows one instance per data
 * directory, so the library's storage and the server's own data share the instance opened here;
 * the library keeps its tables in the `portcullis` schema.
 * @module
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { defaultLogger, memoryStorage, type Storage } from 'portcullis';
import type { StorageChoice } from './config.js';
import { createMemoryDataStore } from './data/memory-store.js';
import { createSqlDataStore } from './data/sql-store.js';
import { IMPORTED_MARK, importPgliteDirectory } from './data/sqlite-import-pglite.js';
import { createSqliteDataStore } from './data/sqlite-store.js';
import type { DataStore } from './data/store.js';

/** The opened storage: the library's, the server's own, and how to close both. */
export interface OpenedStorage {
  readonly oauth: Storage;
  readonly data: DataStore;
  /** Human-readable, for the start-up log. */
  readonly description: string;
  close(): Promise<void>;
}

/** The SQLite file of the default storage in `dataDir`, the one file the server and its tool open. */
export function sqliteFileIn(dataDir: string): string {
  return join(dataDir, 'portcullis.sqlite');
}

/** Opens (and migrates) the storage of a choice. */
export async function openStorage(choice: StorageChoice): Promise<OpenedStorage> {
  switch (choice.kind) {
    case 'memory': {
      const oauth = memoryStorage();
      return {
        oauth,
        data: createMemoryDataStore(),
        description: 'memory (nothing persists)',
        close: () => oauth.close(),
      };
    }
    case 'postgres': {
      const { default: pg } = await import('pg');
      // Bounded waits (a connection within 5 s, a statement within 10 s) and TCP keep-alive, so a
      // database that is down or unreachable fails requests quickly (503) instead of hanging them.
      const pool = new pg.Pool({
        connectionString: choice.connectionString,
        max: 10,
        connectionTimeoutMillis: 5000,
        statement_timeout: 10_000,
        query_timeout: 11_000,
        keepAlive: true,
      });
      // PostgreSQL closing an idle connection (a restart, a failover) emits `error` on the pool:
      // without a listener that would end the process. The pool has already discarded it.
      pool.on('error', () => {});
      const data = createSqlDataStore(pool);
      await data.migrate();
      const { postgresStorage } = await import('portcullis/postgres');
      const oauth = postgresStorage({ pool });
      return {
        oauth,
        data,
        description: `PostgreSQL ${redact(choice.connectionString)}`,
        close: async () => {
          await oauth.close();
          await pool.end();
        },
      };
    }
    case 'sqlite': {
      refusePgliteDirectory(choice.dataDir);
      const { openSqliteDatabase, sqliteStorage } = await import('portcullis/sqlite');
      const file = sqliteFileIn(choice.dataDir);
      const isNew = !existsSync(file);
      // Its warnings (a file other accounts can open, an old SQLite) as log lines like the server's own.
      const db = await openSqliteDatabase({
        dataDir: choice.dataDir,
        onWarning: (message) => defaultLogger.warn(message),
      });
      const data = createSqliteDataStore(db);
      await data.migrate();
      let imported = '';
      if (choice.importPgliteFrom !== undefined && (await data.getMeta(IMPORTED_MARK)) === null) {
        try {
          if (!isNew) {
            throw new Error(
              `PGLITE_IMPORT_DIR: ${file} exists already; the import goes into a new database only ` +
                '(point DATA_DIR at an empty directory)',
            );
          }
          imported = `; ${await importPgliteDirectory(choice.importPgliteFrom, db)}`;
        } catch (error) {
          db.close();
          // The database was created for the import: leave nothing half-imported behind.
          if (isNew) for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
          throw error;
        }
      }
      const oauth = sqliteStorage({ database: db });
      return {
        oauth,
        data,
        description: `SQLite ${file}${imported}`,
        close: async () => {
          await oauth.close();
          db.close();
        },
      };
    }
    case 'pglite': {
      const { openEmbeddedDatabase, pgliteStorage } = await import('portcullis/pglite');
      const db = await openEmbeddedDatabase(choice.dataDir);
      const data = createSqlDataStore(db);
      await data.migrate();
      const oauth = pgliteStorage({ pglite: db });
      return {
        oauth,
        data,
        description: `PGlite ${choice.dataDir}`,
        close: async () => {
          await oauth.close();
          await db.close();
        },
      };
    }
  }
}

/**
 * Stops the start when `DATA_DIR` holds the PGlite database of an earlier default and no SQLite
 * file: starting SQLite beside it would look like every client, grant and user had vanished.
 * @throws Error saying how to keep or move the data
 */
function refusePgliteDirectory(dataDir: string): void {
  if (!existsSync(join(dataDir, 'PG_VERSION')) || existsSync(sqliteFileIn(dataDir))) return;
  throw new Error(
    `DATA_DIR ${dataDir} holds a PGlite database (the embedded default before SQLite). Either\n` +
      '  - keep using it: start with STORAGE=pglite, or\n' +
      `  - move its data to SQLite: move the directory aside (mv ${dataDir} ${dataDir}-pglite), then start once\n` +
      `    with PGLITE_IMPORT_DIR=${dataDir}-pglite: the new SQLite database starts with its data (README, "Storage"), or\n` +
      '  - start afresh: point DATA_DIR at an empty directory.',
  );
}

/** The connection string without its password, for logs. */
function redact(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return 'postgres://...';
  }
}
