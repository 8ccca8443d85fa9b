/**
 * A storage that records the name of every method called on it, in order: for tests that count
 * storage round trips (each call is one on PostgreSQL).
 */
import { memoryStorage } from '../../src/storage/memory.js';
import type { Storage } from '../../src/storage/types.js';

/** Wraps `inner` (memory storage by default); `calls` grows with each method call. */
export function recordingStorage(inner: Storage = memoryStorage()): { storage: Storage; calls: string[] } {
  const calls: string[] = [];
  const storage = new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function' || typeof name !== 'string') return value;
      return (...args: unknown[]) => {
        calls.push(name);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { storage, calls };
}
