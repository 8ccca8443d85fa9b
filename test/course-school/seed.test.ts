/**
 * Seeding: the school's own records always; the demo accounts and school only in demo mode, once
 * per database, also when several instances start on the same empty database at the same time
 * (each checks, hashes the demo passwords, then inserts). A server without demo data does not let
 * the demo accounts of a database seeded earlier in demo mode exist.
 */
import { describe, expect, it } from 'vitest';
import { hashPassword } from '../../examples/course-school/src/accounts/passwords.js';
import { createMemoryDataStore } from '../../examples/course-school/src/data/memory-store.js';
import { DEMO_ACCOUNTS, seed, withoutDemoAccounts } from '../../examples/course-school/src/seed.js';

describe('seed', () => {
  it('two instances seeding one empty database at once both start, and the data is there once', async () => {
    const data = createMemoryDataStore();
    await expect(
      Promise.all([seed(data, 1000, { demo: true }), seed(data, 1000, { demo: true })]),
    ).resolves.toEqual([undefined, undefined]);
    for (const account of DEMO_ACCOUNTS)
      expect((await data.getUserByEmail(account.email))?.id).toBe(account.id);
    expect(await data.getMeta('seeded_at')).not.toBeNull();
  });

  it('does nothing on a database already seeded', async () => {
    const data = createMemoryDataStore();
    await seed(data, 1000, { demo: true });
    const before = await data.getUser('usr_ada');
    await seed(data, 2000, { demo: true });
    expect(await data.getUser('usr_ada')).toEqual(before);
  });

  it('without demo data creates the school’s settings and nothing else: no account, no course', async () => {
    const data = createMemoryDataStore();
    await seed(data, 1000, { demo: false });
    for (const account of DEMO_ACCOUNTS) expect(await data.getUserByEmail(account.email)).toBeNull();
    expect(await data.getRecord('school', 'school')).not.toBeNull();
    expect(await data.getRecord('appearance', 'appearance')).not.toBeNull();
    expect(await data.countRecords('course')).toBe(0);
    expect(await data.getMeta('seeded_at')).toBeNull();
  });

  it('keeps the owner’s changes to the school’s settings on the next start', async () => {
    const data = createMemoryDataStore();
    await seed(data, 1000, { demo: false });
    const school = await data.getRecord('school', 'school');
    await data.updateRecord(
      'school',
      'school',
      { isPublic: false, data: { ...school!.data, name: 'Renamed' } },
      1500,
    );
    await seed(data, 2000, { demo: false });
    expect((await data.getRecord('school', 'school'))?.data.name).toBe('Renamed');
  });
});

describe('a database seeded in demo mode, served without demo data', () => {
  it('hides the demo accounts: not found by id or email, not renamed; other accounts unaffected', async () => {
    const inner = createMemoryDataStore();
    await seed(inner, 1000, { demo: true });
    await inner.createUser({
      id: 'usr_real',
      email: 'owner@school.example',
      name: 'Real Owner',
      role: 'owner',
      passwordHash: await hashPassword('a real password'),
      createdAt: 1000,
    });
    const data = withoutDemoAccounts(inner);
    for (const account of DEMO_ACCOUNTS) {
      expect(await data.getUser(account.id)).toBeNull();
      expect(await data.getUserByEmail(account.email)).toBeNull();
      expect(await data.getUserByEmail(account.email.toUpperCase())).toBeNull();
      expect(await data.renameUser(account.id, 'x')).toBeNull();
    }
    expect((await data.getUserByEmail('owner@school.example'))?.id).toBe('usr_real');
    expect((await inner.getUser('usr_ada'))?.name).toBe('Ada Lovelace');
  });
});
