/**
 * fast-check generators of hostile input (ABU-05), shared by the property tests of the parsers and
 * the handlers and by the fuzz test that drives every endpoint on every storage backend:
 *
 * - {@link hostileCodePoint}: what is refused at parse time everywhere (NUL, unpaired surrogates,
 *   non-characters);
 * - {@link invisibleCodePoint}: what display names strip and identifiers refuse (controls, bidi
 *   controls, zero-width and other format characters, line separators);
 * - {@link hostileString} / {@link nastyString}: text with at least one hostile character, and text
 *   that is merely unpleasant (markup, SQL, invisible characters, long runs) but legal;
 * - {@link encodedHostile}: hostile content as it arrives percent-encoded in a query or form body,
 *   including byte sequences that are not UTF-8 (an encoded surrogate, an overlong NUL);
 * - {@link formOf}, {@link hostileForm}, {@link hostileJsonValue}, {@link invalidUtf8}: whole bodies.
 */
import fc from 'fast-check';

/** Characters no parameter or JSON string may hold. */
export const HOSTILE_CHARACTERS: readonly string[] = [
  '\u0000',
  '\ud800', // unpaired high surrogate
  '\udfff', // unpaired low surrogate
  '\ufdd0',
  '\ufdef',
  '\ufffe',
  '\uffff',
  '\u{1fffe}',
  '\u{10ffff}',
];

/** Characters that are legal but must never reach a display name: controls, bidi, zero-width. */
export const INVISIBLE_CHARACTERS: readonly string[] = [
  '\u0001',
  '\t',
  '\n',
  '\r',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u061c',
  '\u200b',
  '\u200c',
  '\u200d',
  '\u200e',
  '\u200f',
  '\u2028',
  '\u2029',
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2060',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\ufeff',
];

/** Payloads that are legal text but meant to hurt whatever stores or shows them. */
const PAYLOADS = [
  '<img src=x onerror=alert(1)>',
  '"><script>alert(1)</script>',
  "'; DROP TABLE clients; --",
  '\\u0000',
  '%00',
  '$' + '{jndi:ldap://x}',
  '../../etc/passwd',
  '\u00e9\u0301',
  '\ud83d\ude00',
  'a'.repeat(300),
];

export const hostileCodePoint: fc.Arbitrary<string> = fc.constantFrom(...HOSTILE_CHARACTERS);
export const invisibleCodePoint: fc.Arbitrary<string> = fc.constantFrom(...INVISIBLE_CHARACTERS);

/** Ordinary text around the interesting characters (no hostile ones). */
const plain = fc.string({ maxLength: 12 });

/**
 * Text with at least one hostile character somewhere. A visible character follows each one, so two
 * generated surrogates never pair up into an ordinary character.
 */
export const hostileString: fc.Arbitrary<string> = fc
  .tuple(plain, hostileCodePoint, plain, fc.option(hostileCodePoint, { nil: '' }))
  .map(([a, bad, b, more]) => `${a}${bad}x${b}${more}`);

/** Legal but unpleasant text: invisible characters, markup, SQL, long runs, emoji. */
export const nastyString: fc.Arbitrary<string> = fc
  .array(fc.oneof(plain, invisibleCodePoint, fc.constantFrom(...PAYLOADS)), { minLength: 1, maxLength: 6 })
  .map((parts) => parts.join(''));

/** Any string a client might send: hostile, nasty or plain. */
export const anyString: fc.Arbitrary<string> = fc.oneof(hostileString, nastyString, plain);

/** True when `text` has no unpaired surrogate (what `String#isWellFormed` says, on every Node we run). */
export function wellFormed(text: string): boolean {
  return !/\p{Cs}/u.test(text);
}

/** Percent-encoding of UTF-8 bytes, for a string with no unpaired surrogate. */
function percentEncode(text: string): string {
  return [...new TextEncoder().encode(text)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
}

/**
 * Hostile content as it arrives in a query or form body: a hostile character percent-encoded as
 * UTF-8, or a byte sequence that is not UTF-8 at all (an encoded surrogate, an overlong NUL, a
 * stray continuation byte, a truncated sequence).
 */
export const encodedHostile: fc.Arbitrary<string> = fc.oneof(
  hostileString.filter(wellFormed).map(percentEncode),
  fc.constantFrom('%ed%a0%80', '%ED%BF%BF', '%c0%80', '%80', '%ff', '%e2%82', '%f4%90%80%80'),
);

/**
 * Joins name/value pairs into a form body, percent-encoding each value unless `raw` is set (then
 * the value goes in as is: hostile characters unencoded, or already percent-encoded bytes).
 * Encoded values must be well formed (`encodeURIComponent` throws on an unpaired surrogate).
 */
export function formOf(pairs: readonly (readonly [name: string, value: string, raw?: boolean])[]): string {
  return pairs
    .map(
      ([name, value, raw]) =>
        `${encodeURIComponent(name)}=${raw === true ? value : encodeURIComponent(value)}`,
    )
    .join('&');
}

/**
 * A form body (or query string) in which one of `names` carries hostile content: raw (a string body
 * can hold an unpaired surrogate), or percent-encoded.
 *
 * @param names - the parameters of the endpoint
 * @param base - well-formed values for the other parameters
 */
export function hostileForm(
  names: readonly string[],
  base: Readonly<Record<string, string>> = {},
): fc.Arbitrary<{ body: string; target: string }> {
  // Raw values keep their hostile characters unencoded, but never a delimiter of the form itself.
  const raw = hostileString.map((v) => v.replace(/[&=#%+]/g, '_'));
  return fc.tuple(fc.constantFrom(...names), fc.oneof(raw, encodedHostile)).map(([target, value]) => {
    const pairs: [string, string, boolean?][] = Object.entries(base)
      .filter(([name]) => name !== target)
      .map(([name, v]) => [name, v]);
    pairs.push([target, value, true]);
    return { body: formOf(pairs), target };
  });
}

/** A JSON value with a hostile string somewhere inside (a member value, an array element or a member name). */
export const hostileJsonValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileString,
    fc
      .tuple(fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }), tie('value'))
      .map(([list, bad]) => [...list, bad]),
    fc
      .tuple(fc.string({ maxLength: 8 }), tie('value'))
      .map(([key, bad]) => ({ [key === '__proto__' ? 'k' : key]: bad })),
    hostileString.map((key) => ({ [key]: 'value' })),
  ),
})).value;

/** Bytes that are not valid UTF-8, for bodies sent as bytes. */
export const invalidUtf8: fc.Arbitrary<Uint8Array> = fc
  .tuple(
    fc.uint8Array({ maxLength: 20 }),
    fc.constantFrom([0xc0, 0x80], [0xed, 0xa0, 0x80], [0xff], [0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80]),
    fc.uint8Array({ maxLength: 20 }),
  )
  .map(([a, bad, b]) =>
    Uint8Array.from([...a.filter((x) => x < 0x80), ...bad, ...b.filter((x) => x < 0x80)]),
  );
