/**
 * The session manager's memory of verified cookies (accounts/sessions.ts): a cookie read once is
 * served from memory for SESSION_CACHE_MS, a logout on this instance forgets it at once, a session
 * ended elsewhere (another instance, the sweep) is seen once the window has passed, and a forged
 * cookie never gets in (ATK-28).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import {
  createSessionManager,
  SESSION_CACHE_MS,
  type SessionManager,
} from '../../examples/course-school/src/accounts/sessions.js';
import { createMemoryDataStore } from '../../examples/course-school/src/data/memory-store.js';
import type { DataStore, UserRecord } from '../../examples/course-school/src/data/store.js';

const T0 = 1_800_000_000_000;
const ADA: UserRecord = {
  id: 'usr_ada',
  email: 'ada@example.com',
  name: 'Ada',
  role: 'owner',
  passwordHash: 'unused',
  createdAt: T0,
};

/** `name=value` of a Set-Cookie header. */
const cookieOf = (setCookie: string) => setCookie.split(';')[0]!;

describe('session cookies remembered briefly', () => {
  let data: DataStore;
  let sessions: SessionManager;
  let reads: number;

  beforeEach(async () => {
    const inner = createMemoryDataStore();
    reads = 0;
    data = {
      ...inner,
      getSession(idHash, now) {
        reads++;
        return inner.getSession(idHash, now);
      },
    };
    await data.createUser(ADA);
    sessions = createSessionManager(data, 'secret', false);
  });

  it('reads the session once per window', async () => {
    const cookie = cookieOf((await sessions.create(ADA, T0)).setCookie);
    expect((await sessions.read(cookie, T0))?.user.id).toBe(ADA.id);
    expect((await sessions.read(cookie, T0 + SESSION_CACHE_MS - 1))?.user.id).toBe(ADA.id);
    expect(reads).toBe(1);
    expect((await sessions.read(cookie, T0 + SESSION_CACHE_MS))?.user.id).toBe(ADA.id);
    expect(reads).toBe(2);
  });

  it('forgets a session at once when it is signed out on this instance', async () => {
    const cookie = cookieOf((await sessions.create(ADA, T0)).setCookie);
    const signedIn = await sessions.read(cookie, T0);
    await sessions.destroy(signedIn!);
    expect(await sessions.read(cookie, T0 + 1)).toBeNull();
  });

  it('sees a session deleted elsewhere once the window has passed', async () => {
    const cookie = cookieOf((await sessions.create(ADA, T0)).setCookie);
    const signedIn = await sessions.read(cookie, T0);
    await data.deleteSession(signedIn!.session.idHash); // another instance's logout
    expect(await sessions.read(cookie, T0 + SESSION_CACHE_MS)).toBeNull();
  });

  it('never remembers a forged cookie (ATK-28)', async () => {
    const cookie = cookieOf((await sessions.create(ADA, T0)).setCookie);
    const forged = `${cookie.slice(0, cookie.indexOf('.'))}.${'A'.repeat(43)}`;
    expect(await sessions.read(forged, T0)).toBeNull();
    expect(await sessions.read(forged, T0)).toBeNull();
    expect(reads).toBe(0);
  });
});
