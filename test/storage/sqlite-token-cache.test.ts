/**
 * The access-token records a SQLite connection keeps (`token-cache.ts`): reused without a query
 * while nothing can have changed them, read again after any other connection's commit, bounded in
 * number, and handed out frozen so that no caller can change what the next caller gets. That a
 * revocation on either connection wins at once is the conformance kit's (grants suite).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { AccessTokenCache } from '../../src/storage/sqlite/token-cache.js';
import { sqliteStorage } from '../../src/storage/sqlite.js';
import type { AccessTokenRecord } from '../../src/storage/types.js';
import { fixtures } from '../../src/testing/index.js';
import { NOW } from '../../src/testing/storage/fixtures.js';
import { scratchDir, twoConnections } from './sqlite-drivers.js';

const scratch = scratchDir();
const closers: Array<() => unknown> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  scratch.remove();
});

/** A read that counts how often the cache had to query. */
function reader(record: AccessTokenRecord | null) {
  const calls = { count: 0 };
  return {
    calls,
    read: () => {
      calls.count++;
      return record;
    },
  };
}

describe('SQLite access-token cache', () => {
  it('answers a token read before without a query, until another connection commits anything', async () => {
    const { a, b } = await twoConnections(scratch.file('versions.sqlite'), closers);
    const cache = new AccessTokenCache();
    const token = fixtures.accessToken(fixtures.grant());
    const { calls, read } = reader(token);
    for (let i = 0; i < 3; i++) expect(cache.get(a, token.tokenHash, NOW, read)).toEqual(token);
    expect(calls.count).toBe(1);
    // A commit on this connection (which the storage's own revocations clear for explicitly)
    // does not change data_version.
    a.run('INSERT INTO notes (body) VALUES (?)', 'mine');
    expect(cache.get(a, token.tokenHash, NOW, read)).toEqual(token);
    expect(calls.count).toBe(1);
    // Any commit by another connection, on any table: everything is read again.
    b.run('INSERT INTO notes (body) VALUES (?)', 'theirs');
    expect(cache.get(a, token.tokenHash, NOW, read)).toEqual(token);
    expect(calls.count).toBe(2);
    expect(cache.get(a, token.tokenHash, NOW, read)).toEqual(token);
    expect(calls.count).toBe(2);
  });

  it('remembers nothing about a token that was not found', async () => {
    const { a } = await twoConnections(scratch.file('absent.sqlite'), closers);
    const cache = new AccessTokenCache();
    const { calls, read } = reader(null);
    expect(cache.get(a, 'unknown', NOW, read)).toBeNull();
    expect(cache.get(a, 'unknown', NOW, read)).toBeNull();
    expect(calls.count).toBe(2);
    expect(cache.size).toBe(0);
  });

  it('keeps at most its bound of records, dropping the oldest first', async () => {
    const { a } = await twoConnections(scratch.file('bounded.sqlite'), closers);
    const cache = new AccessTokenCache(3);
    const tokens = Array.from({ length: 4 }, () => fixtures.accessToken(fixtures.grant()));
    const counts = tokens.map((token) => reader(token));
    for (const [i, token] of tokens.entries()) cache.get(a, token.tokenHash, NOW, counts[i]!.read);
    expect(cache.size).toBe(3);
    // The last three were kept; the first was dropped, and is read again.
    for (const i of [1, 2, 3, 0]) cache.get(a, tokens[i]!.tokenHash, NOW, counts[i]!.read);
    expect(counts.map((c) => c.calls.count)).toEqual([2, 1, 1, 1]);
    expect(cache.size).toBe(3);
  });

  it('hands out frozen records: a caller cannot change what the next one is told', async () => {
    const storage = sqliteStorage({ path: scratch.file('frozen.sqlite') });
    closers.push(() => storage.close());
    const code = fixtures.code();
    await storage.codes.create(code);
    const grant = fixtures.grant({ grantId: code.grantId });
    const accessToken = fixtures.accessToken(grant);
    await storage.codes.redeem({ codeHash: code.codeHash, grant, accessToken, now: code.createdAt });
    const first = await storage.grants.getAccessToken(accessToken.tokenHash, NOW);
    expect(Object.isFrozen(first)).toBe(true);
    expect(() => (first!.scope as string[]).push('admin')).toThrow(TypeError);
    expect(() => {
      (first as { clientId: string }).clientId = 'someone-else';
    }).toThrow(TypeError);
    expect(await storage.grants.getAccessToken(accessToken.tokenHash, NOW)).toEqual(accessToken);
  });
});
