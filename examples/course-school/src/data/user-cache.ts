/**
 * A {@link DataStore} that remembers user records for a few seconds. One authorization reads its
 * user three times (the session, the scope decision on the consent page, again when Allow is
 * posted), an agent's UserInfo calls read it for the claims and every API call for the role check:
 * on PostgreSQL each read is a round trip. Users change rarely (a rename; roles and ids never
 * change at run time here), so each instance reuses a record for {@link USER_CACHE_MS}.
 *
 * A rename through this instance is seen at once (the entry is replaced); one through another
 * instance sharing the database is seen within the window, as a logout is by the session cache.
 * @module
 */
import type { DataStore, UserRecord } from './store.js';

/** How long a user record is reused, in milliseconds: the window of the session cache. */
export const USER_CACHE_MS = 5000;

/** Users remembered at most; the oldest goes first. */
const USER_CACHE_MAX_ENTRIES = 10_000;

/**
 * Wraps `data` so that `getUser` answers from memory within `ttlMs` of the last read.
 *
 * @param data - the store (its other methods pass through unchanged)
 * @param ttlMs - how long a record is reused; 0 turns the cache off
 * @param now - the clock, in epoch milliseconds
 */
export function withUserCache(data: DataStore, ttlMs = USER_CACHE_MS, now = Date.now): DataStore {
  if (ttlMs <= 0) return data;
  const users = new Map<string, { readonly user: UserRecord; readonly until: number }>();
  // Bumped when a rename starts and when it ends: a read that overlapped one does not store what
  // it read, which may be the old name.
  let renames = 0;
  const remember = (user: UserRecord) => {
    users.delete(user.id);
    if (users.size >= USER_CACHE_MAX_ENTRIES) users.delete(users.keys().next().value as string);
    users.set(user.id, { user, until: now() + ttlMs });
  };
  return {
    ...data,
    async getUser(id) {
      const hit = users.get(id);
      if (hit !== undefined && hit.until > now()) return hit.user;
      const before = renames;
      const user = await data.getUser(id);
      // Absent users are not remembered: an account created a moment later must be found.
      if (user === null) users.delete(id);
      else if (renames === before) remember(user);
      return user;
    },
    async renameUser(id, name) {
      renames++;
      try {
        const renamed = await data.renameUser(id, name);
        if (renamed === null) users.delete(id);
        else remember(renamed);
        return renamed;
      } finally {
        renames++;
      }
    },
  };
}
