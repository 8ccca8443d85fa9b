/**
 * Properties of the redirect-URI matcher (RFC 9700 §4.1.3, RFC 8252 §7.3): it never accepts a URI
 * that was not registered, except for a different port on a loopback URI, and it never throws.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkRegisteredRedirectUri,
  isLoopbackRedirect,
  matchRedirectUri,
} from '../../src/protocol/redirect-uri.js';

const LOOPBACK_HOSTS = ['127.0.0.1', '[::1]', 'localhost'] as const;
const PORTED = /^(http:\/\/(?:127\.0\.0\.1|\[::1\]|localhost))(?::([0-9]*))?(?=[/?]|$)/;

/** Oracle written independently of the matcher: the URI with its loopback port removed. */
function portless(uri: string): string | undefined {
  const m = PORTED.exec(uri);
  return m === null ? undefined : uri.replace(PORTED, '$1');
}

const segment = fc
  .stringMatching(/^[A-Za-z0-9\-._~!$&'()*+,;=:@]{1,8}$/)
  .filter((s) => s !== '.' && s !== '..');
const path = fc
  .array(segment, { minLength: 0, maxLength: 4 })
  .map((s) => (s.length === 0 ? '/' : `/${s.join('/')}`));
const query = fc.option(fc.stringMatching(/^[A-Za-z0-9=&._~-]{0,12}$/), { nil: undefined });
const port = fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined });

/** Registered loopback redirect URIs by the library's rule. */
const loopbackUri = fc
  .record({ host: fc.constantFrom(...LOOPBACK_HOSTS), port, path, query })
  .map(
    ({ host, port: p, path: pa, query: q }) =>
      `http://${host}${p === undefined ? '' : `:${p}`}${pa}${q === undefined ? '' : `?${q}`}`,
  );

const httpsUri = fc
  .record({ host: fc.constantFrom('app.example', 'a.b.example', 'client.example.com'), path, query })
  .map(({ host, path: pa, query: q }) => `https://${host}${pa}${q === undefined ? '' : `?${q}`}`);

/** True when `uri` has a fragment mark, a backslash, a space, a control or a non-ASCII character. */
function unsafeCharacter(uri: string): boolean {
  for (const c of uri) {
    const code = c.codePointAt(0)!;
    if (code <= 0x20 || code >= 0x7f || c === '#' || c === '\\') return true;
  }
  return false;
}

/** The raw authority: between `//` and the first `/` or `?`. */
function authority(uri: string): string {
  return /^[a-z]+:\/\/([^/?]*)/.exec(uri)?.[1] ?? '';
}

/** Edits an attacker may try; none of them only changes the port. */
function mutations(uri: string): fc.Arbitrary<string> {
  const hostStart = uri.indexOf('//') + 2;
  const hostEnd = (() => {
    let i = hostStart;
    while (i < uri.length && uri[i] !== '/' && uri[i] !== '?' && uri[i] !== ':') i++;
    if (uri.startsWith('http://[::1]')) return hostStart + 5;
    return i;
  })();
  const host = uri.slice(hostStart, hostEnd);
  const replaceHost = (h: string) => uri.slice(0, hostStart) + h + uri.slice(hostEnd);
  const at = fc.integer({ min: 0, max: uri.length });
  return fc
    .oneof(
      at.chain((i) =>
        fc
          .constantFrom('\t', '\n', '\r', ' ', '\u0000', '\\', '#', '%', '\u00a0', '\u200b', '\u202e')
          .map((c) => uri.slice(0, i) + c + uri.slice(i)),
      ),
      fc.constantFrom(
        uri.toUpperCase(),
        uri.replace(/^http/, 'HTTP'),
        uri.replace(/^https?/, (s) => (s === 'http' ? 'https' : 'http')),
        `${uri}/`,
        `${uri}#`,
        `${uri}#f`,
        uri.includes('?') ? `${uri}&x=1` : `${uri}?`,
        `${uri}?x=1`,
        uri.replace(/\/([^/?]*)(\?|$)/, '/$1/../x$2'),
        uri.replace('//', '//user@'),
        uri.replace('//', `//${host}:1@evil.example/`),
        replaceHost('evil.example'),
        replaceHost(`${host}.evil.example`),
        replaceHost(`${host}.`),
        replaceHost('2130706433'),
        replaceHost('0x7f.0.0.1'),
        replaceHost('0x7f.1'),
        replaceHost('127.1'),
        replaceHost('017.0.0.1'),
        replaceHost('127.0.0.2'),
        replaceHost('[::ffff:127.0.0.1]'),
        replaceHost('[0:0:0:0:0:0:0:1]'),
        replaceHost('１２７.０.０.１'),
        replaceHost('%31%32%37.0.0.1'),
        replaceHost('LOCALHOST'),
        replaceHost(host === 'localhost' ? '127.0.0.1' : 'localhost'),
        replaceHost(host === '[::1]' ? '127.0.0.1' : '[::1]'),
        uri.replace(/^https?:\/\//, (s) => s.replace('//', '\\\\')),
        uri.replace('/', '\\'),
        uri.replace(/c/g, 'с'),
      ),
      at.chain((i) =>
        fc
          .string({ unit: 'binary', minLength: 1, maxLength: 1 })
          .map((c) => uri.slice(0, i) + c + uri.slice(i)),
      ),
      at.map((i) => uri.slice(0, i) + encodeURIComponent(uri[i] ?? '') + uri.slice(i + 1)),
    )
    .filter((m) => m !== uri);
}

describe('matchRedirectUri', () => {
  it('never throws and only returns a registered entry', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 80 }),
        fc.array(fc.oneof(loopbackUri, httpsUri, fc.string()), { maxLength: 4 }),
        (requested, registered) => {
          const match = matchRedirectUri(requested, registered);
          if (match !== undefined) expect(registered).toContain(match);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('accepts a request only when it equals the registered URI or differs by the loopback port', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(loopbackUri, httpsUri), { minLength: 1, maxLength: 4 }),
        fc.string({ unit: 'binary', maxLength: 80 }),
        (registered, requested) => {
          const match = matchRedirectUri(requested, registered);
          if (match === undefined || match === requested) return;
          const a = portless(requested);
          expect(a).toBeDefined();
          expect(a).toBe(portless(match));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses every nasty variant of a registered URI', () => {
    const pair = fc.oneof(loopbackUri, httpsUri).chain((uri) => fc.tuple(fc.constant(uri), mutations(uri)));
    fc.assert(
      fc.property(pair, ([registered, requested]) => {
        const match = matchRedirectUri(requested, [registered]);
        // A mutation may by chance only have changed the port (e.g. an inserted digit in it).
        if (match !== undefined) expect(portless(requested)).toBe(portless(registered));
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts any valid port on a registered loopback URI, and no invalid one (RFC 8252 §7.3)', () => {
    fc.assert(
      fc.property(loopbackUri, fc.integer({ min: 1, max: 65535 }), (registered, p) => {
        const requested = portless(registered)!.replace(
          /^(http:\/\/(?:127\.0\.0\.1|\[::1\]|localhost))/,
          `$1:${p}`,
        );
        expect(matchRedirectUri(requested, [registered])).toBe(registered);
      }),
    );
    fc.assert(
      fc.property(
        loopbackUri,
        fc.constantFrom('0', '65536', '099', '0049152', 'abc', '', '1.0', '+1', '99999999'),
        (registered, p) => {
          const requested = portless(registered)!.replace(
            /^(http:\/\/(?:127\.0\.0\.1|\[::1\]|localhost))/,
            `$1:${p}`,
          );
          expect(matchRedirectUri(requested, [registered])).toBeUndefined();
        },
      ),
    );
  });

  it('never lets https URIs differ by port', () => {
    fc.assert(
      fc.property(httpsUri, fc.integer({ min: 1, max: 65535 }), (registered, p) => {
        const requested = registered.replace(/^(https:\/\/[^/?]+)/, `$1:${p}`);
        expect(matchRedirectUri(requested, [registered])).toBeUndefined();
      }),
    );
  });
});

describe('checkRegisteredRedirectUri', () => {
  it('never throws, and what it accepts without https is a clean loopback URI', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'binary', maxLength: 60 }), loopbackUri, loopbackUri.chain(mutations)),
        (uri) => {
          const problem = checkRegisteredRedirectUri(uri, false);
          if (problem !== undefined) return;
          expect(isLoopbackRedirect(uri)).toBe(true);
          expect(unsafeCharacter(uri)).toBe(false);
          expect(authority(uri)).not.toContain('@');
          expect(uri.split(/[?]/)[0]!.split('/')).not.toContain('..');
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('accepts what the generators build', () => {
    fc.assert(
      fc.property(loopbackUri, (uri) => {
        expect(checkRegisteredRedirectUri(uri, false)).toBeUndefined();
      }),
    );
    fc.assert(
      fc.property(httpsUri, (uri) => {
        expect(checkRegisteredRedirectUri(uri, true)).toBeUndefined();
      }),
    );
  });

  it('with https allowed, accepts only https URIs without user info, fragment or numeric hosts', () => {
    fc.assert(
      fc.property(
        fc.oneof(httpsUri.chain(mutations), fc.string({ unit: 'binary', maxLength: 60 })),
        (uri) => {
          if (checkRegisteredRedirectUri(uri, true) !== undefined || isLoopbackRedirect(uri)) return;
          expect(uri.startsWith('https://')).toBe(true);
          expect(unsafeCharacter(uri)).toBe(false);
          expect(authority(uri)).not.toContain('@');
          const host = /^https:\/\/([^/?:]*)/.exec(uri)![1]!;
          const last = host.split('.').pop()!;
          // A numeric last label is an IPv4 form to URL parsers: only dotted-decimal passes.
          if (/^(?:0x[0-9a-f]*|[0-9]+)$/i.test(last))
            expect(host).toMatch(/^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
