import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresStorage } from '../../src/storage/postgres.js';
import type { Storage } from '../../src/storage/types.js';
import { fixtures, runStorageConformance } from '../../src/testing/index.js';
import { randomSchemaName, requirePostgres } from '../helpers/services.js';

const postgres = await requirePostgres('storage tests on PostgreSQL');

describe.skipIf(postgres === undefined)('PostgreSQL storage', () => {
  const url = postgres?.url ?? '';
  const schemas: string[] = [];
  const fresh = () => {
    const name = randomSchemaName();
    schemas.push(name);
    return name;
  };
  // A pool owned by the "host": the storage must use it and leave it open. Made lazily: the body
  // of a skipped suite still runs to collect its tests.
  let pool: pg.Pool | undefined;
  const hostPool = () => (pool ??= new pg.Pool({ connectionString: url, max: 10 }));
  const opened: Storage[] = [];
  const open = (storage: Storage) => {
    opened.push(storage);
    return storage;
  };

  afterAll(async () => {
    for (const storage of opened) await storage.close();
    await pool?.end();
    await secondPool?.end();
    for (const name of schemas) await postgres?.dropSchema(name);
  });

  // Shared per suite (tests use random ids); a fresh schema per run. The races run across two
  // instances: a second storage with its own pool on the same schema, as a second server would.
  const ownPoolSchema = fresh();
  let ownPool: Storage | undefined;
  let ownPoolSecond: Storage | undefined;
  runStorageConformance(
    { describe, it, expect },
    {
      name: 'PostgreSQL, own pool, prepared statements',
      create: () => (ownPool ??= open(postgresStorage({ connectionString: url }, { schema: ownPoolSchema }))),
      createSecond: () =>
        (ownPoolSecond ??= open(postgresStorage({ connectionString: url }, { schema: ownPoolSchema }))),
    },
  );

  const hostPoolSchema = fresh();
  let onHostPool: Storage | undefined;
  let onSecondPool: Storage | undefined;
  let secondPool: pg.Pool | undefined;
  runStorageConformance(
    { describe, it, expect },
    {
      name: 'PostgreSQL, host pool, unnamed statements',
      create: () =>
        (onHostPool ??= open(
          postgresStorage({ pool: hostPool() }, { schema: hostPoolSchema, preparedStatements: false }),
        )),
      createSecond: () => {
        secondPool ??= new pg.Pool({ connectionString: url, max: 10 });
        onSecondPool ??= open(
          postgresStorage({ pool: secondPool }, { schema: hostPoolSchema, preparedStatements: false }),
        );
        return onSecondPool;
      },
    },
  );

  it('keeps its data when closed and reopened with a new pool', async () => {
    const schema = fresh();
    const first = open(postgresStorage({ connectionString: url }, { schema }));
    const client = fixtures.client();
    const code = fixtures.code({ clientId: client.clientId });
    const grant = fixtures.grantOf(code);
    const accessToken = fixtures.accessToken(grant);
    const key = fixtures.signingKey();
    await first.clients.create(client);
    await first.codes.create(code);
    expect(
      await first.codes.redeem({ codeHash: code.codeHash, grant, accessToken, now: code.createdAt }),
    ).toEqual({
      outcome: 'redeemed',
    });
    await first.keys.add(key);
    await first.close();

    const second = open(postgresStorage({ connectionString: url }, { schema }));
    expect(await second.clients.get(client.clientId, client.createdAt)).toEqual(client);
    expect(await second.grants.get(grant.grantId)).toEqual(grant);
    expect(await second.grants.getAccessToken(accessToken.tokenHash, accessToken.issuedAt)).toEqual(
      accessToken,
    );
    expect(await second.keys.list()).toEqual([key]);
  });

  it('shares a host pool between schemas without mixing data or prepared statements, and leaves it open', async () => {
    const [a, b] = [fresh(), fresh()].map((schema) => postgresStorage({ pool: hostPool() }, { schema }));
    const client = fixtures.client();
    await a!.clients.create(client);
    // Same statement on the same connections, other schema: a distinct prepared statement.
    expect(await b!.clients.get(client.clientId, client.createdAt)).toBeNull();
    expect(await a!.clients.get(client.clientId, client.createdAt)).toEqual(client);
    await a!.close();
    await b!.close();
    expect((await hostPool().query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });
});
