/**
 * The key a token is stored under. Storage never holds a token's value, only its SHA-256; a token
 * this server issues also carries the time it was made, and its key starts with that time, so that
 * the keys of new tokens sort after the old ones.
 *
 * Why: a refresh inserts two tokens and updates a third, each in a primary-key index. With keys
 * that are bare hashes, each insert lands on a random page of an index that, after a million tokens,
 * is larger than the database's cache: PostgreSQL reads the page back and writes it whole to its
 * log after every checkpoint. Keys that start with the time land together on the pages the last
 * inserts already hold (the ids of clients and grants do the same, `timeOrderedId`).
 *
 * Where the time is in the token:
 * - an opaque token (a refresh token, an opaque access token) is `timeOrderedId` with 32 random
 *   bytes: eight characters of the time in milliseconds, then 43 characters (256 bits) of random;
 * - a JWT access token's `jti` is `timeOrderedId` with 16 random bytes (30 characters), and is its
 *   first claim, so that its time is read from the first bytes of the payload without parsing it.
 *
 * A token of an earlier release (43 random characters, or a JWT whose `jti` is 22) has no time; its
 * key is the bare hash, as it was stored. The time is taken from the presented token unverified:
 * a token that lies about its time gets a key no stored token has, and is not found.
 * @module
 */
import { type RandomSource, randomToken, sha256, timeOrderedId } from '../core/crypto.js';

/** Characters of the time at the start of a time-ordered token, `jti` and key. */
const TIME_CHARS = 8;
/** An opaque token this release issues: the time, then 32 random bytes in base64url. */
const OPAQUE_TOKEN = /^[A-Za-z0-9_-]{51}$/;
/** A `jti` this release issues: the time, then 16 random bytes in base64url. */
const ORDERED_JTI = /^[A-Za-z0-9_-]{30}$/;
/** Its length. */
const ORDERED_JTI_CHARS = 30;
/** Base64url text, unpadded. */
const BASE64URL = /^[A-Za-z0-9_-]*$/;
/** Characters of a SHA-256 digest in base64url, the end of every key. */
const DIGEST_CHARS = 43;
/** How the payload of a JWT access token this release signs begins: its `jti` is the first claim. */
const JTI_FIRST = '{"jti":"';
/**
 * Base64url characters that encode the payload's first 42 bytes: `{"jti":"`, the 30 characters of
 * the `jti` and its closing quote, with room to spare.
 */
const PAYLOAD_HEAD_CHARS = 56;

/**
 * A new opaque token (refresh token, opaque access token): the time, then 256 bits of randomness;
 * without the time (`tokens.timeInTokens: false`), 256 bits of randomness as earlier releases.
 * @param random - the random source
 * @param nowMs - epoch milliseconds, or `undefined` for a token without the time
 */
export function mintOpaqueToken(random: RandomSource, nowMs: number | undefined): string {
  return nowMs === undefined ? randomToken(random, 32) : timeOrderedId(random, nowMs, 32);
}

/**
 * A new `jti` for a JWT access token: the time, then 128 bits of randomness (the token's key starts
 * with the time); without the time, 128 bits of randomness as earlier releases.
 * @param random - the random source
 * @param nowMs - epoch milliseconds, or `undefined` for a `jti` without the time
 */
export function mintJti(random: RandomSource, nowMs: number | undefined): string {
  return nowMs === undefined ? randomToken(random, 16) : timeOrderedId(random, nowMs, 16);
}

/**
 * The time prefix a presented token's key starts with: the first characters of an opaque token of
 * this release, or of the `jti` a JWT of this release begins its payload with; `''` for anything
 * else (a token of an earlier release, or no token of ours), whose key is its bare hash.
 */
function timeOf(token: string): string {
  if (OPAQUE_TOKEN.test(token)) return token.slice(0, TIME_CHARS);
  const dot = token.indexOf('.');
  if (dot < 0) return '';
  const head = decodedHead(token.slice(dot + 1, dot + 1 + PAYLOAD_HEAD_CHARS));
  const end = JTI_FIRST.length + ORDERED_JTI_CHARS;
  if (!head.startsWith(JTI_FIRST) || head.charAt(end) !== '"') return '';
  const jti = head.slice(JTI_FIRST.length, end);
  return ORDERED_JTI.test(jti) ? jti.slice(0, TIME_CHARS) : '';
}

/** Base64url text as one character per byte; `''` when it is not base64url. */
function decodedHead(text: string): string {
  if (!BASE64URL.test(text)) return '';
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  // A length of 1 mod 4 cannot end a base64 text; drop the stray character.
  return atob(b64.slice(0, b64.length - (b64.length % 4 === 1 ? 1 : 0)));
}

/**
 * The key storage holds a token under (`tokenHash` of its record): the time the token was made,
 * when it carries one, then the base64url SHA-256 of the whole value. A key never reveals the
 * value; the same value always has the same key. For code that looks a presented token up in the
 * storage itself (an admin tool, a resource server sharing the database without
 * {@link storageVerifier}). Tokens of earlier releases have no time: their key is the bare
 * SHA-256, as they were stored.
 *
 * @param token - the access or refresh token, as presented
 * @returns the key of its record
 * @see docs/storage.md, "Token keys that grow with time"; docs/upgrading.md, "Tokens carry their time"
 * @example
 * ```ts
 * import { memoryStorage, tokenKey } from 'portcullis';
 *
 * const storage = memoryStorage();
 * const presented = 'AO9x3Cc-4qvP6m0lJ7Q0l1c2Jg3kH8dN0q5xZr1yWbTt2sVn0aE';
 * const record = await storage.grants.getRefreshToken(await tokenKey(presented), Math.floor(Date.now() / 1000));
 * console.log(record === null ? 'unknown, expired or revoked' : record.grantId);
 * ```
 * @group Storage
 */
export async function tokenKey(token: string): Promise<string> {
  return timeOf(token) + (await sha256(token));
}

/**
 * {@link tokenKey} of a JWT access token just minted, from the `jti` it was signed with rather
 * than by decoding it again.
 * @param token - the signed JWT
 * @param jti - its `jti`, from {@link mintJti}
 */
export async function mintedJwtKey(token: string, jti: string): Promise<string> {
  return (ORDERED_JTI.test(jti) ? jti.slice(0, TIME_CHARS) : '') + (await sha256(token));
}

/**
 * The SHA-256 digest (base64url) at the end of a token's key: what `at_hash` is computed from.
 * @param key - a key from {@link tokenKey}
 */
export function digestOfKey(key: string): string {
  return key.slice(key.length - DIGEST_CHARS);
}
