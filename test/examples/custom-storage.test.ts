// #region run-kit
import { runStorageConformance } from 'portcullis/testing';
import { describe, expect, it } from 'vitest';
import { kvStorage, mapKeyValueStore } from '../../examples/custom-storage/kv-storage.js';

runStorageConformance(
  { describe, it, expect },
  {
    name: 'example key-value adapter',
    // Called before each test; may return a shared instance (the tests use random ids).
    create: () => kvStorage(mapKeyValueStore()),
    // Called after each test with what create returned.
    release: (storage) => storage.close(),
    // Parallel callers in the concurrency tests (default 50).
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
