/**
 * The replay aggregate: one-time values (client assertion `jti`s, DPoP proof `jti`s) remembered
 * until they expire, so that each is accepted once across every instance sharing the storage.
 * @module
 */

/**
 * Remembers one-time values until they expire. The only operation is atomic: of any number of
 * concurrent calls with one `key`, on any number of instances, exactly one returns `true`.
 *
 * Contract:
 * - `key` is at most 200 ASCII characters: a namespace and a SHA-256 digest of the client-chosen
 *   parts, so a backend can use it as a primary key as is;
 * - `expiresAt` and `now` are epoch seconds; a key whose `expiresAt` is at or before `now` is
 *   treated as absent (and may be purged at any time), so it can be stored again;
 * - `true`: the key was absent (or expired) and is now recorded until `expiresAt`;
 *   `false`: the key is recorded and unexpired: the value was used before;
 * - a backend that cannot answer throws (the caller turns it into `temporarily_unavailable` or
 *   `server_error`); it never returns `true` without having recorded the key.
 *
 * @example
 * ```ts
 * import type { ReplayStore } from 'portcullis';
 *
 * // A Redis-backed store: SET NX with an expiry is one atomic step.
 * declare const redis: { set(key: string, value: string, mode: 'EXAT', at: number, nx: 'NX'): Promise<'OK' | null> };
 * const replay: ReplayStore = {
 *   async checkAndStore(key, expiresAt) {
 *     return (await redis.set(`replay:${key}`, '1', 'EXAT', expiresAt, 'NX')) === 'OK';
 *   },
 * };
 * ```
 * @see RFC 7523 §3, RFC 9449 §11.1
 * @group Storage
 * @category Contract
 */
export interface ReplayStore {
  /**
   * Records `key` until `expiresAt` unless it is already recorded and unexpired at `now`.
   *
   * @param key - the namespaced, hashed one-time value (at most 200 ASCII characters)
   * @param expiresAt - epoch seconds until which the key must be remembered
   * @param now - the caller's current time, epoch seconds
   * @returns `true` when the key was new (and is now recorded), `false` when it was seen before
   */
  checkAndStore(key: string, expiresAt: number, now: number): Promise<boolean>;
}
