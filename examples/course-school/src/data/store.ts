/**
 * The contract of the reference server's own data: users, login sessions, and the business
 * records of every resource family. Three implementations pass the same test suite:
 * `sql-store.ts` (PostgreSQL or PGlite, in the database the library's storage uses),
 * `sqlite-store.ts` (the SQLite file the library's storage uses) and `memory-store.ts` (tests and
 * benchmarks).
 *
 * Conventions: times are epoch milliseconds; lookups that find nothing return `null`; methods
 * throw only on infrastructure failure; records are plain values the caller must not mutate.
 * @module
 */

/** Who a user is on this platform. The owner runs the school; students learn in it. */
export type Role = 'owner' | 'student';

/** A person who can sign in. */
export interface UserRecord {
  /** Stable, never reassigned: the `sub` of the tokens issued for this user. */
  readonly id: string;
  /** Lower-cased. */
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  /** `scrypt$N$r$p$salt$hash`, see `accounts/passwords.ts`. */
  readonly passwordHash: string;
  readonly createdAt: number;
}

/** A login session. The cookie carries the id; only its SHA-256 is stored. */
export interface SessionRecord {
  readonly idHash: string;
  readonly userId: string;
  /** When the user typed their password (OIDC `auth_time`, epoch ms). */
  readonly authTime: number;
  /** Anti-CSRF token of the forms this session posts (logout, revoke). */
  readonly csrfToken: string;
  readonly expiresAt: number;
}

/** The kinds of business records; each resource family stores one or more. */
export const RECORD_KINDS = [
  'school',
  'appearance',
  'course',
  'section',
  'lesson',
  'student',
  'member',
  'order',
  'event',
  'membership_plan',
  'coupon',
  'post',
  'comment',
  'subscription',
  'digital_product',
  'lecturer',
  'object',
  'form',
  'page',
] as const;

/** One kind of business record. */
export type RecordKind = (typeof RECORD_KINDS)[number];

/** A business record. `data` holds the family's fields, validated by the family before storing. */
export interface StoredRecord {
  readonly kind: RecordKind;
  readonly id: string;
  /** The record it belongs to (a lesson's course, a comment's post), or null. */
  readonly parentId: string | null;
  /** The user it belongs to (an order's buyer, an upload's author), or null. */
  readonly ownerId: string | null;
  /** True when anonymous visitors may read it (published course, public plan or page). */
  readonly isPublic: boolean;
  readonly data: Readonly<Record<string, unknown>>;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** What a new record needs; the store assigns times and, when `id` is absent, nothing else. */
export interface NewRecord {
  readonly kind: RecordKind;
  readonly id: string;
  readonly parentId?: string | null;
  readonly ownerId?: string | null;
  readonly isPublic: boolean;
  /** Lower-cased text a search matches against (title, summary...). */
  readonly searchText?: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** A change to a record: the whole new `data` (already merged by the caller) and its derived columns. */
export interface RecordChange {
  readonly isPublic: boolean;
  readonly searchText?: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** Filters and the page of a listing. Records come in creation order. */
export interface RecordQuery {
  readonly parentId?: string;
  readonly ownerId?: string;
  readonly publicOnly?: boolean;
  /** Case-insensitive substring of the record's search text. */
  readonly search?: string;
  /** Opaque cursor from a previous page's `next`. */
  readonly after?: string;
  /** 1..100. */
  readonly limit: number;
}

/** One page of records. */
export interface RecordPage {
  readonly items: readonly StoredRecord[];
  /** Cursor of the next page, or null on the last one. */
  readonly next: string | null;
}

/** The reference server's data. */
export interface DataStore {
  /** Creates the tables when they do not exist. Idempotent; safe to call at every start. */
  migrate(): Promise<void>;

  createUser(user: UserRecord): Promise<void>;
  getUser(id: string): Promise<UserRecord | null>;
  /** `email` is compared lower-cased. */
  getUserByEmail(email: string): Promise<UserRecord | null>;
  /** Sets the display name; returns the updated user or null. */
  renameUser(id: string, name: string): Promise<UserRecord | null>;

  createSession(session: SessionRecord): Promise<void>;
  /** Null when absent or expired at `now`. */
  getSession(idHash: string, now: number): Promise<SessionRecord | null>;
  deleteSession(idHash: string): Promise<void>;
  /** Deletes sessions expired at `now`; returns how many. */
  deleteExpiredSessions(now: number): Promise<number>;

  /** Inserts a record; false when a record of that kind and id exists (nothing changes then). */
  insertRecord(record: NewRecord, now: number): Promise<boolean>;
  getRecord(kind: RecordKind, id: string): Promise<StoredRecord | null>;
  listRecords(kind: RecordKind, query: RecordQuery): Promise<RecordPage>;
  /** Counts records of a kind, optionally of one owner or parent. */
  countRecords(kind: RecordKind, filter?: { ownerId?: string; parentId?: string }): Promise<number>;
  /** Replaces `data`; null when there is no such record. */
  updateRecord(kind: RecordKind, id: string, change: RecordChange, now: number): Promise<StoredRecord | null>;
  /** Deletes a record and the records whose parent it is; false when there was none. */
  deleteRecord(kind: RecordKind, id: string): Promise<boolean>;

  /** A value kept across restarts (the session-signing secret, the seed marker). */
  getMeta(key: string): Promise<string | null>;
  /** Stores `value` unless the key exists; returns the value now stored (first writer wins). */
  putMetaIfAbsent(key: string, value: string): Promise<string>;

  close(): Promise<void>;
}

/** Cursors are the position of the last record of a page, opaque to clients. */
export function encodeCursor(position: string): string {
  return Buffer.from(`p:${position}`, 'utf8').toString('base64url');
}

/** The position in a cursor, or null when the cursor was not made by {@link encodeCursor}. */
export function decodeCursor(cursor: string): string | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith('p:')) return null;
  const position = text.slice(2);
  return /^[0-9]{1,18}$/.test(position) ? position : null;
}
