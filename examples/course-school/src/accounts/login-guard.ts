/**
 * Login throttling, the pattern rate-limiter-flexible documents for login endpoints, plus a bound
 * on the cost of password hashing and on successful logins:
 *
 * 1. slow brute force: failed logins per client address (IPv6: per /64) per day, whatever the
 *    email; past the limit the address is refused for a day (a spray across many emails stops);
 * 2. consecutive failures per (email, address): past the limit that pair is refused for an hour,
 *    and a success resets it. Keyed by the pair, a stranger's failures never lock the account for
 *    its owner, who signs in from another address;
 * 3. successful logins per address per hour: one valid account cannot be used to keep the hash
 *    gate busy or to fill the session table;
 * 4. a hash gate: at most `concurrentHashes` scrypt computations at once (each holds one of libuv's
 *    four threads for ~130 ms; Web Crypto, DNS and file I/O share that pool), at most `hashQueue`
 *    logins waiting; beyond, `busy` (503) at once. A flood of logins costs a bounded share of the
 *    pool and of memory, and nothing else starves.
 *
 * A refused attempt costs no hash. The counters are the library's bounded memory limiter
 * (`createBoundedMemoryLimiter` from `portcullis/rate-limit`), each holding at most `trackedKeys`
 * keys, so memory has a ceiling however many addresses an attacker has (an IPv6 /48 is 65 536 /64
 * keys). Making room never drops a counter that reached its limit (a refusal in force stays one);
 * it may drop the oldest counter still under its limit, and only after `trackedKeys` newer counters
 * were started. Counters are only created by attempts that cost a hash, so that takes `trackedKeys`
 * hashed logins (hours of the whole gate at ~15 hashes a second) from many addresses, each within
 * its own budget: far more guesses than the forgotten counter had left. When every slot holds a
 * counter at its limit, new keys share one overflow counter with the same limit, so they are
 * limited together, never let through. Several instances count separately (the limits then apply
 * per instance).
 * @module
 */
import { type BoundedMemoryLimiter, createBoundedMemoryLimiter } from 'portcullis/rate-limit';
import type { LoginLimits } from '../config.js';

/** The outcome of one login attempt. */
export type LoginOutcome<T> =
  | { readonly kind: 'ok'; readonly value: T }
  | { readonly kind: 'wrong' }
  | { readonly kind: 'throttled'; readonly retryAfterSeconds: number }
  | { readonly kind: 'busy'; readonly retryAfterSeconds: number };

/** Runs login attempts under the limits. */
export interface LoginGuard {
  /**
   * One attempt: refused at once (`throttled`, no hash) when the address or the (email, address)
   * pair is over its failure limit, or the address used its successful logins of the hour;
   * otherwise `verify` runs through the hash gate (`busy` when the gate's queue is full). A `null`
   * from `verify` is a failure and is counted; a value resets the pair and counts a success.
   *
   * @param email - the email as typed, lower-cased (an unknown one counts like a known one)
   * @param address - the client's rate-limit key (`createClientAddressResolver(...).key`)
   * @param verify - checks the password (one scrypt computation, also for unknown emails)
   */
  attempt<T>(email: string, address: string, verify: () => Promise<T | null>): Promise<LoginOutcome<T>>;
  /** Keys the counters hold now, at most three times `trackedKeys` (for metrics and tests). */
  keysTracked(): number;
}

/** Thrown by a {@link HashGate} whose queue is full. */
export class HashGateFullError extends Error {
  override readonly name = 'HashGateFullError';
}

/** Runs at most `concurrency` tasks at once, with at most `queue` waiting. */
export interface HashGate {
  /** @throws HashGateFullError when `queue` tasks are already waiting */
  run<T>(task: () => Promise<T>): Promise<T>;
}

/** A concurrency limit with a bounded queue (FIFO). */
export function createHashGate(concurrency: number, queue: number): HashGate {
  let active = 0;
  const waiting: (() => void)[] = [];
  return {
    async run(task) {
      if (active < concurrency) active++;
      else {
        if (waiting.length >= queue) throw new HashGateFullError('too many logins are waiting for a hash');
        // The finishing task hands its slot over: `active` does not change.
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
      try {
        return await task();
      } finally {
        const next = waiting.shift();
        if (next === undefined) active--;
        else next();
      }
    },
  };
}

const DAY = 86_400;

/** Counts one attempt; the limiter's refusal (the key just passed its limit, now refused) is expected. */
async function count(limiter: BoundedMemoryLimiter, key: string): Promise<void> {
  await limiter.consume(key).catch((refusal: unknown) => {
    if (refusal instanceof Error) throw refusal;
  });
}

/** Milliseconds until a key may try again: 0 unless it has used `allowed` attempts or more. */
async function wait(limiter: BoundedMemoryLimiter, key: string, allowed: number): Promise<number> {
  const state = await limiter.get(key);
  return state !== null && state.consumedPoints >= allowed ? state.msBeforeNext : 0;
}

/** Creates the guard of the login form. */
export function createLoginGuard(
  limits: LoginLimits,
  gate = createHashGate(limits.concurrentHashes, limits.hashQueue),
): LoginGuard {
  const maxKeys = limits.trackedKeys;
  const failuresPerAddress = createBoundedMemoryLimiter({
    points: limits.failuresPerAddressPerDay,
    durationSeconds: DAY,
    blockSeconds: DAY,
    maxKeys,
  });
  const failuresInARow = createBoundedMemoryLimiter({
    points: limits.consecutiveFailuresPerAccount,
    // Consecutive failures are remembered until a success (or a week), not per short window.
    durationSeconds: 7 * DAY,
    blockSeconds: 3600,
    maxKeys,
  });
  const successesPerAddress = createBoundedMemoryLimiter({
    points: limits.successesPerAddressPerHour,
    durationSeconds: 3600,
    maxKeys,
  });

  return {
    async attempt(email, address, verify) {
      const pair = `${email}\u0000${address}`;
      // A failure limit lets its last failure be checked (then refuses); successes stop at the limit.
      const waits = await Promise.all([
        wait(failuresPerAddress, address, limits.failuresPerAddressPerDay + 1),
        wait(failuresInARow, pair, limits.consecutiveFailuresPerAccount + 1),
        wait(successesPerAddress, address, limits.successesPerAddressPerHour),
      ]);
      const longest = Math.max(...waits);
      if (longest > 0) return { kind: 'throttled', retryAfterSeconds: Math.ceil(longest / 1000) };

      let value: Awaited<ReturnType<typeof verify>>;
      try {
        value = await gate.run(verify);
      } catch (error) {
        if (error instanceof HashGateFullError) return { kind: 'busy', retryAfterSeconds: 1 };
        throw error;
      }
      if (value === null) {
        await Promise.all([count(failuresPerAddress, address), count(failuresInARow, pair)]);
        return { kind: 'wrong' };
      }
      await Promise.all([failuresInARow.delete(pair), count(successesPerAddress, address)]);
      return { kind: 'ok', value };
    },
    keysTracked: () => failuresPerAddress.size + failuresInARow.size + successesPerAddress.size,
  };
}
