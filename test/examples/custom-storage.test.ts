// #region run-kit
import type { Storage } from 'portcullis';
import { runStorageConformance } from 'portcullis/testing';
import { describe, expect, it } from 'vitest';
import { type KeyValueStore, kvStorage, mapKeyValueStore } from '../../examples/custom-storage/kv-storage.js';

const stores = new WeakMap<Storage, KeyValueStore>();

runStorageConformance(
  { describe, it, expect },
  {
    name: 'example key-value adapter',
    // Called before each test; may return a shared instance (the tests use random ids).
    create: () => {
      const kv = mapKeyValueStore();
      const storage = kvStorage(kv);
      stores.set(storage, kv);
      return storage;
    },
    // Optional: a second instance over the same data, for the races (a second server would have one).
    createSecond: (first) => kvStorage(stores.get(first)!),
    // Called after each test with what create (and createSecond) returned.
    release: (storage) => storage.close(),
    // Parallel callers in the races on codes and pending authorizations (default 50).
    concurrency: 50,
  },
);
// #endregion run-kit

describe('example key-value store', () => {
  it('commits all writes only when every check holds', async () => {
    const kv = mapKeyValueStore();
    expect(await kv.commit([{ key: 'a', version: null }], [{ key: 'a', value: '1' }])).toBe(true);
    const a = await kv.get('a');
    expect(a?.value).toBe('1');
    // A stale check fails the whole commit: neither write happens.
    expect(
      await kv.commit(
        [{ key: 'a', version: null }],
        [
          { key: 'a', value: '2' },
          { key: 'b', value: '2' },
        ],
      ),
    ).toBe(false);
    expect((await kv.get('a'))?.value).toBe('1');
    expect(await kv.get('b')).toBeNull();
    expect(await kv.commit([{ key: 'a', version: a!.version }], [{ key: 'a', value: null }])).toBe(true);
    expect(await kv.list('')).toEqual([]);
  });
});
