/**
 * Properties of the encoding and hashing shortcuts in `src/core/crypto.ts`: the native base64url
 * agrees with the portable one (RFC 4648 §5), and `at_hash` derived from the storage hash equals
 * the left half of a fresh SHA-256 (OIDC Core §3.1.3.6).
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
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
