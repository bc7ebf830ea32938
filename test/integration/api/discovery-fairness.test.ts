/**
 * The public catalogue's order and figures against one tenant that wants the whole of it (HTTP, PostgreSQL):
 * an account with several sellers whose slugs sort first, each with many priced endpoints tagged with a popular
 * word, does not push another account's seller off the first page of /discovery/resources or of
 * /discovery/search — accounts take turns, and inside an account its sellers do — and paging stays stable
 * whatever the page size; a listing's verified revenue and paid calls count its payments on the catalogue's
 * network only (a payment on another network, a testnet's free USDC on a mainnet catalogue, is not its
 * revenue there), while the seller's own ledger revenue still counts every network.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { useTestTreasury } from '../../support/api-harness.js';
import { registerSeller } from '../../support/discoverable-seller.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { markLedgerVerifiedForTest } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';

/** The catalogue's network in the test API (its default chain, Base Sepolia). */
const CATALOGUE_NETWORK = 'eip155:84532';

/** An OpenAPI document of `count` priced GET routes (`/<prefix><i>`), each tagged with `tags`. */
function pricedDocument(prefix: string, count: number, tags: string[]): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < count; i++)
    paths[`/${prefix}${String(i).padStart(3, '0')}`] = {
      get: { operationId: `${prefix}${i}`, summary: tags.join(' '), 'x-price-usd': '0.000001', 'x-capabilities': tags },
    };
  return { openapi: '3.0.0', info: { title: prefix, version: '1' }, paths };
}

interface Item {
  resource: string;
  treasury: { seller_id: string; revenue_30d_usd: string; paid_calls_30d: number };
}

describe('public catalogue: turns per account and per seller, revenue per network (HTTP, PostgreSQL)', function () {
  this.timeout(180_000);
  const t = useTestTreasury({ extraEnv: { TREASURY_DISCOVERY_CACHE_MS: '0' } });
  const servers = new LoopbackServers();
  after(() => servers.closeAll());

  const FLOOD_SELLERS = 3;
  const FLOOD_ENDPOINTS = 40;
  const floodIds: string[] = [];
  let honestId: string;

  before(async () => {
    // The flooding account signs in first: where turns tie, the older account goes first.
    const flooder = (await signInWithNewKey(t)).session;
    for (let s = 0; s < FLOOD_SELLERS; s++) {
      const doc = pricedDocument('w', FLOOD_ENDPOINTS, ['weather', 'forecast']);
      const seller = await registerSeller(t, servers, flooder, `00 Flood ${s}`, { endpoints: {}, openapi: doc });
      const refreshed = await t.request('POST', `/v1/sellers/${seller.seller_id}/refresh`, { token: seller.pat });
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body).slice(0, 400));
      floodIds.push(seller.seller_id);
    }
    const honest = (await signInWithNewKey(t)).session;
    const zebra = await registerSeller(t, servers, honest, 'Zebra Weather', {
      endpoints: {},
      openapi: pricedDocument('z', 2, ['weather']),
    });
    const refreshed = await t.request('POST', `/v1/sellers/${zebra.seller_id}/refresh`, { token: zebra.pat });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body).slice(0, 400));
    honestId = zebra.seller_id;
  });

  const list = async (limit: number, offset: number): Promise<{ items: Item[]; total: number }> => {
    const res = await t.request('GET', `/discovery/resources?limit=${limit}&offset=${offset}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return { items: res.body.items, total: res.body.pagination.total };
  };

  it("puts another account's seller on the first page of the list and of a search for a word both tag", async () => {
    const { items, total } = await list(100, 0);
    assert.equal(total, FLOOD_SELLERS * FLOOD_ENDPOINTS + 2);
    const honestAt = items.flatMap((item, i) => (item.treasury.seller_id === honestId ? [i] : []));
    // Accounts take turns (the flooder's first, the other's first, …), not sellers: both of the honest seller's
    // endpoints are within the first two rounds, however many sellers the other account runs.
    assert.deepEqual(
      honestAt,
      [1, 3],
      items
        .slice(0, 6)
        .map((i) => i.resource)
        .join('\n'),
    );
    // Inside the flooding account its sellers take turns: its first three listings are three sellers.
    const floodFirst = items.filter((i) => i.treasury.seller_id !== honestId).slice(0, FLOOD_SELLERS);
    assert.deepEqual(new Set(floodFirst.map((i) => i.treasury.seller_id)), new Set(floodIds));

    const search = await t.request('GET', '/discovery/search?query=weather&limit=100');
    assert.equal(search.status, 200, JSON.stringify(search.body));
    const found = (search.body.resources as Item[]).flatMap((item, i) =>
      item.treasury.seller_id === honestId ? [i] : [],
    );
    assert.deepEqual(found, [1, 3]);
  });

  it('pages neither repeat nor skip, whatever the page size, on both routes', async () => {
    const whole = [...(await list(100, 0)).items, ...(await list(100, 100)).items].map((i) => i.resource);
    assert.equal(whole.length, FLOOD_SELLERS * FLOOD_ENDPOINTS + 2);
    assert.equal(new Set(whole).size, whole.length);
    const paged: string[] = [];
    for (let offset = 0; offset < whole.length; offset += 7)
      paged.push(...(await list(7, offset)).items.map((i) => i.resource));
    assert.deepEqual(paged, whole);

    const searched: string[] = [];
    let cursor: string | null = '0';
    while (cursor !== null) {
      const res = await t.request('GET', `/discovery/search?query=weather&limit=9&cursor=${cursor}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      searched.push(...(res.body.resources as Item[]).map((i) => i.resource));
      cursor = res.body.pagination.cursor;
    }
    assert.deepEqual(searched, whole, 'every listing matches "weather": the same order, in pages of 9');
  });

  it("counts verified revenue on the catalogue's network only; the seller's ledger revenue counts every network", async () => {
    const session = (await signInWithNewKey(t)).session;
    const seller = await registerSeller(t, servers, session, 'Network Weather', {
      endpoints: { 'GET /rain': '0.01' },
    });
    const endpoint_id = seller.endpoints['GET /rain']!;
    const report = async (network: string, amount: string) => {
      const res = await t.request('POST', '/v1/ledger', {
        token: seller.pat,
        body: {
          tx_hash: `0x${randomBytes(32).toString('hex')}`,
          payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
          amount,
          network,
          endpoint_id,
        },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    };
    await report(CATALOGUE_NETWORK, '10000');
    await report('eip155:8453', '5000000');
    await report('eip155:8453', '5000000');
    // As the ledger verifier would after an on-chain check (test fixture).
    assert.equal(await markLedgerVerifiedForTest(t.db.knex, seller.seller_id), 3);

    const page = await t.request('GET', `/discovery/resources?payTo=${seller.payTo}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    const [rain] = page.body.items as Item[];
    assert.equal(rain?.treasury.revenue_30d_usd, '0.01');
    assert.equal(rain?.treasury.paid_calls_30d, 1);

    const view = await t.request('GET', `/v1/sellers/${seller.seller_id}/discovery`, { token: session });
    assert.equal(view.status, 200, JSON.stringify(view.body));
    assert.equal(view.body.network, CATALOGUE_NETWORK);
    assert.deepEqual(
      [view.body.endpoints[0].revenue_30d_usd, view.body.endpoints[0].paid_calls_30d],
      ['0.01', 1],
      "the seller's view shows what the catalogue shows",
    );

    const from = new Date(Date.UTC(2026, 0, 1)).toISOString();
    const revenue = await t.request('GET', `/v1/ledger/revenue?from=${from}`, { token: seller.pat });
    assert.equal(revenue.status, 200, JSON.stringify(revenue.body));
    assert.equal(revenue.body.total_usd, '10.01', JSON.stringify(revenue.body));
  });
});
