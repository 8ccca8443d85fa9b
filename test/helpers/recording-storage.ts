/**
 * A storage that records every call made on it, in order, as `store.method` (`codes.redeem`,
 * `deleteExpired`): for tests that count storage round trips (each call is one on PostgreSQL).
 */
import { memoryStorage } from '../../src/storage/memory.js';
import type { Storage } from '../../src/storage/types.js';

/** Wraps every method of `target`, naming each call `prefix + name`. */
function recorded<T extends object>(target: T, prefix: string, calls: string[]): T {
  return new Proxy(target, {
    get(object, name, receiver) {
      const value = Reflect.get(object, name, receiver) as unknown;
      if (typeof value !== 'function' || typeof name !== 'string') return value;
      return (...args: unknown[]) => {
        calls.push(`${prefix}${name}`);
        return (value as (...a: unknown[]) => unknown).apply(object, args);
      };
    },
  });
}

/** Wraps `inner` (memory storage by default); `calls` grows with each method call. */
export function recordingStorage(inner: Storage = memoryStorage()): { storage: Storage; calls: string[] } {
  const calls: string[] = [];
  const storage: Storage = {
    clients: recorded(inner.clients, 'clients.', calls),
    interactions: recorded(inner.interactions, 'interactions.', calls),
    codes: recorded(inner.codes, 'codes.', calls),
    grants: recorded(inner.grants, 'grants.', calls),
    consents: recorded(inner.consents, 'consents.', calls),
    keys: recorded(inner.keys, 'keys.', calls),
    replay: recorded(inner.replay, 'replay.', calls),
    deleteExpired: (now) => {
      calls.push('deleteExpired');
      return inner.deleteExpired(now);
    },
    close: () => inner.close(),
  };
  return { storage, calls };
}
