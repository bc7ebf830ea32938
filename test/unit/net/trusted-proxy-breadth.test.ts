/**
 * Trusted-proxy ranges that cover public addresses (src/api/net/trusted-proxy-breadth.ts), which production mode
 * refuses: /0, and IPv4 ranges shorter than /8 or IPv6 shorter than /16 unless inside one non-global block. The
 * hop walk shows why: with 0.0.0.0/0 trusted, a client's own X-Forwarded-For picks its counting key.
 */
import assert from 'node:assert/strict';
import { clientAddressKey, parseTrustedProxies } from '../../../src/api/net/client-address-key.js';
import { publicTrustedRange } from '../../../src/api/net/trusted-proxy-breadth.js';

const judged = (list: string) => publicTrustedRange(parseTrustedProxies(list));

describe('trusted proxies covering public addresses', () => {
  it('why: every peer trusted, the client chooses its key', () => {
    const all = parseTrustedProxies('0.0.0.0/0');
    assert.equal(clientAddressKey('203.0.113.5', '198.51.100.77', all), '198.51.100.77');
    assert.equal(clientAddressKey('203.0.113.5', '198.51.100.78', all), '198.51.100.78');
  });

  it('refuses /0 and short ranges with public addresses, naming the range (IPv4-mapped ranges as IPv4)', () => {
    const cases: [string, string][] = [
      ['0.0.0.0/0', '0.0.0.0/0'],
      ['::/0', '::/0'],
      ['::ffff:0.0.0.0/96', '0.0.0.0/0'],
      ['10.0.0.0/8, 0.0.0.0/1', '0.0.0.0/1'],
      ['128.0.0.0/2', '128.0.0.0/2'],
      ['10.0.0.0/7', '10.0.0.0/7'],
      ['::/1', '::/1'],
      ['2000::/3', '2000::/3'],
      ['2002::/15', '2002::/15'],
    ];
    for (const [list, range] of cases) assert.equal(judged(list), range, list);
  });

  it('accepts addresses, private ranges, non-global blocks, and public ranges of /8 (IPv6 /16) or longer', () => {
    for (const list of [
      '',
      '10.0.0.0/8',
      '172.16.0.0/12, 127.0.0.1/32, 192.168.0.0/16',
      '172.28.0.10',
      '::1, fc00::/7, fd00::/8, fe80::/10',
      '104.16.0.0/13, 2400:cb00::/32, 8.0.0.0/8, 2001::/16',
      '224.0.0.0/4',
    ])
      assert.equal(judged(list), undefined, list);
  });
});
