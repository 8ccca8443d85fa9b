/**
 * Strict parsing of query strings, form bodies and JSON bodies. Every malformed input becomes an
 * {@link OAuthError}; nothing here throws anything else.
 *
 * Hostile characters are refused here, at the edge, before any string reaches storage, a log or a
 * page (ABU-05): NUL (which PostgreSQL cannot store in text), unpaired surrogates (which no UTF-8
 * can carry, so a database or a JSON encoder would fail or silently replace them) and Unicode
 * non-characters (U+FDD0..U+FDEF and U+xxFFFE/U+xxFFFF in every plane, "never to be interchanged").
 * Bytes that are not UTF-8 are refused when the body is decoded. Other control and format
 * characters are the concern of each field (display names strip them, identifiers refuse them).
 * @see RFC 6749 §3.1, §3.2 (parameters sent without a value are treated as omitted; no repeats)
 * @see Unicode §23.7 (non-characters); RFC 3629 §3 (surrogates are not UTF-8)
 * @module
 */
import { OAuthError, type OAuthErrorCode } from './errors.js';
import { mediaType, type OAuthRequest } from './http.js';

const MAX_PARAMS = 128;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** An unpaired surrogate (`u` mode sees one as a code point of category Cs) or a non-character. */
const UNPAIRED_OR_NONCHARACTER = /[\p{Cs}\p{Noncharacter_Code_Point}]/u;
/** A code unit from U+D800 up (no `u` flag: code units, not code points). */
const HIGH_CODE_UNIT = /[\ud800-\uffff]/;

/**
 * A hostile character of `text` as `U+XXXX` (NUL first, else the first unpaired surrogate or
 * non-character), or `undefined` when there is none. Every parameter and JSON string the library
 * parses passes this check, and is refused with `400 invalid_request` (`invalid_client_metadata`
 * at registration) when it finds one; hosts apply the same rule to their own routes, so that such
 * a string never reaches their storage (PostgreSQL cannot store NUL in text), a log or a page.
 *
 * @param text - any string from a request
 * @returns the code point in `U+` notation, or `undefined`
 * @see Unicode §23.7 (non-characters); RFC 3629 §3 (surrogates are not UTF-8)
 * @example
 * ```ts
 * import { hostileCharacter } from 'portcullis';
 *
 * hostileCharacter('a\u0000b'); // 'U+0000'
 * hostileCharacter('x\ud800'); // 'U+D800' (an unpaired surrogate)
 * hostileCharacter('caf\u00e9'); // undefined
 *
 * // A form field of the host's own login page, refused as the library's endpoints refuse it.
 * declare const email: string;
 * const found = hostileCharacter(email);
 * if (found !== undefined) throw new Error(`the email contains ${found}, which is not accepted`);
 * ```
 * @group Request and Response
 */
export function hostileCharacter(text: string): string | undefined {
  if (text.includes('\u0000')) return 'U+0000';
  // Every other hostile character has a code unit from U+D800 up (a surrogate half, or a
  // non-character of the BMP's end): text without one, nearly all, needs no further look.
  if (!HIGH_CODE_UNIT.test(text)) return undefined;
  const match = UNPAIRED_OR_NONCHARACTER.exec(text);
  if (match === null) return undefined;
  return `U+${match[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The words after "contains U+XXXX": why such a character is never accepted. */
const HOSTILE_REASON =
  'which is not accepted (NUL, unpaired surrogates and Unicode non-characters never are)';

/**
 * Throws `code` (400) when `value` contains a hostile character, naming `what` and the character.
 *
 * @param value - the string to check
 * @param what - what it is, for the description (e.g. "the 'state' parameter")
 * @param code - the error code (`invalid_request`, or `invalid_client_metadata` at registration)
 * @throws OAuthError `code` with 400
 */
export function refuseHostile(value: string, what: string, code: OAuthErrorCode = 'invalid_request'): void {
  const found = hostileCharacter(value);
  if (found !== undefined) throw new OAuthError(code, `${what} contains ${found}, ${HOSTILE_REASON}`);
}

function decodeComponent(raw: string): string {
  if (raw.indexOf('%') === -1 && raw.indexOf('+') === -1) return raw;
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    throw new OAuthError('invalid_request', 'a parameter has malformed percent-encoding or is not UTF-8');
  }
}

/**
 * The parameters of one request. `get` refuses repeated parameters (RFC 6749 §3.1) and treats an
 * empty value as absent; `getAll` is for the few that may repeat (`resource`, RFC 8707 §2).
 */
export class Params {
  readonly #values: Record<string, string[]>;

  constructor(values: Record<string, string[]>) {
    this.#values = values;
  }

  /** Parses `a=1&b=2` (no leading `?`). */
  static parse(raw: string): Params {
    const values: Record<string, string[]> = Object.create(null);
    if (raw.length === 0) return new Params(values);
    let count = 0;
    let start = 0;
    while (start <= raw.length) {
      let end = raw.indexOf('&', start);
      if (end === -1) end = raw.length;
      if (end > start) {
        if (++count > MAX_PARAMS) throw new OAuthError('invalid_request', 'too many parameters');
        const eq = raw.indexOf('=', start);
        const hasValue = eq !== -1 && eq < end;
        const name = decodeComponent(raw.slice(start, hasValue ? eq : end));
        const value = hasValue ? decodeComponent(raw.slice(eq + 1, end)) : '';
        refuseHostile(name, 'a parameter name');
        refuseHostile(value, `the '${name.length > 40 ? `${name.slice(0, 40)}...` : name}' parameter`);
        const list = values[name];
        if (list === undefined) values[name] = [value];
        else list.push(value);
      }
      start = end + 1;
    }
    return new Params(values);
  }

  /** The single value of `name`, or `undefined` when absent or empty. */
  get(name: string): string | undefined {
    const list = this.#values[name];
    if (list === undefined) return undefined;
    if (list.length > 1) {
      throw new OAuthError('invalid_request', `the '${name}' parameter was given more than once`);
    }
    const value = list[0];
    return value === '' ? undefined : value;
  }

  /** Every non-empty value of `name`, for parameters that may repeat. */
  getAll(name: string): string[] {
    const list = this.#values[name];
    return list === undefined ? [] : list.filter((v) => v !== '');
  }

  /** True when `name` was sent at all (even empty). */
  has(name: string): boolean {
    return this.#values[name] !== undefined;
  }

  /** Names that were sent more than once. */
  repeated(): string[] {
    return Object.keys(this.#values).filter((k) => (this.#values[k]?.length ?? 0) > 1);
  }

  /** The raw value lists, for callers that forward parameters. */
  entries(): [string, readonly string[]][] {
    return Object.entries(this.#values);
  }
}

/** Decodes the body as UTF-8, refusing invalid byte sequences. */
export function bodyText(request: OAuthRequest, code: OAuthErrorCode = 'invalid_request'): string {
  const body = request.body;
  if (body === undefined) return '';
  if (typeof body === 'string') return body;
  try {
    return utf8.decode(body);
  } catch {
    throw new OAuthError(code, 'the request body is not valid UTF-8');
  }
}

/** Body size in bytes; a string body is measured as the UTF-8 it stands for, not in UTF-16 units. */
export function bodySize(request: OAuthRequest): number {
  const body = request.body;
  if (body === undefined) return 0;
  if (typeof body !== 'string') return body.byteLength;
  let bytes = body.length;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    // U+0080..U+07FF take 2 bytes, the rest of the BMP 3; each half of a surrogate pair adds 1 (4 in all).
    if (c >= 0x80) bytes += c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 1 : 2;
  }
  return bytes;
}

/**
 * Parses an `application/x-www-form-urlencoded` body (RFC 6749 §3.2). Any other media type, a JSON
 * body included, is `invalid_request` with 400 (never 415).
 */
export function parseFormBody(request: OAuthRequest): Params {
  const type = mediaType(request);
  if (type !== 'application/x-www-form-urlencoded') {
    throw new OAuthError(
      'invalid_request',
      type === undefined
        ? 'the request needs an application/x-www-form-urlencoded body'
        : `the body must be application/x-www-form-urlencoded, not ${type}`,
    );
  }
  return Params.parse(bodyText(request));
}

/** The query string of a request as {@link Params}. */
export function parseQuery(request: OAuthRequest): Params {
  const url = request.url;
  const q = url.indexOf('?');
  if (q === -1) return Params.parse('');
  const hash = url.indexOf('#', q);
  return Params.parse(url.slice(q + 1, hash === -1 ? url.length : hash));
}

/**
 * Refuses a parsed JSON value holding a hostile character in any string, member names included,
 * however deep (iteratively: a deeply nested body cannot exhaust the stack).
 *
 * @param value - a value from `JSON.parse`
 * @param code - the error code
 * @throws OAuthError `code` naming the top-level member and the character
 */
export function refuseHostileJson(value: unknown, code: OAuthErrorCode): void {
  const pending: [unknown, string][] = [[value, 'the body']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, where] = next;
    if (typeof item === 'string') refuseHostile(item, where, code);
    else if (Array.isArray(item)) for (const element of item) pending.push([element, where]);
    else if (typeof item === 'object' && item !== null) {
      for (const [key, member] of Object.entries(item)) {
        const name = where === 'the body' ? `the member '${key.slice(0, 40)}'` : where;
        refuseHostile(key, where === 'the body' ? 'a member name' : `a member name in ${where}`, code);
        pending.push([member, name]);
      }
    }
  }
}

/**
 * Parses a JSON object body. Wrong media type, invalid UTF-8, invalid JSON, non-object values and
 * hostile characters in any string all become `code` (for registration, `invalid_client_metadata`)
 * with 400.
 */
export function parseJsonObject(request: OAuthRequest, code: OAuthErrorCode): Record<string, unknown> {
  const type = mediaType(request);
  if (type !== 'application/json') {
    throw new OAuthError(code, `the body must be application/json, not ${type ?? 'missing'}`);
  }
  const text = bodyText(request, code);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new OAuthError(code, 'the body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OAuthError(code, 'the body must be a JSON object');
  }
  // A parsed string holds a hostile character only through an escape (`\u0000`, `\ud800`) or a raw
  // code unit from U+D800 up: JSON refuses raw control characters. Text with neither, nearly every
  // body, needs no walk.
  if (text.includes('\\') || HIGH_CODE_UNIT.test(text)) refuseHostileJson(value, code);
  return value as Record<string, unknown>;
}
