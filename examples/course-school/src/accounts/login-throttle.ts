/**
 * Slows password guessing: after five failed logins for one email within 15 minutes, further
 * attempts for it are refused until the window passes. In memory, per process: enough for the
 * reference server; a cluster would keep the counters in the database.
 * @module
 */

const WINDOW_MS = 15 * 60 * 1000;
const MAX_FAILURES = 5;
const MAX_TRACKED = 10_000;

/** Failure counter by key (the lower-cased email). */
export class LoginThrottle {
  readonly #failures = new Map<string, { count: number; since: number }>();

  /** Seconds until `key` may try again, or 0. */
  retryAfter(key: string, now: number): number {
    const entry = this.#failures.get(key);
    if (entry === undefined || now - entry.since >= WINDOW_MS) return 0;
    return entry.count >= MAX_FAILURES ? Math.ceil((entry.since + WINDOW_MS - now) / 1000) : 0;
  }

  fail(key: string, now: number): void {
    const entry = this.#failures.get(key);
    if (entry === undefined || now - entry.since >= WINDOW_MS) {
      // Bounded memory: forget the oldest key when an attacker sprays emails.
      if (this.#failures.size >= MAX_TRACKED) {
        const oldest = this.#failures.keys().next().value;
        if (oldest !== undefined) this.#failures.delete(oldest);
      }
      this.#failures.set(key, { count: 1, since: now });
    } else entry.count++;
  }

  succeed(key: string): void {
    this.#failures.delete(key);
  }
}
