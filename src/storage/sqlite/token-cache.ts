/**
 * Access-token records a SQLite connection has read, reused for as long as nothing can have changed
 * them. A resource server checks a token on every API call and UserInfo on every call, always the
 * same few tokens; each check was a query (about a fifth of a UserInfo request's CPU on the default
 * storage). A record is what `getAccessToken` returns while the token is active; it stops being
 * true only when the token or its grant is revoked, or when it expires:
 *
 * - expiry is checked on every use, against the record's own `expiresAt`, as the query does;
 * - a revocation through this connection (`revokeAccessToken`, `grants.revoke`, `clients.delete`)
 *   empties the cache in the very step that writes it, before its commit;
 * - a commit by any other connection (another process, another storage on the same file) changes
 *   SQLite's `PRAGMA data_version`, read before every use: then the cache is emptied, and the token
 *   read again. The storage runs that read inside its turn's read transaction (`read-batch.ts`),
 *   so under load a check costs one statement, not a lock of the file's shared memory.
 *
 * Nothing is remembered about tokens that were not found. The cache belongs to the connection, not
 * to a storage object, so storages sharing one database share it too.
 * @module
 */
import type { AccessTokenRecord } from '../types.js';
import type { SqliteDatabase } from './database.js';

/** Records kept at most per connection (a few hundred bytes each); the oldest goes first. */
export const ACCESS_TOKEN_CACHE_MAX_ENTRIES = 10_000;

const DATA_VERSION = 'PRAGMA data_version';

/** The records of one connection, valid as of the `data_version` it last read. */
export class AccessTokenCache {
  readonly #records = new Map<string, AccessTokenRecord>();
  readonly #maxEntries: number;
  #version: unknown;

  constructor(maxEntries = ACCESS_TOKEN_CACHE_MAX_ENTRIES) {
    this.#maxEntries = maxEntries;
  }

  /**
   * The active token `tokenHash` names at `now`, from the cache or, on a miss, from `read` (whose
   * result is kept when found). Runs synchronously, inside one step of the storage: no other
   * statement of this connection can come between the version check, the read and the store.
   */
  get(
    db: SqliteDatabase,
    tokenHash: string,
    now: number,
    read: () => AccessTokenRecord | null,
  ): AccessTokenRecord | null {
    const version = db.get<{ data_version: unknown }>(DATA_VERSION)?.data_version;
    if (version !== this.#version) {
      // Another connection committed since the last look: anything may have been revoked.
      this.#records.clear();
      this.#version = version;
    }
    const kept = this.#records.get(tokenHash);
    if (kept !== undefined) {
      if (kept.expiresAt > now) return kept;
      this.#records.delete(tokenHash);
      return null;
    }
    const record = read();
    if (record === null) return null;
    if (this.#records.size >= this.#maxEntries) {
      this.#records.delete(this.#records.keys().next().value as string);
    }
    const frozen = Object.freeze({
      ...record,
      scope: Object.freeze([...record.scope]),
      audience: Object.freeze([...record.audience]),
    });
    this.#records.set(tokenHash, frozen);
    return frozen;
  }

  /** Forgets every record: called by each write that can revoke a token. */
  clear(): void {
    this.#records.clear();
  }

  /** How many records are kept (for tests). */
  get size(): number {
    return this.#records.size;
  }
}

const caches = new WeakMap<SqliteDatabase, AccessTokenCache>();

/** The cache of `db`'s connection, shared by every storage over it. */
export function accessTokenCacheOf(db: SqliteDatabase): AccessTokenCache {
  let cache = caches.get(db);
  if (cache === undefined) {
    cache = new AccessTokenCache();
    caches.set(db, cache);
  }
  return cache;
}
