/**
 * Server-provided DPoP nonces without storage: a nonce is the current time window and an HMAC of
 * it under a secret every instance shares, so any instance can check any nonce. A nonce is
 * accepted in the window it was issued in and the next one: between one and two windows of life.
 * Off by default (the server asks for nonces only when configured with a secret).
 * @see RFC 9449 §8 (authorization server nonces), §9 (resource server nonces), §11.1
 * @module
 */
import { base64url } from 'jose';
import type { Clock } from '../core/context.js';
import { DEFAULTS } from '../defaults.js';

/**
 * Issues and checks DPoP nonces. See {@link createDpopNonceSource}.
 *
 * @example
 * ```ts
 * import type { DpopNonceSource } from 'portcullis';
 *
 * declare const nonces: DpopNonceSource;
 * const header = { 'dpop-nonce': await nonces.current() };
 * ```
 * @see RFC 9449 §8
 * @group DPoP (RFC 9449)
 */
export interface DpopNonceSource {
  /** The nonce to send now in a `DPoP-Nonce` header. */
  current(): Promise<string>;
  /** Whether `nonce` was issued by a holder of the secret in this window or the previous one. */
  check(nonce: string): Promise<boolean>;
}

/**
 * Options of {@link createDpopNonceSource}.
 *
 * @example
 * ```ts
 * import type { DpopNonceOptions } from 'portcullis';
 *
 * declare const sharedSecret: string; // at least 32 bytes, the same on every instance
 * const options: DpopNonceOptions = { secret: sharedSecret, windowSeconds: 120 };
 * ```
 * @see RFC 9449 §8
 * @group DPoP (RFC 9449)
 */
export interface DpopNonceOptions {
  /** The HMAC key, shared by every instance: at least 32 bytes (UTF-8 text or raw bytes). */
  readonly secret: string | Uint8Array;
  /** Length of a window in seconds; a nonce lives one to two windows. Default 300. */
  readonly windowSeconds?: number;
  /** Clock, epoch milliseconds. Default `Date.now`. */
  readonly clock?: Clock;
}

const encoder = new TextEncoder();
const NONCE = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/;

/**
 * Creates a stateless nonce source: `<window, base 36>.<base64url HMAC-SHA-256 of it>`. Checking
 * uses Web Crypto's HMAC verification (constant time).
 *
 * @param options - the shared secret and the window length
 * @returns the nonce source
 * @throws TypeError when the secret is shorter than 32 bytes or the window is not a positive integer
 * @see RFC 9449 §8, §9, §11.1
 * @example
 * ```ts
 * import { createDpopNonceSource } from 'portcullis';
 *
 * const nonces = createDpopNonceSource({ secret: 'a shared secret of at least 32 bytes!!' });
 * const nonce = await nonces.current();
 * await nonces.check(nonce); // true for the next 5 to 10 minutes
 * ```
 * @group DPoP (RFC 9449)
 */
export function createDpopNonceSource(options: DpopNonceOptions): DpopNonceSource {
  const secret = typeof options.secret === 'string' ? encoder.encode(options.secret) : options.secret;
  if (secret.byteLength < 32) throw new TypeError('the DPoP nonce secret must be at least 32 bytes');
  const windowSeconds = options.windowSeconds ?? DEFAULTS.dpop.nonces.windowSeconds;
  if (!Number.isInteger(windowSeconds) || windowSeconds <= 0) {
    throw new TypeError('the DPoP nonce window must be a positive number of seconds');
  }
  const clock = options.clock ?? Date.now;
  const key = crypto.subtle.importKey(
    'raw',
    new Uint8Array(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign', 'verify'],
  );
  const label = (slot: number) => encoder.encode(`portcullis dpop nonce ${slot}`);
  const slotNow = () => Math.floor(clock() / 1000 / windowSeconds);
  let cached: { slot: number; nonce: string } | undefined;

  return {
    async current() {
      const slot = slotNow();
      if (cached?.slot === slot) return cached.nonce;
      const mac = new Uint8Array(await crypto.subtle.sign('HMAC', await key, label(slot)));
      cached = { slot, nonce: `${slot.toString(36)}.${base64url.encode(mac)}` };
      return cached.nonce;
    },
    async check(nonce) {
      const match = NONCE.exec(nonce);
      if (match === null) return false;
      const slot = Number.parseInt(match[1]!, 36);
      if (slot.toString(36) !== match[1]) return false;
      const now = slotNow();
      if (slot !== now && slot !== now - 1) return false;
      let mac: Uint8Array;
      try {
        mac = base64url.decode(match[2]!);
      } catch {
        return false;
      }
      return crypto.subtle.verify('HMAC', await key, new Uint8Array(mac), label(slot));
    },
  };
}
