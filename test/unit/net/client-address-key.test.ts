/**
 * The client address the rate limits count under: the TCP peer unless it is a trusted proxy, then
 * X-Forwarded-For read from the right up to the first hop that is not a trusted proxy; IPv4-mapped IPv6
 * as IPv4; IPv6 per /64; trusted-proxy lists refused when malformed.
 */
import assert from 'node:assert/strict';
import { clientAddressKey, parseTrustedProxies } from '../../../src/api/net/client-address-key.js';

describe('client address (rate-limit key)', () => {
  const none = parseTrustedProxies('');
  const loopback = parseTrustedProxies('127.0.0.1, ::1');
  const proxies = parseTrustedProxies('10.0.0.0/8, fd00::/8, ::ffff:192.0.2.0/120');

  it('is the peer without trusted proxies, whatever X-Forwarded-For says', () => {
    assert.equal(clientAddressKey('203.0.113.5', '198.51.100.1', none), '203.0.113.5');
    assert.equal(clientAddressKey('127.0.0.1', '198.51.100.1', none), '127.0.0.1');
    assert.equal(
      clientAddressKey('203.0.113.5', '198.51.100.1', loopback),
      '203.0.113.5',
      'a peer that is no trusted proxy',
    );
  });

  it('counts IPv4-mapped IPv6 as IPv4 and IPv6 per /64', () => {
    assert.equal(clientAddressKey('::ffff:203.0.113.5', undefined, none), '203.0.113.5');
    assert.equal(clientAddressKey('2001:db8:1:2:3:4:5:6', undefined, none), '2001:db8:1:2::/64');
    assert.equal(clientAddressKey('2001:db8:1:2::ffff', undefined, none), '2001:db8:1:2::/64');
    assert.equal(clientAddressKey('2001:0db8:0001:0003::1', undefined, none), '2001:db8:1:3::/64');
    assert.equal(clientAddressKey(undefined, undefined, none), 'unknown');
  });

  it('behind trusted proxies: the rightmost hop that is not one, never further left', () => {
    assert.equal(clientAddressKey('10.1.1.1', '198.51.100.7', proxies), '198.51.100.7');
    assert.equal(
      clientAddressKey('10.1.1.1', '6.6.6.6, 198.51.100.7, 10.2.2.2', proxies),
      '198.51.100.7',
      'chained proxies are skipped, a spoofed left hop is not reached',
    );
    assert.equal(clientAddressKey('::ffff:10.1.1.1', '2001:db8:9:9::1, fd12::1', proxies), '2001:db8:9:9::/64');
    assert.equal(
      clientAddressKey('192.0.2.9', '198.51.100.8', proxies),
      '198.51.100.8',
      'an IPv4-mapped range is the IPv4 range',
    );
    assert.equal(
      clientAddressKey('10.1.1.1', 'garbage, 10.3.3.3', proxies),
      '10.3.3.3',
      'a malformed hop stops the walk at the last trusted proxy',
    );
    assert.equal(clientAddressKey('10.1.1.1', '0x7f.1', proxies), '10.1.1.1', 'only dotted-quad IPv4 is an address');
    assert.equal(clientAddressKey('10.1.1.1', '', proxies), '10.1.1.1');
  });

  it('refuses a malformed trusted-proxy list, naming the entry', () => {
    for (const bad of ['10.0.0.0/33', 'proxy.example', '10.0.0.0/8, nope', '::1/129']) {
      assert.throws(() => parseTrustedProxies(bad), /invalid configuration: TREASURY_TRUSTED_PROXIES/, bad);
    }
  });
});
