/**
 * Moving a PGlite data directory (the embedded default before SQLite) into the SQLite default:
 * started with `PGLITE_IMPORT_DIR=<old directory>`, the server copies the library's records
 * (`importPostgresStorage` from `portcullis/sqlite`) and its own tables (`cs_*`, rows as they are,
 * creation order and times kept) into a new SQLite database before it serves anything. The PGlite
 * directory is only read. Once done, a mark in `cs_meta` makes later starts skip the import.
 * @module
 */
import type { SqliteDatabase } from 'portcullis/sqlite';

/** The `cs_meta` key that records the import (its value: the source directory and the time). */
export const IMPORTED_MARK = 'imported_from_pglite';

type Row = Record<string, unknown>;

const text = (value: unknown): string => String(value);
const nullable = (value: unknown): string | null => (value === null ? null : String(value));

/**
 * Copies everything from the PGlite database in `pgliteDir` into `db`, whose tables must be empty
 * (the DataStore migrated, the library's storage not used yet).
 *
 * @param pgliteDir - the old data directory
 * @param db - the new SQLite database
 * @returns a one-line summary for the start-up log
 * @throws Error when the directory holds no PGlite database, or `db` already holds data
 */
export async function importPgliteDirectory(pgliteDir: string, db: SqliteDatabase): Promise<string> {
  const { existsSync } = await import('node:fs');
  const { join } = await import('node:path');
  if (!existsSync(join(pgliteDir, 'PG_VERSION'))) {
    throw new Error(`PGLITE_IMPORT_DIR ${pgliteDir} holds no PGlite database (no PG_VERSION file)`);
  }
  const { openEmbeddedDatabase } = await import('portcullis/pglite');
  const { importPostgresStorage } = await import('portcullis/sqlite');
  const pglite = await openEmbeddedDatabase(pgliteDir);
  try {
    const rows = async (sql: string): Promise<Row[]> => (await pglite.query<Row>(sql)).rows;
    const users = await rows('SELECT * FROM cs_users ORDER BY created_at');
    const sessions = await rows('SELECT * FROM cs_sessions');
    const records = await rows('SELECT *, seq::text AS seq_text FROM cs_records ORDER BY cs_records.seq');
    const meta = await rows('SELECT * FROM cs_meta');
    const library = await importPostgresStorage(pglite, db);
    db.transaction(() => {
      if (db.get('SELECT 1 AS present FROM cs_users LIMIT 1') !== undefined) {
        throw new Error(`${db.file} already holds users: import only into a new database`);
      }
      for (const u of users) {
        db.run(
          'INSERT INTO cs_users (id, email, name, role, password_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)',
          text(u.id),
          text(u.email),
          text(u.name),
          text(u.role),
          text(u.password_hash),
          Number(u.created_at),
        );
      }
      for (const s of sessions) {
        db.run(
          'INSERT INTO cs_sessions (id_hash, user_id, auth_time, csrf_token, expires_at) VALUES (?, ?, ?, ?, ?)',
          text(s.id_hash),
          text(s.user_id),
          Number(s.auth_time),
          text(s.csrf_token),
          Number(s.expires_at),
        );
      }
      for (const r of records) {
        db.run(
          `INSERT INTO cs_records (seq, kind, id, parent_id, owner_id, is_public, search_text, data, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          Number(r.seq_text),
          text(r.kind),
          text(r.id),
          nullable(r.parent_id),
          nullable(r.owner_id),
          r.is_public === true ? 1 : 0,
          text(r.search_text),
          typeof r.data === 'string' ? r.data : JSON.stringify(r.data),
          Number(r.created_at),
          Number(r.updated_at),
        );
      }
      for (const m of meta) {
        db.run(
          'INSERT INTO cs_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING',
          text(m.key),
          text(m.value),
        );
      }
      db.run(
        'INSERT INTO cs_meta (key, value) VALUES (?, ?)',
        IMPORTED_MARK,
        `${pgliteDir} at ${new Date().toISOString()}`,
      );
    });
    return (
      `imported from PGlite ${pgliteDir}: ${library.clients} clients, ${library.grants} grants, ` +
      `${library.accessTokens + library.refreshTokens} tokens, ${library.signingKeys} signing keys, ` +
      `${users.length} users, ${records.length} records`
    );
  } finally {
    await pglite.close();
  }
}
