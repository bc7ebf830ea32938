/** The address classifier behind outbound requests (src/api/net/address-class.ts): only global unicast passes. */
import assert from 'node:assert/strict';
import { classifyAddress } from '../../../src/api/net/address-class.js';

describe('classifyAddress', () => {
  it('refuses every special-purpose range, IPv4 and IPv6', () => {
    const table: Array<[string, string]> = [
      ['0.0.0.0', 'unspecified'],
      ['0.1.2.3', 'unspecified'],
      ['10.0.0.1', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['100.64.0.1', 'carrierGradeNat'],
      ['100.127.255.254', 'carrierGradeNat'],
      ['127.0.0.1', 'loopback'],
      ['127.255.0.9', 'loopback'],
      ['169.254.169.254', 'linkLocal'],
      ['192.0.0.8', 'reserved'],
      ['192.0.2.1', 'reserved'],
      ['198.18.0.1', 'reserved'],
      ['198.19.255.254', 'reserved'],
      ['198.51.100.7', 'reserved'],
      ['203.0.113.9', 'reserved'],
      ['240.0.0.1', 'reserved'],
      ['255.255.255.255', 'broadcast'],
      ['224.0.0.1', 'multicast'],
      ['::', 'unspecified'],
      ['::1', 'loopback'],
      ['fe80::1', 'linkLocal'],
      ['fc00::1', 'uniqueLocal'],
      ['fd12:3456::1', 'uniqueLocal'],
      ['fec0::1', 'deprecatedSiteLocal'],
      ['ff02::1', 'multicast'],
      ['64:ff9b::7f00:1', 'rfc6052'],
      ['64:ff9b:1::a9fe:a9fe', 'rfc6052'],
      ['2002:7f00:1::1', '6to4'],
      ['2001:0:4136:e378::1', 'teredo'],
      ['2001:db8::1', 'reserved'],
      ['100::1', 'discard'],
      ['::ffff:0:7f00:1', 'rfc6145'],
      ['::7f00:1', 'outside_2000::/3'],
      ['4000::1', 'outside_2000::/3'],
      ['1fff:ffff::1', 'outside_2000::/3'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:10.0.0.1', 'private'],
      ['::ffff:a9fe:a9fe', 'linkLocal'],
      ['[::1]', 'loopback'],
    ];
    for (const [address, range] of table) {
      const cls = classifyAddress(address);
      assert.deepEqual([cls.global, cls.range], [false, range], address);
    }
  });

  it('passes global unicast, and judges an IPv4-mapped address as its IPv4 address', () => {
    for (const [address, as] of [
      ['93.184.215.14', '93.184.215.14'],
      ['8.8.8.8', '8.8.8.8'],
      ['2606:4700:4700::1111', '2606:4700:4700::1111'],
      ['3ffe:ffff::1', '3ffe:ffff::1'],
      ['::ffff:8.8.8.8', '8.8.8.8'],
      ['[2a00:1450:4001:81c::200e]', '2a00:1450:4001:81c::200e'],
    ]) {
      const cls = classifyAddress(address!);
      assert.deepEqual([cls.global, cls.range, cls.address], [true, 'unicast', as], address);
    }
  });

  it('calls anything that is not a strict IP literal invalid (never global)', () => {
    for (const text of [
      'localhost',
      'example.com',
      '1.2.3',
      '010.0.0.1',
      '0x7f.0.0.1',
      '2130706433',
      '',
      '::ffff:999.0.0.1',
    ]) {
      assert.deepEqual([classifyAddress(text).global, classifyAddress(text).range], [false, 'invalid'], text);
    }
  });
});
