/**
 * Which endpoint a request is sold as (src/gate/matching-endpoint.ts), on a table of endpoints built with the
 * paywall's own option checks: an exact endpoint wins outright only when the request spells its path byte for
 * byte; another spelling of it (case, a trailing slash, an escape — what a case-sensitive origin may serve as
 * another route) is sold at the dearest of it and every fitting pattern; an unpriced candidate is refused. A
 * pattern's literal text fits every spelling of it (a case-insensitive origin routes `/reports/x` to
 * `/Reports/{id}`), and a pattern's route price is free only as the seller spelled it.
 */
import assert from 'node:assert/strict';
import { endpointPattern } from '../../../src/gate/endpoint-pattern.js';
import { matchEndpoint } from '../../../src/gate/matching-endpoint.js';
import type { GateEndpointEntry, GateSellerEntry } from '../../../src/gate/seller-table.js';
import type { GateEndpoint } from '../../../src/shared/api-responses/gate-responses.js';
import { priceOf } from '../../../src/x402/seller/paid-request.js';
import { resolveX402Options } from '../../../src/x402/seller/seller-options.js';

let counter = 0;

/** One endpoint: `method path` at `price`; a path with `{` is a pattern. */
function entry(
  path: string,
  price: string,
  { method = 'GET', priced = true, routePrices = {} as Record<string, string> } = {},
): GateEndpointEntry {
  const endpoint: GateEndpoint = {
    endpoint_id: `ep_${(++counter).toString(16).padStart(24, '0')}`,
    slug: `e${counter}`,
    method,
    path,
    path_pattern: path.includes('{') ? path : null,
    price,
    route_prices: routePrices,
    priced,
  };
  const config = resolveX402Options({
    token: 'xx_pat_gategategategategategategategategate1234',
    price,
    route_prices: routePrices,
    pay_to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
    facilitator_url: 'http://127.0.0.1:4022',
    env: {},
  });
  return {
    endpoint,
    site: { config, seller: () => ({ kind: 'verified', sellerId: 'sel_1', endpointId: undefined }) },
    pattern: endpointPattern(endpoint.path_pattern),
  };
}

function seller(...endpoints: GateEndpointEntry[]): GateSellerEntry {
  return { sellerId: 'sel_1', slug: 'weather', origin: undefined, problem: undefined, endpoints };
}

/** What `method path` is sold at (micro-USD), or how it is refused. */
function soldAt(table: GateSellerEntry, method: string, path: string): bigint | 'none' | 'unpriced' {
  const match = matchEndpoint(table, method, path);
  return match.kind === 'sold' ? priceOf(match.entry.site.config, path) : match.kind;
}

describe('gate: the endpoint a request is sold as', () => {
  const sample = entry('/reports/sample', '0');
  const reports = entry('/reports/{id}', '5');
  const table = seller(sample, reports);

  it('the exact spelling of a free endpoint is free; it wins over a dearer pattern outright', () => {
    assert.equal(matchEndpoint(table, 'GET', '/reports/sample').kind, 'sold');
    assert.equal((matchEndpoint(table, 'GET', '/reports/sample') as { entry: GateEndpointEntry }).entry, sample);
    assert.equal(soldAt(table, 'HEAD', '/reports/sample'), 0n);
  });

  it('another spelling of it is sold at the dearest reading: the fitting pattern', () => {
    for (const path of ['/reports/SAMPLE', '/reports/Sample/', '/reports/s%41mple', '/reports/sample/'])
      assert.equal(soldAt(table, 'GET', path), 5_000_000n, path);
  });

  it('another spelling of a dearer exact endpoint still costs the exact price', () => {
    const premium = seller(entry('/{page}', '0.01'), entry('/premium', '2.5'));
    for (const path of ['/premium', '/PREMIUM', '/Premium/', '/%70remium'])
      assert.equal(soldAt(premium, 'GET', path), 2_500_000n, path);
    assert.equal(soldAt(premium, 'GET', '/other'), 10_000n);
  });

  it('with no pattern, another spelling is the exact endpoint (as the paywall prices it)', () => {
    const only = seller(entry('/data', '1'));
    assert.equal(soldAt(only, 'GET', '/DATA/'), 1_000_000n);
    assert.equal(soldAt(only, 'POST', '/data'), 'none');
  });

  it('an unpriced endpoint among the readings refuses the request; spelled exactly, only its own state counts', () => {
    const unpricedExact = seller(entry('/reports/sample', '0', { priced: false }), entry('/reports/{id}', '5'));
    assert.equal(soldAt(unpricedExact, 'GET', '/reports/sample'), 'unpriced');
    assert.equal(soldAt(unpricedExact, 'GET', '/reports/SAMPLE'), 'unpriced');
    const unpricedPattern = seller(entry('/reports/sample', '0'), entry('/reports/{id}', '5', { priced: false }));
    assert.equal(soldAt(unpricedPattern, 'GET', '/reports/sample'), 0n);
    assert.equal(soldAt(unpricedPattern, 'GET', '/reports/Sample'), 'unpriced');
  });

  it("a pattern's literal text fits every spelling of it: a cheaper broad pattern does not sell it", () => {
    const reports = seller(entry('/{section}/{id}', '0'), entry('/Reports/{id}', '5'));
    for (const path of ['/Reports/x', '/reports/x', '/REPORTS/x', '/reports/x/', '/%52eports/x'])
      assert.equal(soldAt(reports, 'GET', path), 5_000_000n, path);
    assert.equal(soldAt(reports, 'GET', '/other/x'), 0n);
    const files = seller(entry('/files/{name}', '0.01'), entry('/files/{name}.JSON', '5'));
    assert.equal(soldAt(files, 'GET', '/files/a.json'), 5_000_000n);
    assert.equal(soldAt(files, 'GET', '/files/a.txt'), 10_000n);
    const slashed = seller(entry('/{a}/{b}', '0'), entry('/V{n}/x/', '2'));
    for (const path of ['/v1/X', '/V1/x/', '/v1/x']) assert.equal(soldAt(slashed, 'GET', path), 2_000_000n, path);
  });

  it("a pattern's route price is the price of the spelling configured only; other spellings pay the dearer", () => {
    const reports = seller(
      entry('/reports/{id}', '5', { routePrices: { '/reports/sample': '0', '/reports/cheap': '1' } }),
    );
    assert.equal(soldAt(reports, 'GET', '/reports/sample'), 0n);
    assert.equal(soldAt(reports, 'GET', '/reports/cheap'), 1_000_000n);
    for (const path of [
      '/reports/SAMPLE',
      '/reports/Sample/',
      '/reports/s%41mple',
      '/reports/s%61mple',
      '/reports/CHEAP',
    ])
      assert.equal(soldAt(reports, 'GET', path), 5_000_000n, path);
    const dear = seller(entry('/reports/{id}', '1', { routePrices: { '/reports/annual': '9' } }));
    for (const path of ['/reports/annual', '/reports/ANNUAL', '/reports/annual/'])
      assert.equal(soldAt(dear, 'GET', path), 9_000_000n, path);
  });
});
