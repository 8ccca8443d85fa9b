import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgliteStorage } from '../../src/storage/pglite.js';
import type { Storage } from '../../src/storage/types.js';
import { fixtures, runStorageConformance } from '../../src/testing/index.js';

const dataDir = await mkdtemp(join(tmpdir(), 'portcullis-pglite-'));
const opened: Storage[] = [];
const open = (storage: Storage) => {
  opened.push(storage);
  return storage;
};

// One database per suite, shared by its tests (each uses fresh random ids): starting PGlite costs
// seconds and hundreds of megabytes. Opened (and migrated) before the suites, so that the first
// test is not charged for it.
//
// The second instance of the races: PGlite runs inside one process, one statement at a time, and
// only one process may open a data directory. Two storage objects over one PGlite instance are the
// most "two instances" there can be in-process; they prove the storage keeps no state of its own
// that the atomic steps depend on, nothing about a second process.
const memoryDb = await PGlite.create();
const inMemory = open(pgliteStorage({ pglite: memoryDb }));
const inMemorySecond = open(pgliteStorage({ pglite: memoryDb }));
// Two levels that do not exist yet: the storage creates the directory with its parents.
const kitDir = join(dataDir, 'nested', 'kit');
let onDisk = open(pgliteStorage({ dataDir: kitDir }));

afterAll(async () => {
  for (const storage of opened) await storage.close();
  await memoryDb.close();
  await rm(dataDir, { recursive: true, force: true });
});

beforeAll(async () => {
  await inMemory.keys.list();
  await inMemorySecond.keys.list();
  await onDisk.keys.list();
}, 180_000);

runStorageConformance(
  { describe, it, expect },
  { name: 'PGlite in memory', create: () => inMemory, createSecond: () => inMemorySecond },
);
runStorageConformance({ describe, it, expect }, { name: 'PGlite on disk', create: () => onDisk });

describe('PGlite storage', () => {
  it('keeps its data in dataDir when closed and reopened', async () => {
    const client = fixtures.client();
    const code = fixtures.code({ clientId: client.clientId });
    const grant = fixtures.grantOf(code);
    const refreshToken = fixtures.refreshToken(grant);
    const key = fixtures.signingKey();
    await onDisk.clients.create(client);
    await onDisk.codes.create(code);
    const redemption = {
      codeHash: code.codeHash,
      grant,
      accessToken: fixtures.accessToken(grant),
      refreshToken,
    };
    expect(await onDisk.codes.redeem({ ...redemption, now: code.createdAt })).toEqual({
      outcome: 'redeemed',
    });
    await onDisk.keys.add(key);
    await onDisk.close();

    onDisk = open(pgliteStorage({ dataDir: kitDir }));
    expect(await onDisk.clients.get(client.clientId, client.createdAt)).toEqual(client);
    expect(await onDisk.grants.getRefreshToken(refreshToken.tokenHash, refreshToken.issuedAt)).toEqual(
      refreshToken,
    );
    expect((await onDisk.keys.list()).find((k) => k.kid === key.kid)).toEqual(key);
  }, 120_000);

  it('refuses a schema name that is not a plain identifier', () => {
    expect(() => pgliteStorage({}, { schema: 'auth; DROP TABLE x' })).toThrow(TypeError);
  });
});
