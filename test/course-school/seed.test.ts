/**
 * Seeding the demo data: once per database, also when several instances start on the same empty
 * database at the same time (each checks, hashes the demo passwords, then inserts).
 */
import { describe, expect, it } from 'vitest';
import { createMemoryDataStore } from '../../examples/course-school/src/data/memory-store.js';
import { DEMO_ACCOUNTS, seed } from '../../examples/course-school/src/seed.js';

describe('seed', () => {
  it('two instances seeding one empty database at once both start, and the data is there once', async () => {
    const data = createMemoryDataStore();
    await expect(Promise.all([seed(data, 1000), seed(data, 1000)])).resolves.toEqual([undefined, undefined]);
    for (const account of DEMO_ACCOUNTS)
      expect((await data.getUserByEmail(account.email))?.id).toBe(account.id);
    expect(await data.getMeta('seeded_at')).not.toBeNull();
  });

  it('does nothing on a database already seeded', async () => {
    const data = createMemoryDataStore();
    await seed(data, 1000);
    const before = await data.getUser('usr_ada');
    await seed(data, 2000);
    expect(await data.getUser('usr_ada')).toEqual(before);
  });
});
