/**
 * CIMD-07: the special-use address table (RFC 6890 and the IANA registries), including the IPv6
 * forms that wrap an IPv4 address.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressRefusal, specialUseBlock } from '../../src/cimd/special-use.js';
import { parseAddressRange, parseIPAddress, parseIPv4, parseIPv6 } from '../../src/protocol/ip-address.js';

describe('special-use addresses', () => {
  it.each([
    ['0.0.0.0', 'this network'],
    ['0.1.2.3', 'this network'],
    ['10.0.0.1', 'private-use'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.254', 'CGNAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'cloud metadata'],
    ['172.16.0.1', 'private-use'],
    ['172.31.255.255', 'private-use'],
    ['192.0.0.8', 'IETF protocol'],
    ['192.0.2.1', 'documentation'],
    ['192.88.99.1', '6to4 relay'],
    ['192.168.1.1', 'private-use'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:10.0.0.1', 'IPv4-mapped'],
    ['::ffff:8.8.8.8', 'IPv4-mapped'],
    ['::ffff:a00:1', 'IPv4-mapped'],
    ['::10.0.0.1', 'IPv4-compatible'],
    ['64:ff9b::10.0.0.1', 'NAT64 of private-use'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of link-local'],
    ['64:ff9b:1::1', 'local-use NAT64'],
    ['100::1', 'discard-only'],
    ['fc00::1', 'unique-local'],
    ['fd00::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['2001::1', 'Teredo'],
    ['2001:db8::1', 'documentation'],
    ['2002:a00:1::1', '6to4'],
    ['3fff::1', 'documentation'],
    ['4000::1', 'not global unicast'],
    ['5f00::1', 'not global unicast'],
  ])('refuses %s (%s)', (address, name) => {
    const refusal = addressRefusal(address, []);
    expect(refusal).toBeDefined();
    expect(refusal).toContain(name);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.215.14',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.169.0.1',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2606:4700::1111',
    '2a00:1450:4001:80b::200e',
    '64:ff9b::808:808',
  ])('accepts the global address %s', (address) => {
    expect(addressRefusal(address, [])).toBeUndefined();
  });

  it('refuses text that is not a canonical address', () => {
    for (const text of [
      '2130706433',
      '0x7f.0.0.1',
      '017.0.0.1',
      '127.1',
      '1.2.3.4.5',
      'localhost',
      '',
      ':::',
      '1::2::3',
      'fe80::1%eth0',
    ]) {
      expect(addressRefusal(text, [])).toBe('not an IP address');
    }
  });

  it('exempts only the configured ranges', () => {
    const allowed = [parseAddressRange('127.0.0.1')!, parseAddressRange('10.20.0.0/16')!];
    expect(addressRefusal('127.0.0.1', allowed)).toBeUndefined();
    expect(addressRefusal('10.20.3.4', allowed)).toBeUndefined();
    expect(addressRefusal('127.0.0.2', allowed)).toContain('loopback');
    expect(addressRefusal('10.21.0.1', allowed)).toContain('private-use');
    expect(addressRefusal('::ffff:127.0.0.1', allowed)).toContain('IPv4-mapped');
  });
});

describe('strict address parsing', () => {
  it('parses IPv6 text forms to the same bytes', () => {
    const a = parseIPv6('0:0:0:0:0:ffff:a00:1');
    expect(parseIPv6('::ffff:10.0.0.1')).toEqual(a);
    expect(parseIPv6('::FFFF:A00:1')).toEqual(a);
    expect(parseIPAddress('[::ffff:10.0.0.1]')).toEqual(a);
    expect(parseIPv6('1:2:3:4:5:6:7::')).toEqual(parseIPv6('1:2:3:4:5:6:7:0'));
  });

  it('refuses malformed IPv6', () => {
    for (const text of [
      '1:2:3:4:5:6:7:8:9',
      '1::2::3',
      '12345::',
      ':1::',
      '1:2:3:4:5:6:7:8::',
      '::ffff:10.0.0',
      'g::1',
      '1:2:3:4:5:6:7:8:1.2.3.4',
    ]) {
      expect(parseIPv6(text)).toBeUndefined();
    }
  });

  it('parses only dotted-decimal IPv4', () => {
    expect(parseIPv4('192.0.2.1')).toEqual(new Uint8Array([192, 0, 2, 1]));
    expect(parseIPv4('0.0.0.0')).toEqual(new Uint8Array([0, 0, 0, 0]));
    expect(parseIPv4('255.255.255.255')).toEqual(new Uint8Array([255, 255, 255, 255]));
    for (const text of [
      '192.0.2',
      '192.0.2.256',
      '192.0.02.1',
      '0x7f.0.0.1',
      ' 1.2.3.4',
      '1.2.3.4 ',
      '1.2.3.4.',
      '.1.2.3.4',
      '1..2.3',
      '1.2.3.4.5',
      '00.0.0.0',
      '1000.1.1.1',
      '1.2.3.-4',
      '1.2.3.４',
    ]) {
      expect(parseIPv4(text)).toBeUndefined();
    }
  });

  it('parses IPv4 exactly as the dotted-decimal grammar says (property)', () => {
    // The grammar, written the slow way: four parts, each a decimal octet without a leading zero.
    const octet = /^(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$/;
    const reference = (text: string) => {
      const parts = text.split('.');
      return parts.length === 4 && parts.every((p) => octet.test(p))
        ? new Uint8Array(parts.map(Number))
        : undefined;
    };
    const piece = fc.oneof(
      fc.integer({ min: 0, max: 300 }).map(String),
      fc.constantFrom('0', '00', '01', '255', '256', '', 'a', ' ', '-1', '1e2', '٣'),
    );
    const text = fc.oneof(
      fc.array(piece, { minLength: 1, maxLength: 6 }).map((parts) => parts.join('.')),
      fc.string({ unit: fc.constantFrom('0', '1', '2', '5', '9', '.', 'x', ' '), maxLength: 17 }),
    );
    fc.assert(
      fc.property(text, (t) => {
        expect(parseIPv4(t)).toEqual(reference(t));
      }),
      { numRuns: 5000 },
    );
  });

  it('names the block of bytes directly', () => {
    expect(specialUseBlock(new Uint8Array([169, 254, 169, 254]))).toContain('169.254.0.0/16');
  });
});
