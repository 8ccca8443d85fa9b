/**
 * Redirect URI rules at the matcher level (RFC 6749 §3.1.2; RFC 8252 §7.3; RFC 9700 §4.1.3;
 * ATK-08, ATK-10..ATK-14): raw-string comparison, the loopback port exception, and what may be
 * registered.
 */
import { describe, expect, it } from 'vitest';
import { checkRegisteredRedirectUri, matchRedirectUri } from '../../src/protocol/redirect-uri.js';

const CB = 'http://127.0.0.1:49152/cb';

describe('matchRedirectUri', () => {
  it('matches the registered URI exactly and returns the registered entry', () => {
    expect(matchRedirectUri(CB, [CB])).toBe(CB);
    const registered = ['http://127.0.0.1/a', 'http://127.0.0.1/b'];
    expect(matchRedirectUri('http://127.0.0.1:5000/b', registered)).toBe('http://127.0.0.1/b');
  });

  it.each([
    ['another port', 'http://127.0.0.1:50000/cb'],
    ['no port', 'http://127.0.0.1/cb'],
    ['the highest port', 'http://127.0.0.1:65535/cb'],
  ])('ignores the port of a loopback URI: %s (RFC 8252 §7.3; ATK-10)', (_label, requested) => {
    expect(matchRedirectUri(requested, [CB])).toBe(CB);
  });

  it('ignores the port for each loopback host, registered with or without one', () => {
    expect(matchRedirectUri('http://localhost:3000/callback', ['http://localhost/callback'])).toBe(
      'http://localhost/callback',
    );
    expect(matchRedirectUri('http://[::1]/cb', ['http://[::1]:8080/cb'])).toBe('http://[::1]:8080/cb');
  });

  it.each([
    ['a trailing slash', `${CB}/`],
    ['another case', 'http://127.0.0.1:49152/CB'],
    ['a dot segment', 'http://127.0.0.1:49152/cb/../x'],
    ['an encoded slash and dots', 'http://127.0.0.1:49152/cb%2F..'],
    ['a path parameter', 'http://127.0.0.1:49152/cb;x'],
    ['an empty query', `${CB}?`],
    ['an added query', `${CB}?x=1`],
    ['a fragment', `${CB}#f`],
    ['a longer path', `${CB}x`],
    ['a shorter path', 'http://127.0.0.1:49152/c'],
  ])('ATK-08 refuses %s', (_label, requested) => {
    expect(matchRedirectUri(requested, [CB])).toBeUndefined();
  });

  it.each([
    ['port 0', 'http://127.0.0.1:0/cb'],
    ['port 65536', 'http://127.0.0.1:65536/cb'],
    ['a leading zero', 'http://127.0.0.1:049152/cb'],
    ['a non-numeric port', 'http://127.0.0.1:abc/cb'],
    ['an empty port', 'http://127.0.0.1:/cb'],
  ])('ATK-10 refuses a malformed port: %s', (_label, requested) => {
    expect(matchRedirectUri(requested, [CB])).toBeUndefined();
  });

  it.each([
    ['localhost', 'http://localhost:49152/cb'],
    ['[::1]', 'http://[::1]:49152/cb'],
    ['127.0.0.2', 'http://127.0.0.2:49152/cb'],
    ['127.1', 'http://127.1:49152/cb'],
    ['2130706433', 'http://2130706433:49152/cb'],
    ['0x7f.0.0.1', 'http://0x7f.0.0.1:49152/cb'],
    ['[::ffff:127.0.0.1]', 'http://[::ffff:127.0.0.1]:49152/cb'],
    ['127.0.0.1.nip.io', 'http://127.0.0.1.nip.io:49152/cb'],
    ['user info hiding evil.example', 'http://127.0.0.1:1@evil.example/cb'],
    ['a fragment hiding evil.example', 'http://evil.example#@127.0.0.1:49152/cb'],
    ['backslashes', 'http:\\\\127.0.0.1\\cb'],
  ])('ATK-11 refuses the host form %s for a client registered with 127.0.0.1', (_label, requested) => {
    expect(matchRedirectUri(requested, [CB])).toBeUndefined();
  });

  it('ATK-11 never matches one loopback host against another', () => {
    const hosts = ['127.0.0.1', 'localhost', '[::1]'];
    for (const registered of hosts) {
      for (const requested of hosts) {
        const match = matchRedirectUri(`http://${requested}:5000/cb`, [`http://${registered}/cb`]);
        expect(match, `${registered} vs ${requested}`).toBe(
          registered === requested ? `http://${registered}/cb` : undefined,
        );
      }
    }
  });

  it.each([
    ['https', 'https://127.0.0.1:49152/cb'],
    ['an upper-case scheme', 'HTTP://127.0.0.1:49152/cb'],
    ['an upper-case host', 'http://LOCALHOST:49152/cb'],
  ])('ATK-12 refuses %s (raw string comparison)', (_label, requested) => {
    expect(matchRedirectUri(requested, [CB, 'http://localhost:49152/cb'])).toBeUndefined();
  });

  it.each([
    ['fullwidth digits', 'http://\uff11\uff12\uff17.\uff10.\uff10.\uff11:49152/cb'],
    ['a percent-encoded host', 'http://%31%32%37.0.0.1:49152/cb'],
    ['a TAB', 'http://127.0.0.1:49152/c\tb'],
    ['a LF', 'http://127.0.0.1:49152/c\nb'],
    ['a TAB in the host', 'http://127.0.0.\t1:49152/cb'],
    ['a Cyrillic letter', 'http://127.0.0.1:49152/\u0441b'],
    ['a right-to-left override', 'http://127.0.0.1:49152/cb\u202e'],
  ])('ATK-13 refuses %s although URL parsing would fold it into the registered URI', (_label, requested) => {
    expect(matchRedirectUri(requested, [CB])).toBeUndefined();
  });

  it('ATK-14 a fragment never matches, encoded or not', () => {
    for (const requested of [`${CB}%23x`, `${CB}#x`, `${CB}#`]) {
      expect(matchRedirectUri(requested, [CB]), requested).toBeUndefined();
      expect(matchRedirectUri(requested, [`${CB}#`]), requested).toBeUndefined();
    }
  });

  it('compares the query of a loopback URI exactly', () => {
    const registered = ['http://127.0.0.1/cb?mode=cli'];
    expect(matchRedirectUri('http://127.0.0.1:5000/cb?mode=cli', registered)).toBe(registered[0]);
    for (const requested of [
      'http://127.0.0.1:5000/cb?mode=CLI',
      'http://127.0.0.1:5000/cb?mode=cli&x=1',
      'http://127.0.0.1:5000/cb',
      'http://127.0.0.1:5000/cb?mode=cl%69',
    ]) {
      expect(matchRedirectUri(requested, registered), requested).toBeUndefined();
    }
  });

  it('matches a non-loopback URI only exactly: no port exception, no normalisation', () => {
    const registered = ['https://app.example.com/cb'];
    expect(matchRedirectUri('https://app.example.com/cb', registered)).toBe(registered[0]);
    for (const requested of [
      'https://app.example.com:443/cb',
      'https://app.example.com:8443/cb',
      'https://APP.example.com/cb',
      'https://app.example.com/cb/',
      'https://app.example.com/cb?x=1',
      'http://app.example.com/cb',
    ]) {
      expect(matchRedirectUri(requested, registered), requested).toBeUndefined();
    }
  });
});

describe('checkRegisteredRedirectUri', () => {
  it.each([
    'http://127.0.0.1:49152/cb',
    'http://127.0.0.1/cb',
    'http://[::1]:49152/cb',
    'http://localhost:3000/callback',
    'http://127.0.0.1:49152/cb?x=1',
  ])('accepts the loopback URI %s', (uri) => {
    expect(checkRegisteredRedirectUri(uri, false)).toBeUndefined();
  });

  it.each([
    `${CB}#`,
    `${CB}#x`,
    'http://u@127.0.0.1:1/cb',
    'http://app.example.com/cb',
    'javascript:alert(1)',
    'com.example.app:/cb',
    'http://127.0.0.1:49152/a/./b',
    'http://127.0.0.1:49152/%2E%2E',
    '',
  ])('refuses %s with a reason', (uri) => {
    expect(checkRegisteredRedirectUri(uri, false)).toMatch(/loopback/);
    expect(checkRegisteredRedirectUri(uri, true)).toEqual(expect.any(String));
  });

  it('refuses an https URI with a reason naming the registered-integration route, unless https is allowed', () => {
    expect(checkRegisteredRedirectUri('https://app.example.com/cb', false)).toMatch(/registered integration/);
    expect(checkRegisteredRedirectUri('https://app.example.com/cb', true)).toBeUndefined();
    expect(checkRegisteredRedirectUri('https://app.example.com:8443/cb?x=1', true)).toBeUndefined();
  });

  it.each([
    ['a fragment', 'https://app.example.com/cb#x'],
    ['user info', 'https://u@app.example.com/cb'],
    ['a dot segment', 'https://app.example.com/a/../cb'],
    ['a space', 'https://app.example.com/c b'],
    ['port 0', 'https://app.example.com:0/cb'],
    ['a port above 65535', 'https://app.example.com:99999/cb'],
    ['a port with a leading zero', 'https://app.example.com:0443/cb'],
  ])('refuses an https URI with %s even when https is allowed', (_label, uri) => {
    expect(checkRegisteredRedirectUri(uri, true)).toEqual(expect.any(String));
  });
});
