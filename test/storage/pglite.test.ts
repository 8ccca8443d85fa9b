import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgliteStorage } from '../../src/storage/pglite.js';
import type { Storage } from '../../src/storage/types.js';
import { fixtures, runStorageConformance } from '../../src/testing/storage-conformance.js';

const dataDir = await mkdtemp(join(tmpdir(), 'portcullis-pglite-'));
const opened: Storage[] = [];
const open = (storage: Storage) => {
  opened.push(storage);
  return storage;
};

afterAll(async () => {
  for (const storage of opened) await storage.close();
  await rm(dataDir, { recursive: true, force: true });
});

// One database per suite, shared by its tests (each uses fresh random ids): starting PGlite costs
// seconds and hundreds of megabytes. Opened (and migrated) before the suites, so that the first
// test is not charged for it.
// Two levels that do not exist yet: the storage creates the directory with its parents.
const kitDir = join(dataDir, 'nested', 'kit');
const inMemory = open(pgliteStorage());
let onDisk = open(pgliteStorage({ dataDir: kitDir }));
beforeAll(async () => {
  await inMemory.listSigningKeys();
  await onDisk.listSigningKeys();
}, 180_000);

runStorageConformance({ describe, it, expect }, { name: 'PGlite in memory', create: () => inMemory });
runStorageConformance({ describe, it, expect }, { name: 'PGlite on disk', create: () => onDisk });

describe('PGlite storage', () => {
  it('keeps its data in dataDir when closed and reopened', async () => {
    const client = fixtures.client();
    const grant = fixtures.grant({ clientId: client.clientId });
    const refreshToken = fixtures.refreshToken(grant);
    const key = fixtures.signingKey();
    await onDisk.createClient(client);
    expect(await onDisk.createGrant({ grant, accessToken: fixtures.accessToken(grant), refreshToken })).toBe(
      true,
    );
    await onDisk.addSigningKey(key);
    await onDisk.close();

    onDisk = open(pgliteStorage({ dataDir: kitDir }));
    expect(await onDisk.getClient(client.clientId, client.createdAt)).toEqual(client);
    expect(await onDisk.getRefreshToken(refreshToken.tokenHash, refreshToken.issuedAt)).toEqual(refreshToken);
    expect((await onDisk.listSigningKeys()).find((k) => k.kid === key.kid)).toEqual(key);
  }, 120_000);

  it('refuses a schema name that is not a plain identifier', () => {
    expect(() => pgliteStorage({}, { schema: 'auth; DROP TABLE x' })).toThrow(TypeError);
  });
});
