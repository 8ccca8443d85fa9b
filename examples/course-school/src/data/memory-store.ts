/**
 * The in-memory {@link DataStore} (`STORAGE=memory`): for tests and benchmarks. Nothing survives
 * a restart. Behaviour matches `sql-store.ts`; both run `test/course-school/data-store.test.ts`.
 * @module
 */
import {
  type DataStore,
  decodeCursor,
  encodeCursor,
  type RecordKind,
  type SessionRecord,
  type StoredRecord,
  type UserRecord,
} from './store.js';

interface Row {
  record: StoredRecord;
  searchText: string;
  seq: number;
}

/** Creates an empty in-memory store. */
export function createMemoryDataStore(): DataStore {
  const users = new Map<string, UserRecord>();
  const sessions = new Map<string, SessionRecord>();
  const records = new Map<RecordKind, Map<string, Row>>();
  const meta = new Map<string, string>();
  let seq = 0;

  const table = (kind: RecordKind): Map<string, Row> => {
    let rows = records.get(kind);
    if (rows === undefined) {
      rows = new Map();
      records.set(kind, rows);
    }
    return rows;
  };

  return {
    async migrate() {},

    async createUser(user) {
      if ([...users.values()].some((u) => u.email === user.email)) {
        throw new Error(`a user with email ${user.email} exists`);
      }
      users.set(user.id, user);
    },
    async getUser(id) {
      return users.get(id) ?? null;
    },
    async getUserByEmail(email) {
      const wanted = email.toLowerCase();
      for (const user of users.values()) if (user.email === wanted) return user;
      return null;
    },
    async renameUser(id, name) {
      const user = users.get(id);
      if (user === undefined) return null;
      const renamed = { ...user, name };
      users.set(id, renamed);
      return renamed;
    },

    async createSession(session) {
      sessions.set(session.idHash, session);
    },
    async getSession(idHash, now) {
      const session = sessions.get(idHash);
      return session === undefined || session.expiresAt <= now ? null : session;
    },
    async deleteSession(idHash) {
      sessions.delete(idHash);
    },
    async deleteExpiredSessions(now) {
      let deleted = 0;
      for (const [key, session] of sessions) {
        if (session.expiresAt <= now) {
          sessions.delete(key);
          deleted++;
        }
      }
      return deleted;
    },

    async insertRecord(input, now) {
      const rows = table(input.kind);
      if (rows.has(input.id)) return false;
      seq += 1;
      rows.set(input.id, {
        seq,
        searchText: (input.searchText ?? '').toLowerCase(),
        record: {
          kind: input.kind,
          id: input.id,
          parentId: input.parentId ?? null,
          ownerId: input.ownerId ?? null,
          isPublic: input.isPublic,
          data: structuredClone(input.data),
          createdAt: now,
          updatedAt: now,
        },
      });
      return true;
    },
    async getRecord(kind, id) {
      return table(kind).get(id)?.record ?? null;
    },
    async listRecords(kind, query) {
      const after = query.after === undefined ? 0 : Number(decodeCursor(query.after) ?? Number.NaN);
      const search = query.search?.toLowerCase();
      const items: Row[] = [];
      // Map iteration follows insertion order, which is `seq` order.
      for (const row of table(kind).values()) {
        if (!(row.seq > after)) continue;
        const r = row.record;
        if (query.parentId !== undefined && r.parentId !== query.parentId) continue;
        if (query.ownerId !== undefined && r.ownerId !== query.ownerId) continue;
        if (query.publicOnly === true && !r.isPublic) continue;
        if (search !== undefined && !row.searchText.includes(search)) continue;
        items.push(row);
        if (items.length > query.limit) break;
      }
      const more = items.length > query.limit;
      const page = more ? items.slice(0, query.limit) : items;
      return {
        items: page.map((row) => row.record),
        next: more ? encodeCursor(String(page[page.length - 1]!.seq)) : null,
      };
    },
    async countRecords(kind, filter = {}) {
      let count = 0;
      for (const { record } of table(kind).values()) {
        if (filter.ownerId !== undefined && record.ownerId !== filter.ownerId) continue;
        if (filter.parentId !== undefined && record.parentId !== filter.parentId) continue;
        count++;
      }
      return count;
    },
    async updateRecord(kind, id, change, now) {
      const row = table(kind).get(id);
      if (row === undefined) return null;
      row.record = {
        ...row.record,
        isPublic: change.isPublic,
        data: structuredClone(change.data),
        updatedAt: now,
      };
      if (change.searchText !== undefined) row.searchText = change.searchText.toLowerCase();
      return row.record;
    },
    async deleteRecord(kind, id) {
      if (!table(kind).delete(id)) return false;
      for (const rows of records.values()) {
        for (const [childId, row] of rows) if (row.record.parentId === id) rows.delete(childId);
      }
      return true;
    },

    async getMeta(key) {
      return meta.get(key) ?? null;
    },
    async putMetaIfAbsent(key, value) {
      const existing = meta.get(key);
      if (existing !== undefined) return existing;
      meta.set(key, value);
      return value;
    },

    async close() {},
  };
}
