/**
 * The {@link DataStore} on SQLite, the default: the server's own tables (`cs_*`) live in the same
 * file as the library's (`portcullis_*`), on the database handle the library's storage uses
 * (`sqliteStorage({ database })`). Several server processes may share the file: every write is one
 * statement or one `BEGIN IMMEDIATE` transaction, inserts of records and meta are idempotent, and
 * seed.ts tolerates a user another instance created meanwhile.
 * @module
 */
import type { SqliteDatabase, SqliteValue } from 'portcullis/sqlite';
import {
  type DataStore,
  decodeCursor,
  encodeCursor,
  type RecordKind,
  type SessionRecord,
  type StoredRecord,
  type UserRecord,
} from './store.js';

/**
 * The tables, created when absent. Times are epoch milliseconds (`REAL`, as `double precision` in
 * the SQL store); `seq` is the creation order the cursors of listings follow (AUTOINCREMENT: never
 * reused, even after the newest record is deleted).
 */
const SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS cs_users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('owner', 'student')),
    password_hash TEXT NOT NULL,
    created_at REAL NOT NULL
  ) STRICT`,
  `CREATE TABLE IF NOT EXISTS cs_sessions (
    id_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES cs_users (id) ON DELETE CASCADE,
    auth_time REAL NOT NULL,
    csrf_token TEXT NOT NULL,
    expires_at REAL NOT NULL
  ) STRICT`,
  'CREATE INDEX IF NOT EXISTS cs_sessions_expires_at ON cs_sessions (expires_at)',
  'CREATE INDEX IF NOT EXISTS cs_sessions_user_id ON cs_sessions (user_id)',
  `CREATE TABLE IF NOT EXISTS cs_records (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    parent_id TEXT,
    owner_id TEXT,
    is_public INTEGER NOT NULL,
    search_text TEXT NOT NULL DEFAULT '',
    data TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    UNIQUE (kind, id)
  ) STRICT`,
  'CREATE INDEX IF NOT EXISTS cs_records_parent ON cs_records (parent_id)',
  'CREATE INDEX IF NOT EXISTS cs_records_owner ON cs_records (kind, owner_id)',
  `CREATE TABLE IF NOT EXISTS cs_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) STRICT`,
];

interface UserRow {
  id: string;
  email: string;
  name: string;
  role: string;
  password_hash: string;
  created_at: number;
}

interface SessionRow {
  id_hash: string;
  user_id: string;
  auth_time: number;
  csrf_token: string;
  expires_at: number;
}

interface RecordRow {
  seq: number;
  kind: string;
  id: string;
  parent_id: string | null;
  owner_id: string | null;
  is_public: number;
  data: string;
  created_at: number;
  updated_at: number;
}

const toUser = (row: UserRow): UserRecord => ({
  id: row.id,
  email: row.email,
  name: row.name,
  role: row.role === 'owner' ? 'owner' : 'student',
  passwordHash: row.password_hash,
  createdAt: row.created_at,
});

const toSession = (row: SessionRow): SessionRecord => ({
  idHash: row.id_hash,
  userId: row.user_id,
  authTime: row.auth_time,
  csrfToken: row.csrf_token,
  expiresAt: row.expires_at,
});

const toRecord = (row: RecordRow): StoredRecord => ({
  kind: row.kind as RecordKind,
  id: row.id,
  parentId: row.parent_id,
  ownerId: row.owner_id,
  isPublic: row.is_public === 1,
  data: JSON.parse(row.data) as Record<string, unknown>,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const RECORD_COLUMNS = 'seq, kind, id, parent_id, owner_id, is_public, data, created_at, updated_at';

/**
 * Creates the store on an open SQLite database. The caller owns the database and closes it.
 *
 * @param db - the database the library's storage uses (`openSqliteDatabase` from `portcullis/sqlite`)
 */
export function createSqliteDataStore(db: SqliteDatabase): DataStore {
  return {
    async migrate() {
      // One write transaction: two instances starting on one file create the tables once.
      db.transaction(() => {
        for (const statement of SCHEMA) db.exec(statement);
      });
    },

    async createUser(user) {
      db.run(
        'INSERT INTO cs_users (id, email, name, role, password_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        user.id,
        user.email,
        user.name,
        user.role,
        user.passwordHash,
        user.createdAt,
      );
    },
    async getUser(id) {
      const row = db.get<UserRow>('SELECT * FROM cs_users WHERE id = ?', id);
      return row === undefined ? null : toUser(row);
    },
    async getUserByEmail(email) {
      const row = db.get<UserRow>('SELECT * FROM cs_users WHERE email = ?', email.toLowerCase());
      return row === undefined ? null : toUser(row);
    },
    async renameUser(id, name) {
      const row = db.get<UserRow>('UPDATE cs_users SET name = ? WHERE id = ? RETURNING *', name, id);
      return row === undefined ? null : toUser(row);
    },

    async createSession(session) {
      db.run(
        'INSERT INTO cs_sessions (id_hash, user_id, auth_time, csrf_token, expires_at) VALUES (?, ?, ?, ?, ?)',
        session.idHash,
        session.userId,
        session.authTime,
        session.csrfToken,
        session.expiresAt,
      );
    },
    async getSession(idHash, now) {
      const row = db.get<SessionRow>(
        'SELECT * FROM cs_sessions WHERE id_hash = ? AND expires_at > ?',
        idHash,
        now,
      );
      return row === undefined ? null : toSession(row);
    },
    async deleteSession(idHash) {
      db.run('DELETE FROM cs_sessions WHERE id_hash = ?', idHash);
    },
    async deleteExpiredSessions(now) {
      return Number(db.run('DELETE FROM cs_sessions WHERE expires_at <= ?', now).changes);
    },

    async insertRecord(record, now) {
      const { changes } = db.run(
        `INSERT INTO cs_records (kind, id, parent_id, owner_id, is_public, search_text, data, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (kind, id) DO NOTHING`,
        record.kind,
        record.id,
        record.parentId ?? null,
        record.ownerId ?? null,
        record.isPublic ? 1 : 0,
        (record.searchText ?? '').toLowerCase(),
        JSON.stringify(record.data),
        now,
        now,
      );
      return Number(changes) === 1;
    },
    async getRecord(kind, id) {
      const row = db.get<RecordRow>(
        `SELECT ${RECORD_COLUMNS} FROM cs_records WHERE kind = ? AND id = ?`,
        kind,
        id,
      );
      return row === undefined ? null : toRecord(row);
    },
    async listRecords(kind, query) {
      const where = ['kind = ?'];
      const params: SqliteValue[] = [kind];
      if (query.after !== undefined) {
        where.push('seq > ?');
        params.push(Number(decodeCursor(query.after) ?? '0'));
      }
      if (query.parentId !== undefined) {
        where.push('parent_id = ?');
        params.push(query.parentId);
      }
      if (query.ownerId !== undefined) {
        where.push('owner_id = ?');
        params.push(query.ownerId);
      }
      if (query.publicOnly === true) where.push('is_public = 1');
      if (query.search !== undefined) {
        // The search is a literal substring: LIKE's wildcards in it are escaped.
        where.push("search_text LIKE ? ESCAPE '\\'");
        params.push(`%${query.search.toLowerCase().replace(/[\\%_]/g, '\\$&')}%`);
      }
      params.push(query.limit + 1);
      const found = db.all<RecordRow>(
        `SELECT ${RECORD_COLUMNS} FROM cs_records WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ?`,
        ...params,
      );
      const more = found.length > query.limit;
      const page = more ? found.slice(0, query.limit) : found;
      return {
        items: page.map(toRecord),
        next: more ? encodeCursor(String(page[page.length - 1]!.seq)) : null,
      };
    },
    async countRecords(kind, filter = {}) {
      const owner = filter.ownerId ?? null;
      const parent = filter.parentId ?? null;
      const row = db.get<{ n: number }>(
        `SELECT count(*) AS n FROM cs_records
         WHERE kind = ? AND (? IS NULL OR owner_id = ?) AND (? IS NULL OR parent_id = ?)`,
        kind,
        owner,
        owner,
        parent,
        parent,
      );
      return row?.n ?? 0;
    },
    async updateRecord(kind, id, change, now) {
      const row = db.get<RecordRow>(
        `UPDATE cs_records SET is_public = ?, data = ?, updated_at = ?, search_text = coalesce(?, search_text)
         WHERE kind = ? AND id = ? RETURNING ${RECORD_COLUMNS}`,
        change.isPublic ? 1 : 0,
        JSON.stringify(change.data),
        now,
        change.searchText?.toLowerCase() ?? null,
        kind,
        id,
      );
      return row === undefined ? null : toRecord(row);
    },
    async deleteRecord(kind, id) {
      return db.transaction(() => {
        const { changes } = db.run('DELETE FROM cs_records WHERE kind = ? AND id = ?', kind, id);
        if (Number(changes) === 0) return false;
        db.run('DELETE FROM cs_records WHERE parent_id = ?', id);
        return true;
      });
    },

    async getMeta(key) {
      return db.get<{ value: string }>('SELECT value FROM cs_meta WHERE key = ?', key)?.value ?? null;
    },
    async putMetaIfAbsent(key, value) {
      db.run('INSERT INTO cs_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING', key, value);
      return db.get<{ value: string }>('SELECT value FROM cs_meta WHERE key = ?', key)?.value ?? value;
    },

    async close() {},
  };
}
