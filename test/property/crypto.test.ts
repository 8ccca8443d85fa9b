/**
 * Properties of the encoding and hashing shortcuts in `src/core/crypto.ts`: the native base64url
 * agrees with the portable one (RFC 4648 §5), and `at_hash` derived from the storage hash equals
 * the left half of a fresh SHA-256 (OIDC Core §3.1.3.6); the synchronous AES-GCM of `node:crypto`
 * seals and opens exactly what Web Crypto does (NIST SP 800-38D), so successors sealed by either open
 * with the other.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  aesGcmDecrypt,
  aesGcmEncrypt,
  base64url,
  base64urlText,
  leftHalfOfDigest,
  portableBase64url,
  sha256,
} from '../../src/core/crypto.js';

describe('base64url', () => {
  it('the native and the portable encoders agree on any bytes, also on a view into a larger buffer', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(8), (bytes, offset) => {
        const backing = new Uint8Array(bytes.length + offset + 3);
        backing.set(bytes, offset);
        const view = backing.subarray(offset, offset + bytes.length);
        expect(base64url(view)).toBe(portableBase64url(bytes));
        expect(base64url(bytes)).toBe(Buffer.from(bytes).toString('base64url'));
      }),
    );
  });

  it('encodes text as UTF-8 (RFC 7515 §7.1)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 100 }), (text) => {
        expect(base64urlText(text)).toBe(portableBase64url(new TextEncoder().encode(text)));
      }),
    );
  });
});

describe('at_hash from the storage hash (OIDC Core §3.1.3.6)', () => {
  it('equals the base64url of the left 16 bytes of SHA-256, without hashing again', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), async (token) => {
        const expected = createHash('sha256').update(token).digest().subarray(0, 16).toString('base64url');
        expect(leftHalfOfDigest(await sha256(token))).toBe(expected);
      }),
    );
  });
});

describe('AES-256-GCM through node:crypto (the refresh grace seal)', () => {
  const importKey = (key: Uint8Array<ArrayBuffer>) =>
    crypto.subtle.importKey('raw', key, 'AES-GCM', false, ['encrypt', 'decrypt']);
  const bytes = (length: number) => fc.uint8Array({ minLength: length, maxLength: length });

  it('seals what Web Crypto seals, ciphertext then 16-byte tag, and each opens the other', async () => {
    await fc.assert(
      fc.asyncProperty(bytes(32), bytes(12), fc.uint8Array({ maxLength: 200 }), async (k, n, p) => {
        const [key, iv, plain] = [new Uint8Array(k), new Uint8Array(n), new Uint8Array(p)];
        const ours = await aesGcmEncrypt(key, iv, plain);
        const web = new Uint8Array(
          await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, await importKey(key), plain),
        );
        expect(ours).toEqual(web);
        expect(await aesGcmDecrypt(key, iv, new Uint8Array(web))).toEqual(plain);
        const opened = await crypto.subtle.decrypt(
          { name: 'AES-GCM', iv },
          await importKey(key),
          new Uint8Array(ours),
        );
        expect(new Uint8Array(opened)).toEqual(plain);
      }),
      { numRuns: 50 },
    );
  });

  it('refuses a wrong key, an altered byte and a truncated tag', async () => {
    const key = new Uint8Array(32).fill(7);
    const iv = new Uint8Array(12).fill(1);
    const sealed = new Uint8Array(await aesGcmEncrypt(key, iv, new TextEncoder().encode('successor')));
    await expect(aesGcmDecrypt(new Uint8Array(32).fill(8), iv, sealed)).rejects.toThrow();
    const altered = sealed.slice();
    altered[0] = altered[0]! ^ 1;
    await expect(aesGcmDecrypt(key, iv, altered)).rejects.toThrow();
    await expect(aesGcmDecrypt(key, iv, sealed.slice(0, 10))).rejects.toThrow();
  });
});
