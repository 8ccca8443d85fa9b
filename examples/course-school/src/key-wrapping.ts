/**
 * The signing keys' wrapping (`KEY_WRAPPING_SECRET`): the library stores each private signing key
 * as what `wrap` returns, so the database, and every backup of it, holds the keys only encrypted
 * under a secret kept elsewhere (the environment, a secrets manager). AES-256-GCM through Web
 * Crypto, a random 96-bit IV per key; a key wrapped here reads `v1.<iv>.<ciphertext>` (base64url).
 *
 * The same options go to the server (oauth.ts) and to `cli.js rotate-keys`, so that keys rotated
 * by the tool are wrapped as the server's are, and the tool can read the server's keys.
 * @module
 */
import type { AuthorizationServerOptions, KeyWrapping } from 'portcullis';

const PREFIX = 'v1';
/** Bound to every wrapped key, so a ciphertext made for another purpose with the same secret does not open. */
const CONTEXT = new TextEncoder().encode('course-school signing key');

/**
 * AES-256-GCM wrapping under `secret` (32 bytes).
 *
 * @param secret - the decoded `KEY_WRAPPING_SECRET`
 * @returns the library's `keys.wrapping`
 */
export async function aesKeyWrapping(secret: Uint8Array<ArrayBuffer>): Promise<KeyWrapping> {
  const key = await crypto.subtle.importKey('raw', secret, 'AES-GCM', false, ['encrypt', 'decrypt']);
  return {
    async wrap(privateJwk) {
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const sealed = await crypto.subtle.encrypt(
        { name: 'AES-GCM', iv, additionalData: CONTEXT },
        key,
        new TextEncoder().encode(privateJwk),
      );
      return `${PREFIX}.${Buffer.from(iv).toString('base64url')}.${Buffer.from(sealed).toString('base64url')}`;
    },
    async unwrap(wrapped) {
      const [prefix, iv, sealed, ...rest] = wrapped.split('.');
      if (prefix !== PREFIX || iv === undefined || sealed === undefined || rest.length > 0)
        throw new Error('not a key wrapped by KEY_WRAPPING_SECRET');
      try {
        const opened = await crypto.subtle.decrypt(
          { name: 'AES-GCM', iv: Buffer.from(iv, 'base64url'), additionalData: CONTEXT },
          key,
          Buffer.from(sealed, 'base64url'),
        );
        return new TextDecoder().decode(opened);
      } catch {
        // GCM's tag check failed: another secret wrapped it, or the stored text was altered.
        throw new Error(
          'KEY_WRAPPING_SECRET does not open this signing key: it was wrapped with another secret',
        );
      }
    },
  };
}

/**
 * The library's `keys` options of the server and of `cli.js rotate-keys`.
 *
 * @param secret - the decoded `KEY_WRAPPING_SECRET`, or undefined: keys stored as JWK text
 */
export async function signingKeyOptions(
  secret: Uint8Array<ArrayBuffer> | undefined,
): Promise<AuthorizationServerOptions['keys']> {
  return secret === undefined ? undefined : { wrapping: await aesKeyWrapping(secret) };
}
