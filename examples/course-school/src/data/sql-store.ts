/**
 * The {@link DataStore} over SQL: PostgreSQL through `pg`, or the embedded PGlite. Every statement
 * is a single query, so it works on a pool without transactions; inserts of records and meta are
 * idempotent (`ON CONFLICT DO NOTHING`), and seed.ts tolerates a user another instance created
 * meanwhile, which makes seeding safe when two instances start together.
 * @module
 */
import { SCHEMA, type SqlClient } from './sql.js';
import {
  type DataStore,
  decodeCursor,
  encodeCursor,
  type RecordKind,
  type SessionRecord,
  type StoredRecord,
  type UserRecord,
} from './store.js';

type Row = Record<string, unknown>;

const str = (row: Row, column: string): string => String(row[column]);
const num = (row: Row, column: string): number => Number(row[column]);

function toUser(row: Row): UserRecord {
  return {
    id: str(row, 'id'),
    email: str(row, 'email'),
    name: str(row, 'name'),
    role: row.role === 'owner' ? 'owner' : 'student',
    passwordHash: str(row, 'password_hash'),
    createdAt: num(row, 'created_at'),
  };
}

function toSession(row: Row): SessionRecord {
  return {
    idHash: str(row, 'id_hash'),
    userId: str(row, 'user_id'),
    authTime: num(row, 'auth_time'),
    csrfToken: str(row, 'csrf_token'),
    expiresAt: num(row, 'expires_at'),
  };
}

function toRecord(row: Row): StoredRecord {
  const data = typeof row.data === 'string' ? (JSON.parse(row.data) as Row) : (row.data as Row);
  return {
    kind: str(row, 'kind') as RecordKind,
    id: str(row, 'id'),
    parentId: row.parent_id === null ? null : str(row, 'parent_id'),
    ownerId: row.owner_id === null ? null : str(row, 'owner_id'),
    isPublic: row.is_public === true,
    data,
    createdAt: num(row, 'created_at'),
    updatedAt: num(row, 'updated_at'),
  };
}

const RECORD_COLUMNS =
  'seq::text AS seq, kind, id, parent_id, owner_id, is_public, data, created_at, updated_at';

/**
 * Postgres error codes of a lost `CREATE ... IF NOT EXISTS` race between two starting instances: a
 * unique violation in the catalog, a relation or a type (each table's row type) that already exists.
 * The error comes once the winner has committed, so the next statement sees its object.
 */
const CREATE_RACE = new Set(['23505', '42P07', '42710']);

/**
 * Creates a store over a SQL client. The caller owns the client and closes it.
 *
 * @param sql - a `pg.Pool`, `pg.Client` or PGlite instance
 */
export function createSqlDataStore(sql: SqlClient): DataStore {
  const rows = async (text: string, params: unknown[] = []): Promise<Row[]> =>
    (await sql.query(text, params)).rows as Row[];

  return {
    async migrate() {
      for (const statement of SCHEMA) {
        try {
          await sql.query(statement);
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          if (typeof code !== 'string' || !CREATE_RACE.has(code)) throw error;
        }
      }
    },

    async createUser(user) {
      await sql.query(
        'INSERT INTO cs_users (id, email, name, role, password_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
        [user.id, user.email, user.name, user.role, user.passwordHash, user.createdAt],
      );
    },
    async getUser(id) {
      const [row] = await rows('SELECT * FROM cs_users WHERE id = $1', [id]);
      return row === undefined ? null : toUser(row);
    },
    async getUserByEmail(email) {
      const [row] = await rows('SELECT * FROM cs_users WHERE email = $1', [email.toLowerCase()]);
      return row === undefined ? null : toUser(row);
    },
    async renameUser(id, name) {
      const [row] = await rows('UPDATE cs_users SET name = $2 WHERE id = $1 RETURNING *', [id, name]);
      return row === undefined ? null : toUser(row);
    },

    async createSession(session) {
      await sql.query(
        'INSERT INTO cs_sessions (id_hash, user_id, auth_time, csrf_token, expires_at) VALUES ($1, $2, $3, $4, $5)',
        [session.idHash, session.userId, session.authTime, session.csrfToken, session.expiresAt],
      );
    },
    async getSession(idHash, now) {
      const [row] = await rows('SELECT * FROM cs_sessions WHERE id_hash = $1 AND expires_at > $2', [
        idHash,
        now,
      ]);
      return row === undefined ? null : toSession(row);
    },
    async deleteSession(idHash) {
      await sql.query('DELETE FROM cs_sessions WHERE id_hash = $1', [idHash]);
    },
    async deleteExpiredSessions(now) {
      return (await rows('DELETE FROM cs_sessions WHERE expires_at <= $1 RETURNING id_hash', [now])).length;
    },

    async insertRecord(record, now) {
      const inserted = await rows(
        `INSERT INTO cs_records (kind, id, parent_id, owner_id, is_public, search_text, data, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $8)
         ON CONFLICT (kind, id) DO NOTHING RETURNING id`,
        [
          record.kind,
          record.id,
          record.parentId ?? null,
          record.ownerId ?? null,
          record.isPublic,
          (record.searchText ?? '').toLowerCase(),
          JSON.stringify(record.data),
          now,
        ],
      );
      return inserted.length === 1;
    },
    async getRecord(kind, id) {
      const [row] = await rows(`SELECT ${RECORD_COLUMNS} FROM cs_records WHERE kind = $1 AND id = $2`, [
        kind,
        id,
      ]);
      return row === undefined ? null : toRecord(row);
    },
    async listRecords(kind, query) {
      const where = ['kind = $1'];
      const params: unknown[] = [kind];
      const add = (clause: string, value: unknown) => {
        params.push(value);
        where.push(clause.replace('?', `$${params.length}`));
      };
      if (query.after !== undefined) add('seq > ?::bigint', decodeCursor(query.after) ?? '0');
      if (query.parentId !== undefined) add('parent_id = ?', query.parentId);
      if (query.ownerId !== undefined) add('owner_id = ?', query.ownerId);
      if (query.publicOnly === true) where.push('is_public');
      if (query.search !== undefined) {
        // The search is a literal substring: LIKE's wildcards in it are escaped.
        add("search_text LIKE ? ESCAPE '\\'", `%${query.search.toLowerCase().replace(/[\\%_]/g, '\\$&')}%`);
      }
      params.push(query.limit + 1);
      const found = await rows(
        `SELECT ${RECORD_COLUMNS} FROM cs_records WHERE ${where.join(' AND ')} ORDER BY seq LIMIT $${params.length}`,
        params,
      );
      const more = found.length > query.limit;
      const page = more ? found.slice(0, query.limit) : found;
      return {
        items: page.map(toRecord),
        next: more ? encodeCursor(str(page[page.length - 1]!, 'seq')) : null,
      };
    },
    async countRecords(kind, filter = {}) {
      const [row] = await rows(
        `SELECT count(*)::int AS n FROM cs_records
         WHERE kind = $1 AND ($2::text IS NULL OR owner_id = $2) AND ($3::text IS NULL OR parent_id = $3)`,
        [kind, filter.ownerId ?? null, filter.parentId ?? null],
      );
      return row === undefined ? 0 : num(row, 'n');
    },
    async updateRecord(kind, id, change, now) {
      const [row] = await rows(
        `UPDATE cs_records SET is_public = $3, data = $4::jsonb, updated_at = $5,
           search_text = COALESCE($6, search_text)
         WHERE kind = $1 AND id = $2 RETURNING ${RECORD_COLUMNS}`,
        [
          kind,
          id,
          change.isPublic,
          JSON.stringify(change.data),
          now,
          change.searchText?.toLowerCase() ?? null,
        ],
      );
      return row === undefined ? null : toRecord(row);
    },
    async deleteRecord(kind, id) {
      const deleted = await rows('DELETE FROM cs_records WHERE kind = $1 AND id = $2 RETURNING id', [
        kind,
        id,
      ]);
      if (deleted.length === 0) return false;
      await sql.query('DELETE FROM cs_records WHERE parent_id = $1', [id]);
      return true;
    },

    async getMeta(key) {
      const [row] = await rows('SELECT value FROM cs_meta WHERE key = $1', [key]);
      return row === undefined ? null : str(row, 'value');
    },
    async putMetaIfAbsent(key, value) {
      await sql.query('INSERT INTO cs_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [
        key,
        value,
      ]);
      const [row] = await rows('SELECT value FROM cs_meta WHERE key = $1', [key]);
      return row === undefined ? value : str(row, 'value');
    },

    async close() {},
  };
}
