/**
 * Login throttling, the pattern rate-limiter-flexible documents for login endpoints, plus a bound
 * on the cost of password hashing:
 *
 * 1. slow brute force: failed logins per client address (IPv6: per /64) per day, whatever the
 *    email; past the limit the address is refused for a day (a spray across many emails stops);
 * 2. consecutive failures per (email, address): past the limit that pair is refused for an hour,
 *    and a success resets it. Keyed by the pair, a stranger's failures never lock the account for
 *    its owner, who signs in from another address;
 * 3. a hash gate: at most `concurrentHashes` scrypt computations at once (each holds one of libuv's
 *    four threads for ~130 ms; Web Crypto, DNS and file I/O share that pool), at most `hashQueue`
 *    logins waiting; beyond, `busy` (503) at once. A flood of logins costs a bounded share of the
 *    pool and of memory, and nothing else starves.
 *
 * A refused attempt costs no hash. Counters live in rate-limiter-flexible's memory limiter: each
 * key expires on its own timer and nothing is ever evicted to make room, so no flood of other keys
 * can reset a victim's counter. Memory stays bounded by the limits themselves: an address gets at
 * most `failuresPerAddressPerDay + 1` failures counted a day, so at most that many pair keys. Several
 * instances count separately (the limits then apply per instance).
 * @module
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
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
   * pair is over its limit; otherwise `verify` runs through the hash gate (`busy` when the gate's
   * queue is full). A `null` from `verify` is a failure and is counted; a value resets the pair.
   *
   * @param email - the email as typed, lower-cased (an unknown one counts like a known one)
   * @param address - the client's rate-limit key (`createClientAddressResolver(...).key`)
   * @param verify - checks the password (one scrypt computation, also for unknown emails)
   */
  attempt<T>(email: string, address: string, verify: () => Promise<T | null>): Promise<LoginOutcome<T>>;
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

/** Counts a failure; a limiter's refusal (the key just went over its limit and is now blocked) is expected. */
async function count(limiter: RateLimiterMemory, key: string): Promise<void> {
  await limiter.consume(key).catch((refusal: unknown) => {
    if (!(refusal instanceof RateLimiterRes)) throw refusal;
  });
}

/** Creates the guard of the login form. */
export function createLoginGuard(
  limits: LoginLimits,
  gate = createHashGate(limits.concurrentHashes, limits.hashQueue),
): LoginGuard {
  const perAddress = new RateLimiterMemory({
    keyPrefix: 'login_fail_address',
    points: limits.failuresPerAddressPerDay,
    duration: DAY,
    blockDuration: DAY,
  });
  const perPair = new RateLimiterMemory({
    keyPrefix: 'login_fail_pair',
    points: limits.consecutiveFailuresPerAccount,
    // Consecutive failures are remembered until a success (or a week), not per short window. The
    // memory limiter keeps each key with a timer: a duration beyond 24.8 days (2^31 ms) would
    // overflow Node's timers and forget the key at once.
    duration: 7 * DAY,
    blockDuration: 3600,
  });

  return {
    async attempt(email, address, verify) {
      const pair = `${email}\u0000${address}`;
      const [byAddress, byPair] = await Promise.all([perAddress.get(address), perPair.get(pair)]);
      const waits = [
        byAddress !== null && byAddress.consumedPoints > limits.failuresPerAddressPerDay
          ? byAddress.msBeforeNext
          : 0,
        byPair !== null && byPair.consumedPoints > limits.consecutiveFailuresPerAccount
          ? byPair.msBeforeNext
          : 0,
      ];
      const wait = Math.max(...waits);
      if (wait > 0) return { kind: 'throttled', retryAfterSeconds: Math.ceil(wait / 1000) };

      let value: Awaited<ReturnType<typeof verify>>;
      try {
        value = await gate.run(verify);
      } catch (error) {
        if (error instanceof HashGateFullError) return { kind: 'busy', retryAfterSeconds: 1 };
        throw error;
      }
      if (value === null) {
        await Promise.all([count(perAddress, address), count(perPair, pair)]);
        return { kind: 'wrong' };
      }
      await perPair.delete(pair);
      return { kind: 'ok', value };
    },
  };
}
