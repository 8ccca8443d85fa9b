/**
 * The reference server's user cache (`data/user-cache.ts`): a user record is read from the store
 * once per window, a rename through this instance is seen at once, one made elsewhere within the
 * window, and a read that overlaps a rename never keeps the old name.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { createMemoryDataStore } from '../../examples/course-school/src/data/memory-store.js';
import type { DataStore, UserRecord } from '../../examples/course-school/src/data/store.js';
import { USER_CACHE_MS, withUserCache } from '../../examples/course-school/src/data/user-cache.js';

const ADA: UserRecord = {
  id: 'u-ada',
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  role: 'owner',
  passwordHash: 'scrypt$x',
  createdAt: 0,
};

describe('withUserCache', () => {
  let store: DataStore;
  let reads: number;
  let clock: number;
  let cached: DataStore;

  beforeEach(async () => {
    const inner = createMemoryDataStore();
    await inner.createUser(ADA);
    reads = 0;
    store = {
      ...inner,
      getUser(id) {
        reads++;
        return inner.getUser(id);
      },
    };
    clock = 1_000_000;
    cached = withUserCache(store, USER_CACHE_MS, () => clock);
  });

  it('reads a user from the store once per window', async () => {
    for (let i = 0; i < 3; i++) expect((await cached.getUser(ADA.id))?.name).toBe('Ada Lovelace');
    expect(reads).toBe(1);
    clock += USER_CACHE_MS - 1;
    await cached.getUser(ADA.id);
    expect(reads).toBe(1);
    clock += 1;
    await cached.getUser(ADA.id);
    expect(reads).toBe(2);
  });

  it('sees a rename through this instance at once', async () => {
    await cached.getUser(ADA.id);
    await cached.renameUser(ADA.id, 'Countess of Lovelace');
    expect((await cached.getUser(ADA.id))?.name).toBe('Countess of Lovelace');
  });

  it('sees a rename made by another instance when the window ends', async () => {
    await cached.getUser(ADA.id);
    await store.renameUser(ADA.id, 'Renamed elsewhere');
    expect((await cached.getUser(ADA.id))?.name).toBe('Ada Lovelace');
    clock += USER_CACHE_MS;
    expect((await cached.getUser(ADA.id))?.name).toBe('Renamed elsewhere');
  });

  it('does not keep what a read returned while a rename was under way', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // A store whose read answers the old record, late, after the rename has finished.
    const slow: DataStore = {
      ...store,
      async getUser(id) {
        const before = await store.getUser(id);
        await gate;
        return before;
      },
    };
    const racing = withUserCache(slow, USER_CACHE_MS, () => clock);
    const read = racing.getUser(ADA.id);
    await racing.renameUser(ADA.id, 'Countess of Lovelace');
    release();
    expect((await read)?.name).toBe('Ada Lovelace');
    const afterwards = await racing.getUser(ADA.id);
    expect(afterwards?.name).toBe('Countess of Lovelace');
  });

  it('does not remember that a user is absent', async () => {
    expect(await cached.getUser('u-new')).toBeNull();
    await store.createUser({ ...ADA, id: 'u-new', email: 'new@example.com' });
    expect((await cached.getUser('u-new'))?.id).toBe('u-new');
  });

  it('passes everything else through to the store', async () => {
    expect((await cached.getUserByEmail('ada@example.com'))?.id).toBe(ADA.id);
    expect(await cached.getMeta('nothing')).toBeNull();
  });
});
