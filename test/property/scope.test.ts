/**
 * Properties of `parseScope` (RFC 6749 §3.3): only `invalid_scope` errors, tokens from the
 * scope-token character set, distinct and in first-seen order; well-formed lists round-trip.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../src/core/errors.js';
import { formatScope, parseScope } from '../../src/protocol/scope.js';

// scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
const SCOPE_CHARS = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).filter(
  (c) => c !== '"' && c !== '\\',
);
const scopeToken = fc.string({ unit: fc.constantFrom(...SCOPE_CHARS), minLength: 1, maxLength: 20 });

describe('parseScope', () => {
  it('throws only invalid_scope, and returns distinct valid tokens', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 200 }),
          fc
            .array(fc.oneof(scopeToken, fc.constantFrom('', ' ', '"', '\\', '\t', 'é')), { maxLength: 30 })
            .map((a) => a.join(' ')),
        ),
        (value) => {
          let tokens: string[];
          try {
            tokens = parseScope(value);
          } catch (error) {
            expect(error).toBeInstanceOf(OAuthError);
            expect((error as OAuthError).code).toBe('invalid_scope');
            return;
          }
          expect(new Set(tokens).size).toBe(tokens.length);
          for (const token of tokens) expect(token).toMatch(/^[\x21\x23-\x5b\x5d-\x7e]+$/);
          expect(tokens).toEqual(value.split(' ').filter((t, i, all) => t !== '' && all.indexOf(t) === i));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('round-trips well-formed scope lists, whatever the spacing', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(scopeToken, { maxLength: 100 }),
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 101, maxLength: 101 }),
        (tokens, gaps) => {
          const spaced = tokens.map((t, i) => t + ' '.repeat(gaps[i]!)).join('');
          expect(parseScope(` ${spaced}`)).toEqual(tokens);
          expect(parseScope(formatScope(tokens))).toEqual(tokens);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses more than 100 distinct scopes and values over 4096 characters', () => {
    fc.assert(
      fc.property(fc.uniqueArray(scopeToken, { minLength: 101, maxLength: 120 }), (tokens) => {
        const value = tokens.join(' ');
        fc.pre(value.length <= 4096);
        expect(() => parseScope(value)).toThrow(/too many scopes/);
      }),
      { numRuns: 50 },
    );
    expect(() => parseScope('a'.repeat(4097))).toThrow(/too long/);
  });

  it('treats an absent scope as empty', () => {
    expect(parseScope(undefined)).toEqual([]);
  });
});
