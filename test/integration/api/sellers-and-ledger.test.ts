/**
 * Sellers, endpoints, the middleware's verify call and the ledger through HTTP with real PostgreSQL:
 * registration with an account session returns a service PAT; suspend/resume keep endpoints and ledger;
 * /v1/auth/verify lists endpoints; a reported row shows in list, revenue and CSV; the same tx_hash twice is
 * one row; a Treasury-paid row references its authorization and decision; scopes do not overlap.
 */
import { MAX_ROUTE_PRICES } from '../../../src/api/sellers/seller-schemas.js';
import assert from 'node:assert/strict';
import { linkAuthorization } from '../../../src/api/sellers/store/ledger-row-claim.js';
import { randomBytes } from 'node:crypto';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { markLedgerVerifiedForTest } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const txHash = () => `0x${randomBytes(32).toString('hex')}`;

describe('sellers, endpoints and ledger (HTTP, PostgreSQL)', function () {
  this.timeout(120_000);
  let t: TestTreasury;

  async function signIn() {
    return signInWithNewKey(t);
  }

  /** A new wallet of the session's Treasury (through its Treasury PAT) and its payment of `amount` micro-USDC. */
  async function walletPays(session: string, amount: string) {
    const treasuryPat = (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'treasury' } })).body
      .pat;
    const wallet = (await t.request('POST', '/v1/wallets', { token: treasuryPat, body: {} })).body;
    const paid = (
      await t.request('POST', `/v1/wallets/${wallet.id}/pay`, {
        token: treasuryPat,
        body: { payment_requirements: paymentRequirements({ amount }) },
      })
    ).body;
    return { wallet, paid };
  }

  before(async () => {
    t = await startTestTreasury();
  });
  after(async () => {
    await t?.stop();
  });

  it('registers a seller with a session, returns a service PAT, and serves endpoints to /v1/auth/verify', async () => {
    const { session } = await signIn();
    const created = await t.request('POST', '/v1/sellers', {
      token: session,
      body: {
        name: 'Weather API',
        capabilities: ['weather', 'geo.lookup'],
        legal_entity: 'Weather Ltd',
        country: 'GB',
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.match(created.body.seller_id, /^sel_/);
    assert.match(created.body.pat, /^xx_pat_/);
    assert.equal(created.body.slug, 'weather-api');
    assert.equal(created.body.banking_state, 'declared');
    const svc = created.body.pat;
    const who = await t.request('GET', '/v1/auth/whoami', { token: svc });
    assert.deepEqual([who.body.scope_type, who.body.scope_id], ['service', created.body.seller_id]);

    const ep = await t.request('POST', `/v1/sellers/${created.body.seller_id}/endpoints`, {
      token: svc,
      body: { path: '/forecast', price: '0.01', capabilities: ['weather'] },
    });
    assert.equal(ep.status, 201, JSON.stringify(ep.body));
    assert.match(ep.body.endpoint_id, /^ep_/);
    assert.equal(ep.body.price, '0.01');
    const dup = await t.request('POST', `/v1/sellers/${created.body.seller_id}/endpoints`, {
      token: svc,
      body: { path: '/forecast', price: '0.02' },
    });
    assert.equal(dup.body.error_code, 'endpoint_exists');
    const priced = await t.request('PATCH', `/v1/sellers/${created.body.seller_id}/endpoints/${ep.body.endpoint_id}`, {
      token: session,
      body: { price: '0.02', route_prices: { '/forecast/free': '0' } },
    });
    assert.equal(priced.body.price, '0.02');
    // Route prices are bounded per endpoint: every gate holds them all.
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`/forecast/r${i}`, '0.5']));
    const tooMany = await t.request('PATCH', `/v1/sellers/${created.body.seller_id}/endpoints/${ep.body.endpoint_id}`, {
      token: session,
      body: { route_prices: many(MAX_ROUTE_PRICES + 1) },
    });
    assert.deepEqual([tooMany.status, tooMany.body.error_code], [400, 'invalid_request']);
    const enough = await t.request('PATCH', `/v1/sellers/${created.body.seller_id}/endpoints/${ep.body.endpoint_id}`, {
      token: session,
      body: { route_prices: { ...many(MAX_ROUTE_PRICES - 1), '/forecast/free': '0' } },
    });
    assert.equal(enough.status, 200, JSON.stringify(enough.body).slice(0, 300));

    const verify = await t.request('POST', '/v1/auth/verify', { token: svc });
    assert.equal(verify.status, 200);
    assert.equal(verify.body.seller_id, created.body.seller_id);
    assert.deepEqual(
      verify.body.endpoints.map((e: { endpoint_id: string }) => e.endpoint_id),
      [ep.body.endpoint_id],
    );
    assert.equal(
      (await t.request('POST', '/v1/auth/verify', { token: session })).status,
      403,
      'verify takes a service PAT',
    );

    const suspended = await t.request('POST', `/v1/sellers/${created.body.seller_id}/suspend`, { token: session });
    assert.equal(suspended.body.status, 'suspended');
    assert.equal((await t.request('POST', '/v1/auth/verify', { token: svc })).body.error_code, 'seller_suspended');
    assert.equal(
      (await t.request('GET', `/v1/sellers/${created.body.seller_id}/endpoints`, { token: svc })).body.endpoints.length,
      1,
      'endpoints survive suspension',
    );
    assert.equal(
      (await t.request('POST', `/v1/sellers/${created.body.seller_id}/resume`, { token: session })).body.status,
      'active',
    );
    assert.equal((await t.request('POST', '/v1/auth/verify', { token: svc })).status, 200);
  });

  it('ledger: reported rows show in list, revenue and CSV; the same tx_hash twice is one row; Treasury payments are referenced', async () => {
    const me = await signIn();
    const seller = (
      await t.request('POST', '/v1/sellers', { token: me.session, body: { name: 'Search', slug: 'search-co' } })
    ).body;
    const svc = seller.pat;
    const ep1 = (
      await t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
        token: svc,
        body: { path: '/search', method: 'POST', price: '0.05' },
      })
    ).body;
    const ep2 = (
      await t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
        token: svc,
        body: { path: '/items', path_pattern: '/items/{id}', price: '0.01' },
      })
    ).body;

    // a Treasury wallet pays, and the middleware reports it with the authorization nonce
    const { wallet, paid } = await walletPays(me.session, '50000');

    const h1 = txHash();
    const report = (body: Record<string, unknown>) => t.request('POST', '/v1/ledger', { token: svc, body });
    const first = await report({
      tx_hash: h1,
      payer: wallet.address,
      amount: '50000',
      network: 'eip155:84532',
      method: 'POST',
      route: '/search',
      content_hash: 'a'.repeat(64),
      nonce: paid.authorization.nonce,
    });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.equal(first.body.endpoint_id, ep1.endpoint_id, 'attributed by route lookup');
    // The nonce is a claim: the row names the authorization only once the chain shows its own transfer
    // (test/integration/api/merchant-of-record.test.ts).
    assert.deepEqual([first.body.authorization_id, first.body.decision_id], [null, null]);
    const again = await report({
      tx_hash: h1,
      payer: wallet.address,
      amount: '50000',
      network: 'eip155:84532',
      route: '/search',
      method: 'POST',
    });
    assert.equal(again.status, 200);
    assert.equal(again.body.duplicate, true);
    assert.equal(again.body.id, first.body.id);
    const patterned = await report({
      tx_hash: txHash(),
      payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
      amount: '10000',
      network: 'eip155:84532',
      route: '/items/42',
    });
    assert.equal(patterned.body.endpoint_id, ep2.endpoint_id, 'attributed by path pattern');
    const pinned = await report({
      tx_hash: txHash(),
      payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
      amount: '10000',
      network: 'eip155:84532',
      endpoint_id: ep2.endpoint_id,
      route: '/=cmd()',
    });
    assert.equal(pinned.body.endpoint_id, ep2.endpoint_id, 'pinned endpoint wins');

    const list = await t.request('GET', '/v1/ledger?limit=2', { token: svc });
    assert.equal(list.body.entries.length, 2);
    assert.ok(list.body.next_cursor);
    const page2 = await t.request('GET', `/v1/ledger?limit=2&cursor=${list.body.next_cursor}`, { token: svc });
    assert.equal(page2.body.entries.length, 1);
    assert.equal(page2.body.next_cursor, null);
    const bySession = await t.request('GET', `/v1/ledger?seller_id=${seller.seller_id}`, { token: me.session });
    assert.equal(bySession.body.entries.length, 3);

    // Reported rows are pending until verified on chain (test/integration/api/ledger-verification.test.ts): none counts yet.
    assert.ok(
      bySession.body.entries.every(
        (e: { status: string; reason: string }) => e.status === 'pending' && e.reason === 'pay_to_not_registered',
      ),
    );
    const unverified = await t.request('GET', '/v1/ledger/revenue', { token: svc });
    assert.deepEqual(
      [unverified.body.total_usd, unverified.body.count, unverified.body.pending],
      ['0', 0, { count: 3, total_usd: '0.07' }],
    );
    await markLedgerVerifiedForTest(t.db.knex, seller.seller_id);
    const revenue = await t.request('GET', '/v1/ledger/revenue', { token: svc });
    assert.equal(revenue.body.total_usd, '0.07');
    assert.equal(revenue.body.count, 3);

    const csv = await t.request('GET', '/v1/ledger/export?format=csv', { token: svc });
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type') ?? '', /text\/csv/);
    const lines = (csv.body as string).trim().split('\n');
    assert.equal(lines.length, 4);
    assert.ok(lines.some((l) => l.includes(h1) && l.includes('0.05')));
    assert.equal(
      lines[0],
      'created_at,id,tx_hash,payer,amount_usd,network,endpoint_id,method,route,content_hash,authorization_id,decision_id,status,reason',
    );
    assert.ok(lines.slice(1).every((l) => l.endsWith(',verified,')));
    assert.ok(lines.some((l) => l.split(',')[8] === '/=cmd()'));

    const otherMethod = await report({
      tx_hash: txHash(),
      payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
      amount: '10000',
      network: 'eip155:84532',
      method: 'DELETE',
      route: '/items/42',
    });
    assert.equal(otherMethod.body.endpoint_id, null, 'a pattern matches only its own method');
    const unknownRoute = await report({
      tx_hash: txHash(),
      payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
      amount: '10000',
      network: 'eip155:84532',
      route: '/nothing/here',
    });
    assert.equal(unknownRoute.body.endpoint_id, null, 'a route no endpoint has is recorded without one');
  });

  it("ledger: a reported nonce is kept as claimed, not linked on the report's word; the verifier's lookup uses the unique index", async () => {
    const me = await signIn();
    const seller = (await t.request('POST', '/v1/sellers', { token: me.session, body: { name: 'Lookup Co' } })).body;
    const { wallet, paid } = await walletPays(me.session, '10000');

    const lookups: Array<{ sql: string; bindings: unknown[] }> = [];
    const onQuery = (q: { sql: string; bindings?: unknown[] }) => {
      if (/from "authorizations"/i.test(q.sql)) lookups.push({ sql: q.sql, bindings: q.bindings ?? [] });
    };
    const nonce = paid.authorization.nonce.toUpperCase().replace('0X', '0x');
    t.db.knex.on('query', onQuery);
    let reported;
    try {
      reported = await t.request('POST', '/v1/ledger', {
        token: seller.pat,
        body: {
          tx_hash: txHash(),
          payer: wallet.address.toLowerCase(),
          amount: '10000',
          network: 'eip155:84532',
          nonce,
        },
      });
    } finally {
      t.db.knex.off('query', onQuery);
    }
    assert.equal(reported.status, 201, JSON.stringify(reported.body));
    assert.deepEqual([reported.body.authorization_id, reported.body.decision_id], [null, null]);
    assert.equal(lookups.length, 0, 'a report reads no authorization');
    const stored = await t.db.knex('ledger_entries').where({ id: reported.body.id }).first('nonce');
    assert.equal(stored.nonce, paid.authorization.nonce.toLowerCase());

    // The verifier's lookup (once a transaction is verified): an exact match on the unique index, whatever the case.
    t.db.knex.on('query', onQuery);
    try {
      const link = await linkAuthorization(
        t.db.knex,
        { payer: wallet.address.toLowerCase(), network: 'eip155:84532' },
        nonce,
        { to: null, input: '0x', status: 'success', logs: [], blockNumber: 1n, confirmations: 1 },
        '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      );
      assert.equal(link, undefined, 'no transaction spent it');
    } finally {
      t.db.knex.off('query', onQuery);
    }
    assert.equal(lookups.length, 1);
    // The driver's $n placeholders, in order, as knex.raw's ?.
    const plan = (
      await t.db.knex.raw(`EXPLAIN ${lookups[0]!.sql.replace(/\$\d+/g, '?')}`, lookups[0]!.bindings as never[])
    ).rows
      .map((r: Record<string, string>) => r['QUERY PLAN'])
      .join('\n');
    assert.match(plan, /Index Scan using authorizations_from_address_scheme_nonce_unique/, plan);
    // from_address is varchar since the Solana widening: the plan may spell the comparison with a ::text cast.
    assert.match(plan, /Index Cond: \(\(+from_address\)?(?:::text)? = /, plan);
  });

  it('ledger export: any number of rows, streamed oldest first in pages, within from/to and for one endpoint', async () => {
    const me = await signIn();
    const seller = (await t.request('POST', '/v1/sellers', { token: me.session, body: { name: 'Busy Co' } })).body;
    const ep = (
      await t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
        token: seller.pat,
        body: { path: '/busy', price: '0.01' },
      })
    ).body;
    // 2,345 rows, one a minute from 2026-01-01 (more than two of the export's pages), every third on the endpoint.
    await t.db.knex.raw(
      `INSERT INTO ledger_entries (id, seller_id, endpoint_id, tx_hash, payer, amount_micro, network, created_at)
       SELECT 'led_' || substr(md5('busy' || n), 1, 24), ?, CASE WHEN n % 3 = 0 THEN ? END, '0x' || md5('tx' || n) || md5('tx2' || n),
              '0x857b06519E91e3A54538791bDbb0E22373e36b66', 10000, 'eip155:84532', timestamptz '2026-01-01T00:00:00Z' + n * interval '1 minute'
         FROM generate_series(1, 2345) n`,
      [seller.seller_id, ep.endpoint_id],
    );
    const exported = async (query: string) => {
      const res = await t.request('GET', `/v1/ledger/export?format=csv${query}`, { token: seller.pat });
      assert.equal(res.status, 200);
      return (res.body as string).trimEnd().split('\n').slice(1);
    };
    const all = await exported('');
    assert.equal(all.length, 2345);
    const times = all.map((l) => l.split(',')[0]!);
    assert.deepEqual(times, [...times].sort(), 'oldest first');
    assert.equal(new Set(all.map((l) => l.split(',')[1])).size, 2345, 'every row once');
    // from inclusive, to exclusive: minutes 1000 to 1999.
    const window = await exported('&from=2026-01-01T16:40:00Z&to=2026-01-02T09:20:00Z');
    assert.equal(window.length, 1000);
    assert.equal(window[0]!.split(',')[0], '2026-01-01T16:40:00.000Z');
    const onEndpoint = await exported(`&endpoint_id=${ep.endpoint_id}`);
    assert.equal(onEndpoint.length, 781);
    assert.ok(onEndpoint.every((l) => l.split(',')[6] === ep.endpoint_id));
  });

  it('ledger batch: up to 100 rows in one call, one outcome per row in order; one bad row does not fail the others', async () => {
    const me = await signIn();
    const seller = (await t.request('POST', '/v1/sellers', { token: me.session, body: { name: 'Batch Co' } })).body;
    const other = (
      await t.request('POST', '/v1/sellers', { token: (await signIn()).session, body: { name: 'Other Co' } })
    ).body;
    const ep = (
      await t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
        token: seller.pat,
        body: { path: '/paid', price: '0.01' },
      })
    ).body;
    const payer = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
    const taken = txHash();
    assert.equal(
      (
        await t.request('POST', '/v1/ledger', {
          token: other.pat,
          body: { tx_hash: taken, payer, amount: '10000', network: 'eip155:84532' },
        })
      ).status,
      201,
    );
    const [a, b] = [txHash(), txHash()];
    const rows = [
      {
        tx_hash: a,
        payer,
        amount: '10000',
        network: 'eip155:84532',
        method: 'GET',
        route: '/paid',
        content_hash: 'b'.repeat(64),
      },
      { tx_hash: a, payer, amount: '10000', network: 'eip155:84532' },
      { tx_hash: b, payer, amount: '10000', network: 'eip155:84532', endpoint_id: 'ep_000000000000000000000000' },
      { tx_hash: taken, payer, amount: '10000', network: 'eip155:84532' },
      { tx_hash: txHash(), payer, amount: '20000', network: 'eip155:84532', endpoint_id: ep.endpoint_id },
    ];
    const res = await t.request('POST', '/v1/ledger/batch', { token: seller.pat, body: { rows } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.results.map((r: { outcome: string; error_code?: string }) => [r.outcome, r.error_code]),
      // Another seller's report of the same transaction does not block this one: the chain decides whose it is.
      [
        ['created', undefined],
        ['duplicate', undefined],
        ['rejected', 'endpoint_not_found'],
        ['created', undefined],
        ['created', undefined],
      ],
    );
    const stored = res.body.results.filter((r: { outcome: string }) => r.outcome !== 'rejected');
    assert.ok(
      stored.every(
        (r: { status: string; reason: string }) => r.status === 'pending' && r.reason === 'pay_to_not_registered',
      ),
      JSON.stringify(stored),
    );
    const list = (await t.request('GET', '/v1/ledger', { token: seller.pat })).body.entries;
    assert.equal(list.length, 3);
    assert.equal(
      list.find((e: { tx_hash: string }) => e.tx_hash === a).endpoint_id,
      ep.endpoint_id,
      'attributed by route',
    );
    assert.equal(
      (await t.request('GET', '/v1/ledger/revenue', { token: seller.pat })).body.total_usd,
      '0',
      'nothing verified yet',
    );
    await markLedgerVerifiedForTest(t.db.knex, seller.seller_id);
    assert.equal((await t.request('GET', '/v1/ledger/revenue', { token: seller.pat })).body.total_usd, '0.04');

    // hostile batches change nothing
    for (const body of [
      { rows: [] },
      { rows: Array.from({ length: 101 }, () => rows[4]) },
      { rows: [{ ...rows[4], amount: '-1' }] },
      { rows: [rows[4]], extra: 1 },
      [],
    ]) {
      const bad = await t.request('POST', '/v1/ledger/batch', { token: seller.pat, body });
      assert.equal(bad.status, 400, JSON.stringify(body).slice(0, 80));
    }
    assert.equal((await t.request('GET', '/v1/ledger', { token: seller.pat })).body.entries.length, 3);
    assert.equal(
      (await t.request('POST', '/v1/ledger/batch', { token: me.session, body: { rows: [rows[4]] } })).status,
      403,
      'a session cannot report',
    );
  });

  it('an endpoint with ledger rows is kept (409 endpoint_has_ledger), whoever reported them; one without is deleted', async () => {
    const { session } = await signIn();
    const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Deletes' } })).body;
    const add = async (path: string) =>
      (
        await t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
          token: seller.pat,
          body: { path, price: '0.01' },
        })
      ).body.endpoint_id as string;
    const [reported, inserted, unused] = [await add('/reported'), await add('/inserted'), await add('/unused')];
    const report = await t.request('POST', '/v1/ledger', {
      token: seller.pat,
      body: {
        tx_hash: txHash(),
        payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
        amount: '10000',
        network: 'eip155:84532',
        endpoint_id: reported,
      },
    });
    assert.equal(report.status, 201);
    // A row written outside the API, yesterday.
    await t.db.knex('ledger_entries').insert({
      id: `led_${randomBytes(12).toString('hex')}`,
      seller_id: seller.seller_id,
      endpoint_id: inserted,
      tx_hash: txHash(),
      payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
      amount_micro: '1',
      network: 'eip155:84532',
      created_at: new Date(Date.now() - 86_400_000),
    });
    for (const id of [reported, inserted]) {
      const refused = await t.request('DELETE', `/v1/sellers/${seller.seller_id}/endpoints/${id}`, { token: session });
      assert.deepEqual([refused.status, refused.body.error_code], [409, 'endpoint_has_ledger']);
    }
    assert.equal(
      (await t.request('DELETE', `/v1/sellers/${seller.seller_id}/endpoints/${unused}`, { token: session })).status,
      204,
    );
    const left = (
      await t.request('GET', `/v1/sellers/${seller.seller_id}/endpoints`, { token: seller.pat })
    ).body.endpoints
      .map((e: { endpoint_id: string }) => e.endpoint_id)
      .sort();
    assert.deepEqual(left, [reported, inserted].sort());
  });

  it('scopes do not overlap: a service PAT cannot sign, another seller cannot read this ledger', async () => {
    const a = await signIn();
    const b = await signIn();
    const sa = (await t.request('POST', '/v1/sellers', { token: a.session, body: { name: 'A' } })).body;
    const sb = (await t.request('POST', '/v1/sellers', { token: b.session, body: { name: 'B' } })).body;
    assert.equal((await t.request('GET', `/v1/ledger?seller_id=${sa.seller_id}`, { token: sb.pat })).status, 404);
    assert.equal((await t.request('GET', `/v1/sellers/${sa.seller_id}`, { token: b.session })).status, 404);
    assert.equal((await t.request('GET', `/v1/sellers/${sa.seller_id}`, { token: sa.pat })).status, 200);
    assert.equal(
      (await t.request('GET', '/v1/wallets', { token: sa.pat })).status,
      403,
      'a service PAT cannot reach wallets',
    );
    const agentPat = (await t.request('POST', '/v1/pats', { token: a.session, body: { scope_type: 'agent' } })).body
      .pat;
    assert.equal(
      (await t.request('GET', `/v1/ledger?seller_id=${sa.seller_id}`, { token: agentPat })).status,
      403,
      'an agent PAT cannot read a ledger',
    );
    assert.equal((await t.request('POST', '/v1/ledger', { token: a.session, body: {} })).status, 403);
  });
});
