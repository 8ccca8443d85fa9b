/**
 * Randomness, hashing and constant-time comparison. Web Crypto everywhere; on runtimes that offer
 * `node:crypto` through `process.getBuiltinModule` (Node 20.16+, Bun, Deno) the synchronous SHA-256
 * is used instead, which saves a thread-pool round trip per hash on the hot paths, and where the
 * one-shot `crypto.hash` exists (Node 20.12+, 21.7+) it replaces `createHash` (half the cost for
 * the short inputs hashed here). Base64url goes through the runtime's native encoder
 * (`Buffer#toString('base64url')`) when there is one: about seven times cheaper than the portable
 * loop for a JWT payload.
 * @module
 */

import { builtinModule } from './builtins.js';

type NodeCipher = {
  update(data: Uint8Array): Uint8Array;
  final(): Uint8Array;
};

type NodeCrypto = {
  createHash(alg: 'sha256'): {
    update(data: string): { digest(enc: 'base64url'): string; digest(): Uint8Array };
  };
  hash?: (alg: 'sha256', data: string, outputEncoding: 'base64url') => string;
  createCipheriv(
    alg: 'aes-256-gcm',
    key: Uint8Array,
    iv: Uint8Array,
  ): NodeCipher & { getAuthTag(): Uint8Array };
  createDecipheriv(
    alg: 'aes-256-gcm',
    key: Uint8Array,
    iv: Uint8Array,
  ): NodeCipher & { setAuthTag(tag: Uint8Array): void };
};

type NativeBuffer = {
  from(data: ArrayBufferLike, byteOffset: number, length: number): { toString(enc: 'base64url'): string };
  from(data: string, encoding: 'utf8'): { toString(enc: 'base64url'): string };
};

const nodeCrypto = builtinModule<NodeCrypto>('node:crypto');
const nodeBuffer = builtinModule<{ Buffer: NativeBuffer }>('node:buffer')?.Buffer;
const encoder = new TextEncoder();

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Base64url without padding (RFC 4648 §5). */
export function base64url(bytes: Uint8Array): string {
  if (nodeBuffer !== undefined) {
    return nodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
  }
  return portableBase64url(bytes);
}

/** Base64url of the UTF-8 encoding of `text` (a JWS header or payload, RFC 7515 §7.1). */
export function base64urlText(text: string): string {
  if (nodeBuffer !== undefined) return nodeBuffer.from(text, 'utf8').toString('base64url');
  return portableBase64url(encoder.encode(text));
}

/** The portable encoder, for runtimes without a native one. Exported for tests. */
export function portableBase64url(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += B64URL[n >> 18]! + B64URL[(n >> 12) & 63]! + B64URL[(n >> 6) & 63]! + B64URL[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += B64URL[n >> 18]! + B64URL[(n >> 12) & 63]!;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += B64URL[n >> 18]! + B64URL[(n >> 12) & 63]! + B64URL[(n >> 6) & 63]!;
  }
  return out;
}

/**
 * A source of random bytes; injectable for tests. Codes, tokens, client ids and secrets are drawn
 * from it (256 bits for codes and tokens). Never replace the default (Web Crypto) in production.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage, type RandomSource } from 'portcullis';
 *
 * // Deterministic ids in a snapshot test.
 * let counter = 0;
 * const random: RandomSource = (length) => new Uint8Array(length).fill(counter++ % 256);
 * await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage(), random });
 * ```
 * @see RFC 6749 §10.10 (credential guessing)
 * @group Runtime
 */
export type RandomSource = (length: number) => Uint8Array<ArrayBuffer>;

const POOL_SIZE = 4096;
let pool = new Uint8Array(0);
let poolOffset = 0;

/**
 * Cryptographically secure random bytes from Web Crypto, drawn from a pool refilled 4 KiB at a time:
 * one `getRandomValues` call costs about as much as the bytes of a hundred tokens.
 */
export const secureRandom: RandomSource = (length) => {
  if (length > POOL_SIZE / 4) return crypto.getRandomValues(new Uint8Array(length));
  if (poolOffset + length > pool.length) {
    pool = crypto.getRandomValues(new Uint8Array(POOL_SIZE));
    poolOffset = 0;
  }
  const out = pool.slice(poolOffset, poolOffset + length);
  // Bytes handed out are zeroed in the pool, so they can never be handed out twice.
  pool.fill(0, poolOffset, poolOffset + length);
  poolOffset += length;
  return out;
};

/** A random base64url string with `bytes` bytes of entropy (256 bits by default). */
export function randomToken(random: RandomSource, bytes = 32): string {
  return base64url(random(bytes));
}

/** The base64url alphabet in ascending byte order: strings of its digits sort as the numbers they write. */
const ORDERED_DIGITS = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
/** Eight digits of six bits of time. */
const TIME_DIGITS = 8;
/**
 * Added to the time, so that its first digit (0 until the year 2109) is written `A`, not `-`: an
 * argument that starts with `-` is an option to command-line parsers, and `--client-id -P86…`
 * fails in Node's `util.parseArgs` and Python's `argparse`. The first character is then a letter
 * until the year 5593 (then `_`, then letters again).
 */
const TIME_OFFSET = ORDERED_DIGITS.indexOf('A') * 64 ** (TIME_DIGITS - 1);
/** The last millisecond whose digits still fit (in the year 9495); later ones are written as it. */
const TIME_MAX = 64 ** TIME_DIGITS - 1 - TIME_OFFSET;

/**
 * A random identifier that sorts by creation time: eight characters of the time in milliseconds
 * (base64url characters in byte order, offset so that the first is a letter and never `-`), then
 * `bytes` random bytes in base64url, whose entropy is the identifier's. For the ids the server
 * stores as primary keys (clients, grants): in a B-tree, keys that grow with time are inserted at
 * its right edge, on pages already cached and dirty, where random ones land each on a page of
 * their own (on SQLite a registration cost 19 µs of storage CPU with random ids and 12 with
 * these). The time is not a secret: a registration answers it (`client_id_issued_at`).
 *
 * @param random - the random source
 * @param nowMs - epoch milliseconds (clamped to the range from 0 to the year 9495)
 * @param bytes - random bytes after the time (128 bits by default)
 */
export function timeOrderedId(random: RandomSource, nowMs: number, bytes = 16): string {
  let t = TIME_OFFSET + Math.min(TIME_MAX, Math.max(0, Math.floor(nowMs)));
  let time = '';
  for (let i = 0; i < TIME_DIGITS; i++) {
    time = ORDERED_DIGITS[t % 64] + time;
    t = Math.floor(t / 64);
  }
  return time + randomToken(random, bytes);
}

/** Base64url SHA-256 of a UTF-8 string. */
export async function sha256(text: string): Promise<string> {
  if (nodeCrypto !== undefined) {
    if (nodeCrypto.hash !== undefined) return nodeCrypto.hash('sha256', text, 'base64url');
    return nodeCrypto.createHash('sha256').update(text).digest('base64url');
  }
  const digest = await crypto.subtle.digest('SHA-256', encoder.encode(text));
  return base64url(new Uint8Array(digest));
}

/** Raw SHA-256 of a UTF-8 string. */
export async function sha256Bytes(text: string): Promise<Uint8Array<ArrayBuffer>> {
  if (nodeCrypto !== undefined) return new Uint8Array(nodeCrypto.createHash('sha256').update(text).digest());
  return new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
}

/**
 * The base64url of the left half (16 bytes) of a SHA-256 digest, from the digest's own base64url
 * (43 characters, as {@link sha256} returns it), without hashing again: 16 bytes are 21 whole
 * characters plus one holding the last 2 bits, which the full encoding shares with the next byte.
 * This is `at_hash` (OIDC Core §3.1.3.6) from the access token's storage hash.
 */
export function leftHalfOfDigest(digestBase64url: string): string {
  const shared = B64URL.indexOf(digestBase64url.charAt(21));
  return digestBase64url.slice(0, 21) + B64URL[shared & 0b110000]!;
}

/**
 * Compares two strings in time that depends only on the longer length, never on where they differ.
 * Use it on fixed-length digests (the output of {@link sha256}), so length reveals nothing either.
 */
export function timingSafeEqual(a: string, b: string): boolean {
  const length = Math.max(a.length, b.length);
  let diff = a.length ^ b.length;
  for (let i = 0; i < length; i++) {
    diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  }
  return diff === 0;
}

/** The PKCE S256 transform: base64url(SHA-256(ASCII(verifier))) (RFC 7636 §4.2). */
export function s256(verifier: string): Promise<string> {
  return sha256(verifier);
}

/** The length of an AES-GCM authentication tag as Web Crypto appends it (128 bits). */
const GCM_TAG_BYTES = 16;

/**
 * AES-256-GCM encryption of `plaintext` under a raw 32-byte `key`: the ciphertext followed by its
 * 16-byte tag, as Web Crypto's `encrypt` returns it. With `node:crypto` it runs synchronously:
 * Web Crypto imports a `CryptoKey` and sends the work to the thread pool, which costs far more than
 * encrypting the few bytes of a token.
 */
export async function aesGcmEncrypt(
  key: Uint8Array<ArrayBuffer>,
  iv: Uint8Array<ArrayBuffer>,
  plaintext: Uint8Array<ArrayBuffer>,
): Promise<Uint8Array> {
  if (nodeCrypto !== undefined) {
    const cipher = nodeCrypto.createCipheriv('aes-256-gcm', key, iv);
    const head = cipher.update(plaintext);
    const tail = cipher.final();
    const tag = cipher.getAuthTag();
    const out = new Uint8Array(head.length + tail.length + tag.length);
    out.set(head, 0);
    out.set(tail, head.length);
    out.set(tag, head.length + tail.length);
    return out;
  }
  const cryptoKey = await crypto.subtle.importKey('raw', key, 'AES-GCM', false, ['encrypt']);
  return new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, cryptoKey, plaintext));
}

/**
 * The inverse of {@link aesGcmEncrypt}: `sealed` is the ciphertext followed by its 16-byte tag.
 * @throws when the tag does not verify (a wrong key, or altered bytes)
 */
export async function aesGcmDecrypt(
  key: Uint8Array<ArrayBuffer>,
  iv: Uint8Array<ArrayBuffer>,
  sealed: Uint8Array<ArrayBuffer>,
): Promise<Uint8Array> {
  if (nodeCrypto !== undefined) {
    if (sealed.length < GCM_TAG_BYTES) throw new Error('the sealed bytes are shorter than a GCM tag');
    const decipher = nodeCrypto.createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAuthTag(sealed.subarray(sealed.length - GCM_TAG_BYTES));
    const head = decipher.update(sealed.subarray(0, sealed.length - GCM_TAG_BYTES));
    const tail = decipher.final();
    const out = new Uint8Array(head.length + tail.length);
    out.set(head, 0);
    out.set(tail, head.length);
    return out;
  }
  const cryptoKey = await crypto.subtle.importKey('raw', key, 'AES-GCM', false, ['decrypt']);
  return new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv }, cryptoKey, sealed));
}
