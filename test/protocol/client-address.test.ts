/**
 * Client addresses behind proxies (ABU-02): the TCP peer is the client unless proxies are trusted;
 * a hop count or a list of proxy addresses/ranges decides how far `X-Forwarded-For` is believed;
 * garbage never becomes an address; IPv6 clients are keyed by prefix (/64 by default).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientAddressKey, createClientAddressResolver } from '../../src/protocol/client-address.js';

describe('without trusted proxies (the default)', () => {
  const clients = createClientAddressResolver();

  it('ABU-02 takes the TCP peer and ignores a spoofed X-Forwarded-For', () => {
    expect(clients.address('203.0.113.9', '198.51.100.1')).toBe('203.0.113.9');
    expect(clients.address('203.0.113.9', '198.51.100.1, 127.0.0.1')).toBe('203.0.113.9');
    expect(clients.key('2001:db8::1', '198.51.100.1')).toBe('2001:db8::/64');
  });

  it('ABU-02 ignores X-Forwarded-For whatever it holds (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (header) => {
        expect(clients.address('192.0.2.44', header)).toBe('192.0.2.44');
      }),
    );
  });

  it('gives an IPv4-mapped IPv6 peer as IPv4', () => {
    expect(clients.address('::ffff:192.0.2.1', undefined)).toBe('192.0.2.1');
    expect(clients.address('::FFFF:c000:201', null)).toBe('192.0.2.1');
  });

  it('answers undefined when the peer is unknown, even with a header', () => {
    expect(clients.address(undefined, '198.51.100.1')).toBeUndefined();
    expect(clients.key(undefined, undefined)).toBeUndefined();
  });

  it('treats 0, "0", "" and an empty list as no trust', () => {
    for (const trustProxy of [0, '0', '', ' , ', []]) {
      expect(createClientAddressResolver({ trustProxy }).address('10.0.0.1', '198.51.100.1')).toBe(
        '10.0.0.1',
      );
    }
  });
});

describe('a hop count of proxies', () => {
  it('with one proxy, believes the entry it appended (the rightmost), not those the client wrote', () => {
    const clients = createClientAddressResolver({ trustProxy: 1 });
    expect(clients.address('10.0.0.2', '198.51.100.4')).toBe('198.51.100.4');
    // The client wrote "6.6.6.6"; the proxy appended the address it saw.
    expect(clients.address('10.0.0.2', '6.6.6.6, 198.51.100.4')).toBe('198.51.100.4');
  });

  it('with two proxies, believes the second entry from the right', () => {
    const clients = createClientAddressResolver({ trustProxy: '2' });
    expect(clients.address('10.0.0.2', '6.6.6.6, 198.51.100.4, 10.0.0.1')).toBe('198.51.100.4');
  });

  it('with more hops than entries, takes the leftmost entry', () => {
    expect(createClientAddressResolver({ trustProxy: 3 }).address('10.0.0.2', '198.51.100.4')).toBe(
      '198.51.100.4',
    );
  });

  it('without a header, takes the peer', () => {
    expect(createClientAddressResolver({ trustProxy: 1 }).address('10.0.0.2', undefined)).toBe('10.0.0.2');
  });
});

describe('a list of proxy addresses and ranges', () => {
  it('skips trusted hops from the right and stops at the first untrusted one', () => {
    const clients = createClientAddressResolver({ trustProxy: '10.0.0.0/8, 192.0.2.7' });
    expect(clients.address('192.0.2.7', '6.6.6.6, 198.51.100.4, 10.1.2.3')).toBe('198.51.100.4');
  });

  it('does not believe a header sent by a peer that is not a trusted proxy', () => {
    const clients = createClientAddressResolver({ trustProxy: ['loopback'] });
    expect(clients.address('203.0.113.9', '198.51.100.4')).toBe('203.0.113.9');
    expect(clients.address('127.0.0.1', '198.51.100.4')).toBe('198.51.100.4');
  });

  it('matches an IPv4-mapped IPv6 peer against IPv4 ranges', () => {
    const clients = createClientAddressResolver({ trustProxy: ['10.0.0.0/8'] });
    expect(clients.address('::ffff:10.0.0.2', '198.51.100.4')).toBe('198.51.100.4');
  });

  it('accepts the names loopback, linklocal and uniquelocal and IPv6 ranges', () => {
    const clients = createClientAddressResolver({ trustProxy: ['uniquelocal', 'fd00::/8'] });
    expect(clients.address('fd12::1', '2001:db8::5')).toBe('2001:db8::5');
    expect(clients.address('172.16.0.9', '198.51.100.4')).toBe('198.51.100.4');
  });

  it('refuses a setting that is not an address, a range or a known name', () => {
    for (const trustProxy of ['proxy.example', '10.0.0.0/33', 'loopback, nonsense', -1, 1.5]) {
      expect(() => createClientAddressResolver({ trustProxy }), String(trustProxy)).toThrow(TypeError);
    }
  });
});

describe('garbage in X-Forwarded-For', () => {
  const clients = createClientAddressResolver({ trustProxy: 1 });

  it.each([
    ['unknown'],
    ['198.51.100.4:8080'],
    ['<script>'],
    ['0x7f.1'],
    ['010.0.0.1'],
    [' , , '],
    ['x'.repeat(10_000)],
  ])('never answers %s as an address: the hop that reported it is the client', (header) => {
    expect(clients.address('10.0.0.2', header)).toBe('10.0.0.2');
  });

  it('accepts bracketed and zoned IPv6 entries as their address', () => {
    expect(clients.address('10.0.0.2', '[2001:db8::9]')).toBe('2001:db8::9');
  });
});

describe('rate-limit keys', () => {
  it('ABU-02 keys IPv6 clients by /64: the low bits do not make a new bucket', () => {
    expect(clientAddressKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(clientAddressKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(clientAddressKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
  });

  it('takes another prefix length when configured', () => {
    expect(clientAddressKey('2001:db8:1:2::1', 48)).toBe('2001:db8:1::/48');
    expect(clientAddressKey('2001:db8:1:2::1', 56)).toBe('2001:db8:1::/56');
    expect(clientAddressKey('2001:db8:1:2ff::1', 56)).toBe('2001:db8:1:200::/56');
    expect(clientAddressKey('2001:db8::1', 128)).toBe('2001:db8::1');
    expect(createClientAddressResolver({ ipv6PrefixLength: 48 }).key('2001:db8:1:2::1')).toBe(
      '2001:db8:1::/48',
    );
    expect(() => clientAddressKey('::1', 0)).toThrow(TypeError);
    expect(() => createClientAddressResolver({ ipv6PrefixLength: 129 })).toThrow(TypeError);
  });

  it('keys IPv4 by address, and IPv4-mapped IPv6 as IPv4', () => {
    expect(clientAddressKey('203.0.113.9')).toBe('203.0.113.9');
    expect(clientAddressKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientAddressKey('fe80::1%eth0')).toBe('fe80::/64');
  });

  it('leaves text that is not an address as it is, so a limit still counts it', () => {
    expect(clientAddressKey('unix-socket')).toBe('unix-socket');
    expect(clientAddressKey(undefined)).toBeUndefined();
  });

  it('serves as the clientIp option: remoteAddress and the x-forwarded-for header of the request', () => {
    const clients = createClientAddressResolver({ trustProxy: 1 });
    const request = {
      method: 'POST',
      url: '/oauth/register',
      headers: { 'x-forwarded-for': '2001:db8:7:7::42' },
      remoteAddress: '127.0.0.1',
    };
    expect(clients.clientIp(request)).toBe('2001:db8:7:7::/64');
    expect(createClientAddressResolver().clientIp(request)).toBe('127.0.0.1');
  });
});
