/**
 * Caching of valid metadata documents: how long (from `Cache-Control`, within the server's
 * bounds) and a bounded least-recently-used store. Errors and invalid documents never get here.
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4.4; RFC 9111 §5.2.2
 * @module
 */

/** Lifetime bounds, in seconds. */
export interface CacheLifetimeBounds {
  /** Used when the response has no `Cache-Control` or no `max-age`. */
  readonly defaultTtlSeconds: number;
  /** A positive `max-age` below this is raised to it. */
  readonly minTtlSeconds: number;
  /** A `max-age` above this is lowered to it. */
  readonly maxTtlSeconds: number;
}

/**
 * How long a valid document may be cached, in seconds; 0 means not at all.
 * - `no-store` or `no-cache` → 0 (the publisher asked for a fresh copy each time; this server does
 *   not revalidate, so it refetches);
 * - `max-age=0`, or `max-age` invalid or repeated → 0 (RFC 9111 §4.2.1 treats such a response as stale);
 * - `max-age=N` → N clamped to [min, max];
 * - no header, or no `max-age` → the default.
 *
 * @param cacheControl - the `Cache-Control` header value, if any
 * @param bounds - the server's bounds
 * @returns the lifetime in seconds
 * @see RFC 9111 §5.2.2.1 (max-age), §5.2.2.4 (no-cache), §5.2.2.5 (no-store)
 * @example
 * ```ts
 * cacheLifetimeSeconds('public, max-age=86400', { defaultTtlSeconds: 300, minTtlSeconds: 60, maxTtlSeconds: 3600 }); // 3600
 * ```
 */
export function cacheLifetimeSeconds(cacheControl: string | undefined, bounds: CacheLifetimeBounds): number {
  if (cacheControl === undefined) return bounds.defaultTtlSeconds;
  let maxAge: number | undefined;
  let maxAgeSeen = false;
  for (const part of cacheControl.split(',')) {
    const directive = part.trim();
    const eq = directive.indexOf('=');
    const name = (eq === -1 ? directive : directive.slice(0, eq)).trim().toLowerCase();
    if (name === 'no-store' || name === 'no-cache') return 0;
    if (name === 'max-age') {
      if (maxAgeSeen) return 0;
      maxAgeSeen = true;
      const raw =
        eq === -1
          ? ''
          : directive
              .slice(eq + 1)
              .trim()
              .replace(/^"(.*)"$/, '$1');
      if (!/^[0-9]{1,10}$/.test(raw)) return 0;
      maxAge = Number(raw);
    }
  }
  if (maxAge === undefined) return bounds.defaultTtlSeconds;
  if (maxAge === 0) return 0;
  return Math.min(bounds.maxTtlSeconds, Math.max(bounds.minTtlSeconds, maxAge));
}

/**
 * A bounded map whose entries expire, evicting the least recently used entry when full. Memory
 * stays below `maxEntries` values whatever clients are presented.
 */
export class ExpiringLruCache<V> {
  readonly #entries = new Map<string, { readonly value: V; readonly expiresAt: number }>();
  readonly #maxEntries: number;

  /** @param maxEntries - the most entries kept (at least 1) */
  constructor(maxEntries: number) {
    this.#maxEntries = Math.max(1, maxEntries);
  }

  /** The value of `key` unless absent or expired at `now` (epoch ms); a hit becomes the most recent. */
  get(key: string, now: number): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    if (entry.expiresAt <= now) return undefined;
    // Re-inserting moves the key to the end of the Map's order: the most recently used.
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Stores `value` until `expiresAt` (epoch ms), evicting the least recently used entry if full. */
  set(key: string, value: V, expiresAt: number): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { value, expiresAt });
  }

  /** Forgets `key`. */
  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** The number of entries held (expired ones included until touched or evicted). */
  get size(): number {
    return this.#entries.size;
  }
}
