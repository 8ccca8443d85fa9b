/**
 * Codes and refresh tokens this server issued are presented without a read of storage first
 * (`grants/recently-issued.ts`): the atomic step decides what may have changed behind the server's
 * back. These tests change it behind its back, through a second instance on the same storage, and
 * check the answers are those a read would have given. (Refresh tokens: refresh-token.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RecentlyIssued } from '../../src/grants/recently-issued.js';
import { memoryStorage } from '../../src/storage/memory.js';
import { tokenKey } from '../../src/tokens/token-key.js';
import { consentFields, Harness, json, pkce, redirectParams } from '../helpers/harness.js';
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
      await tokenKey(String(won.access_token)),
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

describe('pending authorizations whose consent page this server showed (RFC 6749 §10.12)', () => {
  it('an approval completes them without reading them first', async () => {
    const { here, calls } = await twoInstances();
    const client = await here.register();
    const cookie = here.login('ada');
    const page = await here.authorize(here.authorizeUrl(client, pkce()), cookie);
    calls.length = 0;
    const allowed = await here.decide(consentFields(page), 'allow', cookie);
    expect(redirectParams(allowed).get('code')).toBeTruthy();
    expect(calls.filter((call) => call.startsWith('interactions.'))).toEqual(['interactions.complete']);
  });

  it('ATK-22 once the page was shown again on another instance, the older form is refused (403, no code) and the newer one completes', async () => {
    const { here, there, calls } = await twoInstances();
    const client = await here.register();
    const cookie = here.login('ada');
    there.login('ada');
    const older = consentFields(await here.authorize(here.authorizeUrl(client, pkce()), cookie));
    // The same request shown again by the other instance: it binds a new consent form.
    const again = await there.authorize(
      `/oauth/authorize?request_id=${encodeURIComponent(older.request_id ?? '')}`,
      cookie,
    );
    expect(again.status).toBe(200);
    const newer = consentFields(again);
    expect(newer.request_id).toBe(older.request_id);
    expect(newer.csrf_token).not.toBe(older.csrf_token);

    // This server remembers the older binding, which the form matches: the completion refuses it.
    calls.length = 0;
    const refused = await here.decide(older, 'allow', cookie);
    expect(refused.status).toBe(403);
    expect(refused.headers.location).toBeUndefined();
    expect(calls.filter((call) => call.startsWith('interactions.'))).toEqual([
      'interactions.complete',
      'interactions.get',
    ]);
    expect(here.events.filter((e) => e.type === 'code.issued')).toEqual([]);

    // The newer form, answered here, is checked against storage and completes.
    const allowed = await here.decide(newer, 'allow', cookie);
    expect(allowed.status).toBe(303);
    expect(redirectParams(allowed).get('code')).toBeTruthy();
    // Answered: neither form completes it again.
    const replayed = await here.decide(newer, 'allow', cookie);
    expect(replayed.status).toBe(400);
    expect(replayed.headers.location).toBeUndefined();
  });

  it('a remembered form answered by another user is refused, and the user it belongs to can still approve it', async () => {
    const { here } = await twoInstances();
    const client = await here.register();
    const ada = here.login('ada');
    const form = consentFields(await here.authorize(here.authorizeUrl(client, pkce()), ada));
    const forged = await here.decide(form, 'allow', here.login('mallory'));
    expect(forged.status).toBe(403);
    expect(forged.headers.location).toBeUndefined();
    expect((await here.decide(form, 'allow', ada)).status).toBe(303);
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
