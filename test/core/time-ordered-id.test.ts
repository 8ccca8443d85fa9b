/**
 * The ids the server stores as primary keys (clients, grants) sort by their creation time, so a
 * B-tree takes new ones at its right edge; their entropy is the random part's.
 */
import { describe, expect, it } from 'vitest';
import { randomToken, secureRandom, timeOrderedId } from '../../src/core/crypto.js';

const zeros = (length: number) => new Uint8Array(length);
const ones = (length: number) => new Uint8Array(length).fill(0xff);

describe('timeOrderedId', () => {
  it('is eight characters of time, then the random bytes in base64url', () => {
    const id = timeOrderedId(secureRandom, Date.UTC(2026, 11, 5), 18);
    expect(id).toMatch(/^[A-Za-z0-9_-]{8}[A-Za-z0-9_-]{24}$/);
    expect(timeOrderedId(zeros, 0)).toBe(`--------${randomToken(zeros, 16)}`);
    expect(timeOrderedId(ones, 0, 16).slice(8)).toBe(randomToken(ones, 16));
  });

  it('sorts as the times do, in byte order (SQLite BINARY, PostgreSQL COLLATE "C", JavaScript <), whatever the random part', () => {
    // Times across digit boundaries (63 → 64, 64² - 1 → 64², …), today, and the last one that fits.
    const times = [0, 1, 62, 63, 64, 65, 4095, 4096, 262_143, 262_144, Date.UTC(2026, 11, 5), 2 ** 48 - 1];
    for (let i = 1; i < times.length; i++) {
      const earlier = timeOrderedId(ones, times[i - 1]!); // the largest random part
      const later = timeOrderedId(zeros, times[i]!); // the smallest
      expect(earlier < later, `${times[i - 1]} (${earlier}) before ${times[i]} (${later})`).toBe(true);
      expect(Buffer.compare(Buffer.from(earlier), Buffer.from(later))).toBe(-1);
    }
  });

  it('keeps a random part that differs between two ids of the same millisecond', () => {
    const now = Date.now();
    const a = timeOrderedId(secureRandom, now);
    const b = timeOrderedId(secureRandom, now);
    expect(a.slice(0, 8)).toBe(b.slice(0, 8));
    expect(a.slice(8)).not.toBe(b.slice(8));
  });

  it('takes a clock before 1970 (or a fractional one) as the nearest millisecond from 0', () => {
    expect(timeOrderedId(zeros, -5).slice(0, 8)).toBe('--------');
    expect(timeOrderedId(zeros, 64.9).slice(0, 8)).toBe(timeOrderedId(zeros, 64).slice(0, 8));
  });
});
