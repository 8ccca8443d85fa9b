/**
 * The node adapter hands the core its request target as Node read it, instead of parsing the URL
 * the bridge built from it, only when parsing would give back exactly that target: checked against
 * the WHATWG URL parser on targets made of the characters and pieces it treats specially (dot
 * segments, percent-encoded dots, quotes, fragments, empty queries, non-ASCII).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { verbatimTarget } from '../../src/adapters/fetch-messages.js';

/** What the core reads from a URL: its path and query, as the URL parser gives them. */
function parsedTarget(target: string): string {
  const url = new URL(`http://127.0.0.1:3000${target}`);
  return url.pathname + url.search;
}

const piece = fc.oneof(
  fc.constantFrom('/', '.', '..', '%2e', '%2E', '.%2e', '?', '#', "'", '"', '%', '%27', '&', '=', '+'),
  fc.constantFrom(' ', '\\', '<', '>', '`', '{', '}', '|', '^', '[', ']', 'é', '\u2028', '\t', ';', ':', '@'),
  fc.constantFrom('api', 'oauth', 'token', 'code=abc', 'state=x_y-z~', '.well-known', 'a(b)*c!$,'),
  fc.string({ unit: 'grapheme-ascii', maxLength: 4 }),
);
const target = fc.array(piece, { maxLength: 12 }).map((parts) => `/${parts.join('')}`);

describe('verbatimTarget', () => {
  it('keeps a target only when parsing its URL gives back exactly it (path and query)', () => {
    fc.assert(
      fc.property(target, (t) => {
        const kept = verbatimTarget(t);
        if (kept !== undefined) expect(parsedTarget(t)).toBe(t);
      }),
      { numRuns: 20_000 },
    );
  });

  it('keeps the targets OAuth requests carry', () => {
    for (const t of [
      '/api/oauth/token',
      '/api/oauth/userinfo',
      '/oauth/authorize?response_type=code&client_id=abc-123_~&redirect_uri=http%3A%2F%2F127.0.0.1%3A8080%2Fcb&scope=openid%20profile&state=a.b&code_challenge=Zm9v-_x&code_challenge_method=S256',
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      expect(verbatimTarget(t)).toBe(t);
      expect(parsedTarget(t)).toBe(t);
    }
  });

  it('leaves to the URL parser what it would change: dot segments, quotes in a query, fragments, empty queries, spaces, non-ASCII', () => {
    for (const t of [
      '/api/oauth/../oauth/token',
      '/api/oauth/%2e%2e/oauth/token',
      '/api/oauth/./token',
      '/api/oauth/token/..',
      "/oauth/authorize?state='x'",
      '/api/oauth/token#fragment',
      '/api/oauth/token?',
      '/oauth/authorize?state=a b',
      '/oauth/authorize?state=é',
      '/oauth/authorize?state="x"',
      'http://127.0.0.1:3000/api/oauth/token',
      '*',
    ]) {
      expect(verbatimTarget(t)).toBeUndefined();
    }
  });
});
