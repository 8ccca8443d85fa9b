/**
 * Properties of `escapeHtml`, which every value on the library's pages goes through (ATK-45): its
 * output never holds a character that could open a tag or end an attribute, and decoding the five
 * entities gives the input back, whether the input needed escaping or took the no-copy path.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../../src/pages/html.js';

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
};
const ENTITY = /&(?:amp|lt|gt|quot|#39);/g;
const decode = (html: string) => html.replace(ENTITY, (e) => ENTITIES[e]!);

/** Strings dense in the special characters, and arbitrary text. */
const text = fc.oneof(
  fc.string({ unit: fc.constantFrom('&', '<', '>', '"', "'", 'a', ' ', ';', '#', 'é'), maxLength: 60 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

describe('escapeHtml', () => {
  it('ATK-45 leaves no < > " \' in its output, and only entities where & stood', () => {
    fc.assert(
      fc.property(text, (value) => {
        const html = escapeHtml(value);
        expect(html).not.toMatch(/[<>"']/);
        expect(html.replace(ENTITY, '')).not.toContain('&');
      }),
    );
  });

  it('round-trips: decoding the entities gives the input back', () => {
    fc.assert(
      fc.property(text, (value) => {
        expect(decode(escapeHtml(value))).toBe(value);
      }),
    );
  });

  it('returns text without special characters unchanged, and escapes text with them', () => {
    expect(escapeHtml('courses:read')).toBe('courses:read');
    expect(escapeHtml('')).toBe('');
    expect(escapeHtml('a&b')).toBe('a&amp;b');
  });
});
