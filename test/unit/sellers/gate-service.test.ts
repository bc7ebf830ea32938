/**
 * The gate's service (src/api/sellers/gate/gate-service.ts) on a fake of its store
 * (test/support/fake-seller-stores.ts), without PostgreSQL: where a catalogue says buyers pay (a platform_mor
 * seller's collection wallet on the asked or the default network, else the seller's oldest proven pay-to), and
 * which ledger rows the gate may report (only for an endpoint of its own account's `mpp` sellers).
 */
import assert from 'node:assert/strict';
import { getAddress } from 'viem';
import { AppError } from '../../../src/api/errors/app-error.js';
import { GateService } from '../../../src/api/sellers/gate/gate-service.js';
import type { EndpointRow, SellerRow } from '../../../src/api/sellers/seller-views.js';
import type { LedgerReportBody } from '../../../src/shared/ledger-report-schema.js';
import { FakeGateCatalogueStore } from '../../support/fake-seller-stores.js';

const ACCOUNT = 'acct_1';
const DEFAULT_NETWORK = 'eip155:84532';
const at = (s: number) => new Date(Date.UTC(2026, 10, 1, 0, 0, s));

function seller(id: string, over: Partial<SellerRow> = {}): SellerRow {
  return {
    id,
    account_id: ACCOUNT,
    name: id,
    slug: id,
    openapi_url: null,
    capabilities: [],
    protocol: 'mpp',
    payout_mode: 'direct',
    legal_entity: null,
    country: null,
    banking_state: 'none',
    status: 'active',
    origin: 'https://api.example.com',
    verification_token: null,
    verified_at: at(0),
    created_at: at(1),
    updated_at: at(1),
    ...over,
  } as SellerRow;
}

function endpoint(id: string, sellerId: string, s: number): EndpointRow {
  const when = at(s);
  return {
    id,
    seller_id: sellerId,
    slug: id,
    method: 'GET',
    path: `/${id}`,
    path_pattern: null,
    price_micro: '10000',
    route_prices: {},
    capabilities: [],
    priced: true,
    created_at: when,
    updated_at: when,
  };
}

function gate() {
  const store = new FakeGateCatalogueStore();
  const reported: Array<{ seller: string; tx: string }> = [];
  const collected: Array<{ seller: string; network: string | undefined }> = [];
  const service = new GateService({
    store,
    defaultNetwork: DEFAULT_NETWORK,
    pendingCap: { admit: async () => undefined },
    ledger: {
      report: async (s, row) => {
        reported.push({ seller: s.id, tx: row.tx_hash });
        return { created: true, entry: {} as never };
      },
    },
    collections: {
      payToFor: async (s, network) => {
        collected.push({ seller: s.id, network });
        return s.payout_mode === 'platform_mor' ? '0x' + 'c'.repeat(40) : null;
      },
    },
  });
  return { store, service, reported, collected };
}

const row = (endpointId: string | undefined): LedgerReportBody =>
  ({ tx_hash: '0x' + 'a'.repeat(64), network: DEFAULT_NETWORK, endpoint_id: endpointId }) as LedgerReportBody;

describe('gate service (fake store)', () => {
  it('a direct seller is paid at its oldest proven pay-to, checksummed; a platform_mor seller at its collection wallet', async () => {
    const { store, service, collected } = gate();
    store.sellers.push(seller('sel_direct'), seller('sel_mor', { payout_mode: 'platform_mor', created_at: at(2) }));
    store.payTo.push(
      { seller_id: 'sel_direct', address: '0x' + 'b'.repeat(40), created_at: at(5) },
      { seller_id: 'sel_direct', address: ' 0x' + 'd'.repeat(40) + ' ', created_at: at(3) },
      { seller_id: 'sel_mor', address: '0x' + 'e'.repeat(40), created_at: at(3) },
    );
    const catalogue = await service.catalogue(ACCOUNT, undefined);
    assert.deepEqual(
      catalogue.sellers.map((s) => [s.seller_id, s.pay_to]),
      [
        ['sel_direct', getAddress('0x' + 'd'.repeat(40))],
        ['sel_mor', '0x' + 'c'.repeat(40)],
      ],
    );
    assert.deepEqual(collected, [{ seller: 'sel_mor', network: DEFAULT_NETWORK }]);
    await service.catalogue(ACCOUNT, 'eip155:8453');
    assert.equal(collected.at(-1)?.network, 'eip155:8453');
  });

  it("lists only the account's mpp sellers, each with its own endpoints; an origin never set is not verified", async () => {
    const { store, service } = gate();
    store.sellers.push(
      seller('sel_a', { origin: null }),
      seller('sel_x402', { protocol: 'x402' }),
      seller('sel_other', { account_id: 'acct_2' }),
    );
    store.endpoints.push(endpoint('ep_2', 'sel_a', 9), endpoint('ep_1', 'sel_a', 8), endpoint('ep_x', 'sel_x402', 1));
    const catalogue = await service.catalogue(ACCOUNT, undefined);
    assert.deepEqual(
      catalogue.sellers.map((s) => ({
        id: s.seller_id,
        verified: s.origin_verified,
        eps: s.endpoints.map((e) => e.endpoint_id),
      })),
      [{ id: 'sel_a', verified: false, eps: ['ep_1', 'ep_2'] }],
    );
  });

  it("reports a row only for an endpoint of the account's own mpp seller", async () => {
    const { store, service, reported } = gate();
    store.sellers.push(
      seller('sel_a'),
      seller('sel_x402', { protocol: 'x402' }),
      seller('sel_b', { account_id: 'acct_2' }),
    );
    store.endpoints.push(endpoint('ep_a', 'sel_a', 1), endpoint('ep_x', 'sel_x402', 1), endpoint('ep_b', 'sel_b', 1));
    const refusal = (id: string | undefined) =>
      service.report(ACCOUNT, row(id)).then(
        () => 'stored',
        (err: unknown) => (err instanceof AppError ? err.code : 'other'),
      );
    assert.equal(await refusal(undefined), 'invalid_request');
    assert.equal(await refusal('ep_x'), 'endpoint_not_found');
    assert.equal(await refusal('ep_b'), 'endpoint_not_found');
    assert.equal(await refusal('ep_missing'), 'endpoint_not_found');
    assert.deepEqual(reported, []);
    assert.equal(await refusal('ep_a'), 'stored');
    assert.deepEqual(reported, [{ seller: 'sel_a', tx: row('ep_a').tx_hash }]);
  });

  it('a batch refuses the rows it may not report and stores the others', async () => {
    const { store, service } = gate();
    store.sellers.push(seller('sel_a'));
    store.endpoints.push(endpoint('ep_a', 'sel_a', 1));
    const results = await service.reportBatch(ACCOUNT, [row('ep_a'), row('ep_b')]);
    assert.deepEqual(
      results.map((r) => (r.outcome === 'rejected' ? r.error_code : r.outcome)),
      ['created', 'endpoint_not_found'],
    );
  });
});
