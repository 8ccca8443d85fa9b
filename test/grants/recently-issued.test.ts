/**
 * Codes and refresh tokens this server issued are presented without a read of storage first
 * (`grants/recently-issued.ts`): the atomic step decides what may have changed behind the server's
 * back. These tests change it behind its back, through a second instance on the same storage, and
 * check the answers are those a read would have given. (Refresh tokens: refresh-token.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/core/crypto.js';
import { RecentlyIssued } from '../../src/grants/recently-issued.js';
import { memoryStorage } from '../../src/storage/memory.js';
import { Harness, json } from '../helpers/harness.js';
import { recordingStorage } from '../helpers/recording-storage.js';

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

/** Two servers on one storage; the first's storage calls are recorded. */
async function twoInstances() {
  const shared = memoryStorage();
  const recording = recordingStorage(shared);
  const here = await Harness.start({ storage: recording.storage });
  const there = await Harness.start({ storage: shared });
  harnesses.push(here, there);
  return { here, there, calls: recording.calls };
}

describe('authorization codes this server issued (RFC 6749 §4.1.2, RFC 7636 §4.6)', () => {
  it('are exchanged without reading the code first', async () => {
    const { here, calls } = await twoInstances();
    const client = await here.register();
    const { code, pkce } = await here.obtainCode(client);
    calls.length = 0;
    expect((await here.exchange(client, code, pkce)).status).toBe(200);
    expect(calls.filter((call) => call.startsWith('codes.'))).toEqual(['codes.redeem']);
  });

  it('TOK-13 a code another instance redeemed meanwhile is a replay here: refused, and what it issued is revoked', async () => {
    const { here, there } = await twoInstances();
    const client = await here.register();
    const { code, pkce } = await here.obtainCode(client);
    const won = json(await there.exchange(client, code, pkce));
    expect(typeof won.access_token).toBe('string');
    const replay = await here.exchange(client, code, pkce);
    expect(replay.status).toBe(400);
    expect(json(replay).error).toBe('invalid_grant');
    expect(here.events.some((e) => e.type === 'code.replayed')).toBe(true);
    const token = await here.storage.grants.getAccessToken(
      await sha256(String(won.access_token)),
      here.clock.now(),
    );
    expect(token).toBeNull();
  });

  it('ATK-03 a wrong verifier does not burn a remembered code: the right one still redeems it, once', async () => {
    const { here } = await twoInstances();
    const client = await here.register();
    const { code, pkce } = await here.obtainCode(client);
    const wrong = await here.exchange(client, code, { ...pkce, verifier: `${pkce.verifier.slice(0, -1)}x` });
    expect(json(wrong).error).toBe('invalid_grant');
    expect((await here.exchange(client, code, pkce)).status).toBe(200);
    expect(here.events.filter((e) => e.type === 'grant.revoked')).toEqual([]);
  });

  it('a remembered code past its expiry is refused, as storage would', async () => {
    const { here } = await twoInstances();
    const client = await here.register();
    const { code, pkce } = await here.obtainCode(client);
    here.clock.advance(60);
    const late = await here.exchange(client, code, pkce);
    expect(late.status).toBe(400);
    expect(json(late).error).toBe('invalid_grant');
  });

  it('a code is not redeemed by another client because this server remembers it', async () => {
    const { here } = await twoInstances();
    const owner = await here.register();
    const other = await here.register();
    const { code, pkce } = await here.obtainCode(owner);
    expect(json(await here.exchange(other, code, pkce)).error).toBe('invalid_grant');
    expect((await here.exchange(owner, code, pkce)).status).toBe(200);
  });
});

describe('RecentlyIssued', () => {
  it('hands a record out once, not after its expiry, and keeps at most its bound, oldest dropped first', () => {
    const recent = new RecentlyIssued<{ expiresAt: number; n: number }>(2);
    recent.remember('a', { expiresAt: 100, n: 1 });
    expect(recent.take('a', 99)).toEqual({ expiresAt: 100, n: 1 });
    expect(recent.take('a', 99)).toBeUndefined();
    recent.remember('b', { expiresAt: 100, n: 2 });
    expect(recent.take('b', 100)).toBeUndefined();
    for (const key of ['c', 'd', 'e']) recent.remember(key, { expiresAt: 100, n: 0 });
    expect(recent.size).toBe(2);
    expect(recent.take('c', 0)).toBeUndefined();
    expect(recent.take('e', 0)).toBeDefined();
  });
});
