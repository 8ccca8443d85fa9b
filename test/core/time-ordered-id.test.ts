/**
 * The ids the server stores as primary keys (clients, grants) sort by their creation time, so a
 * B-tree takes new ones at its right edge; their entropy is the random part's. They never start
 * with `-`, which a command line reads as an option.
 */
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { randomToken, secureRandom, timeOrderedId } from '../../src/core/crypto.js';

const zeros = (length: number) => new Uint8Array(length);
const ones = (length: number) => new Uint8Array(length).fill(0xff);
const YEAR_MS = 365.2425 * 86_400_000;
/** The last millisecond the eight digits hold (in the year 9495). */
const LAST = 54 * 64 ** 7 - 1;

describe('timeOrderedId', () => {
  it('is eight characters of time, then the random bytes in base64url', () => {
    const id = timeOrderedId(secureRandom, Date.UTC(2026, 11, 5), 18);
    expect(id).toMatch(/^[A-Za-z0-9_-]{8}[A-Za-z0-9_-]{24}$/);
    expect(timeOrderedId(zeros, 0)).toBe(`A-------${randomToken(zeros, 16)}`);
    expect(timeOrderedId(ones, 0, 16).slice(8)).toBe(randomToken(ones, 16));
  });

  it('sorts as the times do, in byte order (SQLite BINARY, PostgreSQL COLLATE "C", JavaScript <), whatever the random part', () => {
    // Times across digit boundaries (63 → 64, 64² - 1 → 64², …), today, the year 2109 (the first
    // digit grows), and the last one that fits.
    const times = [
      0,
      1,
      62,
      63,
      64,
      65,
      4095,
      4096,
      262_143,
      262_144,
      Date.UTC(2026, 11, 5),
      64 ** 7 - 1,
      64 ** 7,
      LAST,
    ];
    for (let i = 1; i < times.length; i++) {
      const earlier = timeOrderedId(ones, times[i - 1]!); // the largest random part
      const later = timeOrderedId(zeros, times[i]!); // the smallest
      expect(earlier < later, `${times[i - 1]} (${earlier}) before ${times[i]} (${later})`).toBe(true);
      expect(Buffer.compare(Buffer.from(earlier), Buffer.from(later))).toBe(-1);
    }
  });

  it('starts with a letter, never with "-": a command line takes the id as a value, not an option', () => {
    // From 1970 to the year 5593 the first character is a letter (then `_`, then letters again).
    for (let year = 0; year <= 3600; year += 7) {
      const id = timeOrderedId(secureRandom, year * YEAR_MS, 18);
      expect(id, `the year ${1970 + year}`).toMatch(/^[A-Za-z]/);
    }
    for (const ms of [0, Date.UTC(2026, 11, 5), 64 ** 7, LAST, Number.MAX_SAFE_INTEGER]) {
      expect(timeOrderedId(zeros, ms).charAt(0)).not.toBe('-');
    }
    // What a leading `-` did: Node's own parser refuses it as the value of an option.
    const clientId = timeOrderedId(secureRandom, Date.UTC(2026, 11, 5), 18);
    const options = { 'client-id': { type: 'string' } } as const;
    expect(parseArgs({ args: ['--client-id', clientId], options }).values['client-id']).toBe(clientId);
    expect(() => parseArgs({ args: ['--client-id', `-${clientId.slice(1)}`], options })).toThrow(/ambiguous/);
  });

  it('keeps a random part that differs between two ids of the same millisecond', () => {
    const now = Date.now();
    const a = timeOrderedId(secureRandom, now);
    const b = timeOrderedId(secureRandom, now);
    expect(a.slice(0, 8)).toBe(b.slice(0, 8));
    expect(a.slice(8)).not.toBe(b.slice(8));
  });

  it('takes a clock before 1970 (or a fractional one) as the nearest millisecond from 0, and one past the year 9495 as its last', () => {
    expect(timeOrderedId(zeros, -5).slice(0, 8)).toBe(timeOrderedId(zeros, 0).slice(0, 8));
    expect(timeOrderedId(zeros, 64.9).slice(0, 8)).toBe(timeOrderedId(zeros, 64).slice(0, 8));
    expect(timeOrderedId(zeros, LAST).slice(0, 8)).toBe('zzzzzzzz');
    expect(timeOrderedId(zeros, LAST + 1).slice(0, 8)).toBe('zzzzzzzz');
    expect(new Date(LAST).getUTCFullYear()).toBe(9495);
  });
});
