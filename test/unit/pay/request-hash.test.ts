/** The Idempotency-Key's request hash (src/api/pay/request-hash.ts): the same hash as canonical JSON of { route, body }, remembered or not. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../../base/canonical-json.js';
import { requestHash } from '../../../src/api/pay/request-hash.js';

/** The hash as it was computed before bodies were remembered. */
const reference = (request: unknown) => createHash('sha256').update(canonicalJson(request)).digest('hex');

const BODIES: unknown[] = [
  { payment_requirements: { scheme: 'exact', amount: '1000', extra: { version: '2', name: 'USDC' } }, capability: 'a' },
  { z: [3, { b: 1, a: [{ d: null, c: true }] }], a: 'é\u2028"\\', 10: 'numeric key', 2: 'first' },
  { to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', amount_usd: '0.5', valid_for_seconds: 60 },
  [],
  'text',
  0,
  null,
];

describe('requestHash', () => {
  it('equals the SHA-256 of canonicalJson({ route, body }), from the body text the first time and from memory after', () => {
    for (const [i, body] of BODIES.entries()) {
      const request = { route: `/v1/wallets/wal_${i}/pay`, body };
      const text = JSON.stringify(body);
      assert.equal(requestHash(request, text), reference(request), `body ${i}, first`);
      assert.equal(requestHash(request, text), reference(request), `body ${i}, remembered`);
      const elsewhere = { route: `/v1/wallets/wal_other/pay`, body };
      assert.equal(requestHash(elsewhere, text), reference(elsewhere), `body ${i}, another route`);
    }
  });

  it('hashes a body sent with its keys in another order as the same request', () => {
    const route = '/v1/wallets/wal_1/pay';
    const a = { capability: 'x', payment_requirements: { amount: '1', scheme: 'exact' } };
    const b = { payment_requirements: { scheme: 'exact', amount: '1' }, capability: 'x' };
    assert.equal(
      requestHash({ route, body: a }, JSON.stringify(a)),
      requestHash({ route, body: b }, JSON.stringify(b)),
    );
  });

  it('falls back to canonical JSON of the whole request without a text, or for any other shape', () => {
    for (const request of [
      { route: '/r', body: { a: 1 } },
      { route: '/r' },
      { o: 1 },
      {},
      { route: '/r', body: undefined },
    ])
      assert.equal(requestHash(request), reference(request));
    assert.equal(requestHash({ route: '/r', body: undefined }, ''), reference({ route: '/r' }));
    assert.equal(requestHash({ o: 1 }, '{}'), reference({ o: 1 }));
  });
});
