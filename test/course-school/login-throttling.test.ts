/**
 * Login throttling (accounts/login-guard.ts): slow brute force per client address, consecutive
 * failures per (email, address), successful logins per address, a bounded number of password
 * hashes at once, counters with a memory ceiling and no eviction that resets a counter at its
 * limit, and an unknown email costing the same hash as a known one. The guard
 * is driven with a fake password check and a fake clock; then the real server, over HTTP from two
 * source addresses (127.0.0.2 and 127.0.0.3), with real scrypt.
 */
import * as crypto from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHashGate, createLoginGuard } from '../../examples/course-school/src/accounts/login-guard.js';
import { hashPassword, verifyLogin } from '../../examples/course-school/src/accounts/passwords.js';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { DEFAULT_LOGIN_LIMITS } from '../../examples/course-school/src/config.js';
import { createMemoryDataStore } from '../../examples/course-school/src/data/memory-store.js';
import { login, startTestServer } from '../helpers/course-school.js';
import { fetchFrom } from '../helpers/reverse-proxy.js';

// Counts scrypt computations (the cost of a login), keeping the real function.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, scrypt: vi.fn(actual.scrypt) };
});

/** A password check that always fails, counting its calls. */
function failingCheck() {
  const check = vi.fn(async () => null);
  return check;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the login guard', () => {
  it('stops a password spray across 200 emails from one address: 101 checked, 99 refused without a hash', async () => {
    const guard = createLoginGuard(DEFAULT_LOGIN_LIMITS);
    const check = failingCheck();
    const outcomes: string[] = [];
    for (let i = 0; i < 200; i++)
      outcomes.push((await guard.attempt(`user${i}@example.com`, '198.51.100.7', check)).kind);
    expect(outcomes.filter((o) => o === 'wrong')).toHaveLength(101);
    expect(outcomes.slice(101).every((o) => o === 'throttled')).toBe(true);
    expect(check).toHaveBeenCalledTimes(101);
    // Another address is not affected.
    expect((await guard.attempt('user0@example.com', '198.51.100.8', async () => 'ok')).kind).toBe('ok');
  });

  it('a stranger’s 20 wrong passwords for ada from one address do not stop ada from hers', async () => {
    const guard = createLoginGuard(DEFAULT_LOGIN_LIMITS);
    const stranger = failingCheck();
    const outcomes: string[] = [];
    for (let i = 0; i < 20; i++)
      outcomes.push((await guard.attempt('ada@example.com', '203.0.113.66', stranger)).kind);
    expect(outcomes.slice(0, 11).every((o) => o === 'wrong')).toBe(true);
    expect(outcomes.slice(11).every((o) => o === 'throttled')).toBe(true);
    expect(stranger).toHaveBeenCalledTimes(11);
    const ada = await guard.attempt('ada@example.com', '192.0.2.10', async () => 'ada');
    expect(ada).toEqual({ kind: 'ok', value: 'ada' });
  });

  it('keeps counting across time (fake clock): blocked for an hour after the 11th failure in a row, then free again', async () => {
    vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z') });
    const guard = createLoginGuard(DEFAULT_LOGIN_LIMITS);
    for (let i = 0; i < 10; i++) await guard.attempt('grace@example.com', '192.0.2.1', failingCheck());
    // Ten failures spread over a day still count as ten in a row.
    vi.advanceTimersByTime(20 * 3600_000);
    expect((await guard.attempt('grace@example.com', '192.0.2.1', failingCheck())).kind).toBe('wrong');
    const blocked = await guard.attempt('grace@example.com', '192.0.2.1', failingCheck());
    expect(blocked).toEqual({ kind: 'throttled', retryAfterSeconds: 3600 });
    vi.advanceTimersByTime(30 * 60_000);
    expect((await guard.attempt('grace@example.com', '192.0.2.1', failingCheck())).kind).toBe('throttled');
    vi.advanceTimersByTime(30 * 60_000 + 1);
    expect((await guard.attempt('grace@example.com', '192.0.2.1', async () => 'grace')).kind).toBe('ok');
  });

  it('a success resets the failures in a row of that email and address', async () => {
    const guard = createLoginGuard(DEFAULT_LOGIN_LIMITS);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 10; i++) await guard.attempt('grace@example.com', '192.0.2.1', failingCheck());
      expect((await guard.attempt('grace@example.com', '192.0.2.1', async () => 'grace')).kind).toBe('ok');
    }
  });

  it('never forgets a victim’s failures to make room: 20 000 other keys later, the count is still there', async () => {
    const guard = createLoginGuard({ ...DEFAULT_LOGIN_LIMITS, failuresPerAddressPerDay: 1_000_000 });
    for (let i = 0; i < 10; i++) await guard.attempt('ada@example.com', '203.0.113.66', failingCheck());
    // The old tracker kept 10 000 keys and dropped the oldest: a flood of other emails reset ada's count.
    for (let i = 0; i < 20_000; i++)
      await guard.attempt(`flood${i}@example.com`, '203.0.113.66', failingCheck());
    expect((await guard.attempt('ada@example.com', '203.0.113.66', failingCheck())).kind).toBe('wrong');
    expect((await guard.attempt('ada@example.com', '203.0.113.66', failingCheck())).kind).toBe('throttled');
  });

  it('has a memory ceiling: 3 000 addresses (an IPv6 /48 has 65 536 /64s) failing for two emails each leave at most trackedKeys keys per counter, and no timer', async () => {
    vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z') });
    const guard = createLoginGuard({ ...DEFAULT_LOGIN_LIMITS, trackedKeys: 500 });
    for (let i = 0; i < 3_000; i++) {
      const address = `2001:db8:1:${i.toString(16)}::/64`;
      await guard.attempt(`a${i}@example.com`, address, failingCheck());
      await guard.attempt(`b${i}@example.com`, address, failingCheck());
    }
    expect(guard.keysTracked()).toBeLessThanOrEqual(3 * 500);
    // rate-limiter-flexible's memory limiter kept one timer per key (9 000 here).
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a flood that fills the counters neither resets a count that reached its limit nor lets new addresses through uncounted', async () => {
    vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z') });
    const limits = { ...DEFAULT_LOGIN_LIMITS, failuresPerAddressPerDay: 2, trackedKeys: 100 };
    const guard = createLoginGuard(limits);
    // A stranger uses up ada's failures in a row from one address (limit 10: the 11th still counts).
    const stranger = '203.0.113.66';
    const pairGuard = createLoginGuard({ ...limits, failuresPerAddressPerDay: 1_000 });
    for (let i = 0; i < 10; i++) await pairGuard.attempt('ada@example.com', stranger, failingCheck());
    // 1 000 other addresses fail once each: ten times the table, every key under its limit.
    for (let i = 0; i < 1_000; i++)
      await pairGuard.attempt(`flood${i}@example.com`, `198.51.${i >> 8}.${i & 255}`, failingCheck());
    expect(pairGuard.keysTracked()).toBeLessThanOrEqual(3 * 100);
    expect((await pairGuard.attempt('ada@example.com', stranger, failingCheck())).kind).toBe('wrong');
    expect((await pairGuard.attempt('ada@example.com', stranger, failingCheck())).kind).toBe('throttled');
    // 100 addresses each refused for the day hold every slot of the per-address counter...
    for (let i = 0; i < 100; i++)
      for (let n = 0; n < 3; n++) await guard.attempt(`u${n}@example.com`, `192.0.2.${i}`, failingCheck());
    // ...so new addresses are counted together, under one address's limit: 3 hashes, not 50.
    const check = failingCheck();
    const outcomes: string[] = [];
    for (let i = 0; i < 50; i++)
      outcomes.push((await guard.attempt('x@example.com', `2001:db8:9:${i}::/64`, check)).kind);
    expect(check).toHaveBeenCalledTimes(3);
    expect(outcomes.slice(3).every((o) => o === 'throttled')).toBe(true);
    // The day ends, and with it every block: new addresses have counters of their own again.
    vi.advanceTimersByTime(86_400_000);
    expect((await guard.attempt('x@example.com', '2001:db8:9:1::/64', async () => 'x')).kind).toBe('ok');
  });

  it('limits successful logins per address: one valid account cannot keep the hash gate busy or fill the session table', async () => {
    vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z') });
    const guard = createLoginGuard({ ...DEFAULT_LOGIN_LIMITS, successesPerAddressPerHour: 300 });
    const verify = vi.fn(async () => 'mallory');
    const outcomes: string[] = [];
    for (let i = 0; i < 400; i++)
      outcomes.push((await guard.attempt('mallory@example.com', '203.0.113.9', verify)).kind);
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(300);
    expect(verify).toHaveBeenCalledTimes(300);
    expect(await guard.attempt('mallory@example.com', '203.0.113.9', verify)).toEqual({
      kind: 'throttled',
      retryAfterSeconds: 3600,
    });
    // Another address is not affected; the address is free again after the hour.
    expect((await guard.attempt('ada@example.com', '192.0.2.10', async () => 'ada')).kind).toBe('ok');
    vi.advanceTimersByTime(3_600_000);
    expect((await guard.attempt('mallory@example.com', '203.0.113.9', verify)).kind).toBe('ok');
  });

  it('computes at most two hashes at once, queues 64 more, and answers busy beyond', async () => {
    const guard = createLoginGuard(DEFAULT_LOGIN_LIMITS);
    let running = 0;
    let most = 0;
    const release: (() => void)[] = [];
    const slowCheck = () =>
      new Promise<string>((resolve) => {
        running++;
        most = Math.max(most, running);
        release.push(() => {
          running--;
          resolve('ok');
        });
      });
    const attempts = Array.from({ length: 2 + 64 }, (_, i) =>
      guard.attempt(`u${i}@example.com`, `192.0.2.${i}`, slowCheck),
    );
    // The 67th finds the queue full: answered at once, without a hash.
    await expect(guard.attempt('late@example.com', '192.0.2.200', slowCheck)).resolves.toEqual({
      kind: 'busy',
      retryAfterSeconds: 1,
    });
    for (let done = 0; done < 66; done++) {
      await vi.waitFor(() => expect(release.length).toBeGreaterThan(done));
      release[done]!();
    }
    expect((await Promise.all(attempts)).every((o) => o.kind === 'ok')).toBe(true);
    expect(most).toBe(2);
  });

  it('the hash gate serves waiting tasks in order', async () => {
    const gate = createHashGate(1, 10);
    const order: number[] = [];
    await Promise.all([1, 2, 3].map((n) => gate.run(async () => order.push(n))));
    expect(order).toEqual([1, 2, 3]);
  });
});

describe('password verification', () => {
  it('costs one scrypt for an unknown email, as for a wrong password (no enumeration by timing)', async () => {
    const data = createMemoryDataStore();
    await data.createUser({
      id: 'usr_x',
      email: 'x@example.com',
      name: 'X',
      role: 'student',
      passwordHash: await hashPassword('right password'),
      createdAt: 0,
    });
    const scrypt = vi.mocked(crypto.scrypt);
    await verifyLogin(data, 'nobody@example.com', 'warm-up'); // computes the dummy hash once
    scrypt.mockClear();
    expect(await verifyLogin(data, 'nobody@example.com', 'guess')).toBeNull();
    expect(scrypt).toHaveBeenCalledTimes(1);
    scrypt.mockClear();
    expect(await verifyLogin(data, 'x@example.com', 'wrong')).toBeNull();
    expect(scrypt).toHaveBeenCalledTimes(1);
    expect((await verifyLogin(data, 'x@example.com', 'right password'))?.id).toBe('usr_x');
  });
});

describe('the login form of the running server, from two addresses', () => {
  let app: CourseSchoolServer;
  const stranger = fetchFrom('127.0.0.2');
  const owner = fetchFrom('127.0.0.3');

  beforeAll(async () => {
    // Low per-address limits, so that the tests need few hashes (the defaults are 100 failures a
    // day and 300 successful logins an hour).
    app = await startTestServer(
      {},
      {
        loginLimits: { ...DEFAULT_LOGIN_LIMITS, failuresPerAddressPerDay: 10, successesPerAddressPerHour: 3 },
      },
    );
  });
  afterAll(() => app.close());

  it('a stranger’s 20 wrong passwords for ada do not stop ada logging in from her address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      statuses.push(
        (await login(app.issuer, 'ada@example.com', `guess-${i}`, undefined, stranger)).response.status,
      );
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(11);
    expect(statuses.slice(11).every((s) => s === 429)).toBe(true);
    const ada = await login(app.issuer, 'ada@example.com', 'ada-lovelace', undefined, owner);
    expect(ada.response.status).toBe(303);
    expect(ada.cookie).toBeDefined();
  });

  it('refuses a fourth successful login within the hour from one address (limit 3 here) with 429; another address still signs in', async () => {
    const busy = fetchFrom('127.0.0.5');
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (await login(app.issuer, 'grace@example.com', 'grace-hopper', undefined, busy)).response.status,
      );
    expect(statuses).toEqual([303, 303, 303, 429]);
    const other = fetchFrom('127.0.0.6');
    expect(
      (await login(app.issuer, 'grace@example.com', 'grace-hopper', undefined, other)).response.status,
    ).toBe(303);
  });

  it('stops a spray across 200 emails from one address; another address still signs in', async () => {
    const sprayer = fetchFrom('127.0.0.4');
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) {
      statuses.push(
        (await login(app.issuer, `user${i}@example.com`, 'Summer2030!', undefined, sprayer)).response.status,
      );
    }
    expect(statuses.slice(0, 11).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(11).every((s) => s === 429)).toBe(true);
    expect(
      (await login(app.issuer, 'grace@example.com', 'grace-hopper', undefined, owner)).response.status,
    ).toBe(303);
  });
});
