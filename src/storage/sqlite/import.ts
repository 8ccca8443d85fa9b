/**
 * Moving the storage's data from PostgreSQL (PGlite, the embedded default before SQLite, or a
 * PostgreSQL server) into a new SQLite database: every row of every aggregate, read with the
 * PostgreSQL storage's own row mapping and written with the SQLite one, in one transaction.
 * @module
 */
import { DEFAULT_SCHEMA, quoteSchema } from '../sql/schema-name.js';
import {
  accessTokensTable,
  authorizationCodesTable,
  clientsTable,
  consentsTable,
  grantsTable,
  pendingAuthorizationsTable,
  refreshTokensTable,
  signingKeysTable,
  type Table,
} from '../sql/tables.js';
import type { SqliteDatabase } from './database.js';
import type { SqliteValue } from './driver.js';
import {
  accessTokenParams,
  clientParams,
  codeParams,
  consentParams,
  grantParams,
  keyParams,
  pendingParams,
  refreshTokenParams,
} from './rows.js';
import { migrateSqlite, TABLES } from './schema.js';
import { SQL } from './statements.js';

/**
 * A PostgreSQL connection to read from: a PGlite instance, a `pg.Pool` or `pg.Client` fit as
 * they are.
 *
 * @example
 * ```ts
 * import { PGlite } from '@electric-sql/pglite';
 * import type { PostgresSource } from 'portcullis/sqlite';
 *
 * const source: PostgresSource = await PGlite.create({ dataDir: './.data-pglite' });
 * ```
 * @see docs/storage.md, "Moving from PGlite"
 * @group Storage
 */
export interface PostgresSource {
  /** Runs one statement and returns its rows. */
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * How many records {@link importPostgresStorage} copied, by aggregate.
 *
 * @example
 * ```ts
 * import type { ImportReport } from 'portcullis/sqlite';
 *
 * const report: ImportReport = { clients: 3, pendingAuthorizations: 0, codes: 12, grants: 9, accessTokens: 40, refreshTokens: 31, consents: 4, signingKeys: 2 };
 * ```
 * @see docs/storage.md, "Moving from PGlite"
 * @group Storage
 */
export interface ImportReport {
  readonly clients: number;
  readonly pendingAuthorizations: number;
  readonly codes: number;
  readonly grants: number;
  readonly accessTokens: number;
  readonly refreshTokens: number;
  readonly consents: number;
  readonly signingKeys: number;
}

/** Reads every row of a query and maps each to its record, then to SQLite parameters. */
async function readAll<Rec, Row>(
  source: PostgresSource,
  text: string,
  table: Table<Rec, Row>,
  params: (record: Rec) => SqliteValue[],
): Promise<SqliteValue[][]> {
  const { rows } = await source.query(text);
  return rows.map((row) => params(table.record(row as Row)));
}

/**
 * Copies the storage's data (clients, pending authorizations, codes, grants with their tokens,
 * consents, signing keys) from a PostgreSQL storage schema (PGlite's or a server's) into a SQLite
 * database whose storage tables are empty, in one transaction: all of it or nothing. Tokens,
 * sessions of refresh-token chains and signing keys carry over, so clients keep working. The
 * source is only read.
 *
 * @param source - the PostgreSQL connection ({@link PostgresSource})
 * @param database - the SQLite database (from {@link openSqliteDatabase}); migrated if needed
 * @param options - `schema`: the source's storage schema (default `portcullis`)
 * @returns how many records were copied
 * @throws Error when the source has no storage schema, or the SQLite storage already holds data
 * @see docs/storage.md, "Moving from PGlite"
 * @example
 * ```ts
 * import { openEmbeddedDatabase } from 'portcullis/pglite';
 * import { importPostgresStorage, openSqliteDatabase } from 'portcullis/sqlite';
 *
 * const pglite = await openEmbeddedDatabase('./.data-pglite'); // the old data directory, moved aside
 * const db = await openSqliteDatabase({ dataDir: './.data' });
 * const report = await importPostgresStorage(pglite, db);
 * console.log(`copied ${report.grants} grants`);
 * await pglite.close();
 * db.close();
 * ```
 * @group Storage
 */
export async function importPostgresStorage(
  source: PostgresSource,
  database: SqliteDatabase,
  options: { readonly schema?: string } = {},
): Promise<ImportReport> {
  const s = quoteSchema(options.schema ?? DEFAULT_SCHEMA);
  const { rows: found } = await source.query('SELECT to_regclass($1) IS NOT NULL AS present', [
    `${s}.portcullis_migrations`,
  ]);
  if ((found[0] as { present?: unknown } | undefined)?.present !== true) {
    throw new Error(`the source database has no portcullis storage in schema ${s}`);
  }
  // Read everything first (the reads are asynchronous), then write in one synchronous transaction.
  // Schema version 1 allowed revoked placeholder grants without a client: they are not grants.
  const data = {
    clients: await readAll(source, `SELECT * FROM ${s}.clients`, clientsTable, clientParams),
    pending: await readAll(
      source,
      `SELECT * FROM ${s}.pending_authorizations`,
      pendingAuthorizationsTable,
      pendingParams,
    ),
    codes: await readAll(
      source,
      `SELECT * FROM ${s}.authorization_codes`,
      authorizationCodesTable,
      codeParams,
    ),
    grants: await readAll(
      source,
      `SELECT * FROM ${s}.grants WHERE client_id IS NOT NULL`,
      grantsTable,
      grantParams,
    ),
    access: await readAll(
      source,
      `SELECT t.* FROM ${s}.access_tokens t JOIN ${s}.grants g ON g.grant_id = t.grant_id WHERE g.client_id IS NOT NULL`,
      accessTokensTable,
      accessTokenParams,
    ),
    refresh: await readAll(
      source,
      `SELECT t.*, g.auth_time FROM ${s}.refresh_tokens t JOIN ${s}.grants g ON g.grant_id = t.grant_id
       WHERE g.client_id IS NOT NULL`,
      refreshTokensTable,
      refreshTokenParams,
    ),
    consents: await readAll(source, `SELECT * FROM ${s}.consents`, consentsTable, consentParams),
    keys: await readAll(
      source,
      `SELECT * FROM ${s}.signing_keys ORDER BY created_at, position`,
      signingKeysTable,
      keyParams,
    ),
  };
  migrateSqlite(database, Math.floor(Date.now() / 1000));
  return database.transaction(() => {
    for (const table of Object.values(TABLES)) {
      if (database.get(`SELECT 1 AS present FROM ${table} LIMIT 1`) !== undefined) {
        throw new Error(
          `the SQLite database ${database.file} already holds storage data (${table}): import only into a new one`,
        );
      }
    }
    const insert = (sql: string, rows: SqliteValue[][]) => {
      for (const row of rows) database.run(sql, ...row);
      return rows.length;
    };
    return {
      clients: insert(SQL.createClient, data.clients),
      pendingAuthorizations: insert(SQL.createPending, data.pending),
      codes: insert(SQL.createCode, data.codes),
      grants: insert(SQL.createGrant, data.grants),
      accessTokens: insert(SQL.createAccessToken, data.access),
      refreshTokens: insert(SQL.createRefreshToken, data.refresh),
      consents: insert(SQL.saveConsent, data.consents),
      signingKeys: insert(SQL.addKey, data.keys),
    };
  });
}
