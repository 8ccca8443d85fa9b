/**
 * The contract that makes a one-time value single use: client assertion `jti`s (RFC 7523 §3) and
 * DPoP proof `jti`s (RFC 9449 §11.1). One atomic "record if new" step, so it holds across server
 * instances when the store is shared (`storage.replay`, which every backend implements), and a
 * bounded memory implementation for tests and single-instance deployments.
 * @see RFC 7523 §3 (item 7), RFC 9449 §11.1, OpenID Connect Core §9
 * @module
 */
import { base64url } from 'jose';
import { OAuthError } from '../core/errors.js';
import type { ReplayStore } from '../storage/contract/replay.js';

export type { ReplayStore } from '../storage/contract/replay.js';

/**
 * Options of {@link memoryReplayStore}.
 *
 * @example
 * ```ts
 * import { memoryReplayStore, type MemoryReplayStoreOptions } from 'portcullis';
 *
 * const options: MemoryReplayStoreOptions = { maxEntries: 10_000 };
 * const replayStore = memoryReplayStore(options);
 * ```
 * @see RFC 9449 §11.1
 * @group Storage
 */
export interface MemoryReplayStoreOptions {
  /**
   * The most unexpired keys held. Default 100 000 (about 15 MB). When full of unexpired keys the
   * store refuses new ones with `temporarily_unavailable` rather than forgetting a live key, which
   * would let that value be replayed.
   */
  maxEntries?: number;
}

/** Default of {@link MemoryReplayStoreOptions.maxEntries}. */
const DEFAULT_MAX_ENTRIES = 100_000;

/**
 * A {@link ReplayStore} in this process's memory: exact for one instance, useless across several
 * (each instance would accept the value once). Use the storage's replay aggregate when more than
 * one instance serves the issuer.
 *
 * Memory is bounded: expired keys are purged when the store is full, and if every key is still
 * live the call fails closed with `temporarily_unavailable` (503, `Retry-After` until the oldest
 * key expires), never by forgetting a key that could then be replayed.
 *
 * @param options - the capacity
 * @returns a replay store
 * @throws OAuthError `temporarily_unavailable` (503) from `checkAndStore` when full of unexpired keys
 * @see RFC 7523 §3, RFC 9449 §11.1
 * @example
 * ```ts
 * import { memoryReplayStore } from 'portcullis';
 *
 * const store = memoryReplayStore();
 * const now = Math.floor(Date.now() / 1000);
 * await store.checkAndStore('pkj:abc', now + 60, now); // true
 * await store.checkAndStore('pkj:abc', now + 60, now); // false: a replay
 * ```
 * @group Storage
 */
export function memoryReplayStore(options: MemoryReplayStoreOptions = {}): ReplayStore {
  const maxEntries = Math.max(1, options.maxEntries ?? DEFAULT_MAX_ENTRIES);
  const entries = new Map<string, number>();
  // No key expires before this instant (epoch seconds): a purge before then would find nothing.
  let earliestExpiry = Number.POSITIVE_INFINITY;

  function purge(now: number): void {
    if (now < earliestExpiry) return;
    earliestExpiry = Number.POSITIVE_INFINITY;
    for (const [key, expiresAt] of entries) {
      if (expiresAt <= now) entries.delete(key);
      else if (expiresAt < earliestExpiry) earliestExpiry = expiresAt;
    }
  }

  return {
    // Everything runs synchronously between awaits, so the check and the write are one step.
    async checkAndStore(key, expiresAt, now) {
      const seen = entries.get(key);
      if (seen !== undefined && seen > now) return false;
      if (seen === undefined && entries.size >= maxEntries) purge(now);
      if (seen === undefined && entries.size >= maxEntries) {
        const retryAfter = Math.max(1, Math.ceil(earliestExpiry - now));
        throw new OAuthError(
          'temporarily_unavailable',
          'too many one-time values are in use; try again later',
          {
            headers: { 'retry-after': String(retryAfter) },
          },
        );
      }
      entries.set(key, expiresAt);
      if (expiresAt < earliestExpiry) earliestExpiry = expiresAt;
      return true;
    },
  };
}

const encoder = new TextEncoder();

/**
 * The key under which a one-time value is recorded: `<purpose>:` + base64url(SHA-256(parts joined
 * by NUL)). Fixed length whatever the client sends (a `jti` may be long), and parts cannot run into
 * each other (`a` + `bc` differs from `ab` + `c`). Web Crypto only.
 *
 * @param purpose - the namespace, e.g. `pkj` for client assertions, `dpop` for DPoP proofs
 * @param parts - what identifies the value, e.g. the client_id and the `jti`
 * @returns a key of at most 60 characters for {@link ReplayStore.checkAndStore}
 * @see RFC 9449 §11.1
 * @example
 * ```ts
 * const key = await replayKey('pkj', ['client-1', 'a-jti']); // 'pkj:' + 43 base64url characters
 * ```
 */
export async function replayKey(purpose: string, parts: readonly string[]): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', encoder.encode(parts.join('\u0000')));
  return `${purpose}:${base64url.encode(new Uint8Array(digest))}`;
}
