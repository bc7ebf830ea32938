/**
 * GET /v1/ledger/revenue adds whole UTC days from seller_revenue_days and the edges of its range from the
 * ledger rows: over rows spread across days (at midnight, just before it, within a day), endpoints (and none),
 * and rows inserted outside the API, every range — open, at midnight, inside a day, shorter than a day,
 * for one endpoint — answers exactly what summing the verified rows answers, and what is pending or rejected
 * apart (rows not verified on chain never count).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { formatUsd } from '../../../policy/money.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { markLedgerVerifiedForTest } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';

describe('ledger revenue by day (HTTP, PostgreSQL)', function () {
  this.timeout(120_000);
  const t = useTestTreasury();

  it('answers, for every range and endpoint, what summing the rows answers', async () => {
    const { session } = await signInWithNewKey(t);
    const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Revenue Days' } })).body;
    const other = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Other Seller' } })).body;
    const endpoints: string[] = [];
    for (const path of ['/a', '/b'])
      endpoints.push(
        (
          await t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
            token: seller.pat,
            body: { path, price: '0.01' },
          })
        ).body.endpoint_id,
      );
    // Reported through the API (today), then history inserted as another process would: four days around
    // two midnights, at midnight exactly, a millisecond before it, and within the day; a third without endpoint.
    for (const [i, endpoint] of [endpoints[0], endpoints[1], undefined].entries()) {
      const res = await t.request('POST', '/v1/ledger', {
        token: seller.pat,
        body: {
          tx_hash: `0x${randomBytes(32).toString('hex')}`,
          payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
          amount: String(1000 + i),
          network: 'eip155:84532',
          ...(endpoint ? { endpoint_id: endpoint } : {}),
        },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    // As the ledger verifier would after an on-chain check (test fixture).
    assert.equal(await markLedgerVerifiedForTest(t.db.knex, seller.seller_id), 3);
    const times = [
      '2026-11-20T00:00:00.000Z',
      '2026-11-20T23:59:59.999Z',
      '2026-11-21T00:00:00.000Z',
      '2026-11-21T12:34:56.789Z',
      '2026-11-22T06:00:00.000Z',
      '2026-11-22T23:59:59.999Z',
      '2026-11-23T00:00:00.001Z',
    ];
    let n = 0;
    const history = times.flatMap((at, i) =>
      [endpoints[0], endpoints[1], null].map((endpoint, j) => ({
        id: `led_${(++n).toString(16).padStart(24, '0')}`,
        seller_id: seller.seller_id,
        endpoint_id: endpoint,
        tx_hash: `0x${randomBytes(32).toString('hex')}`,
        payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
        amount_micro: String(10_000 * (i + 1) + j),
        network: 'eip155:84532',
        payout_mode: 'direct',
        // Most verified; some still pending or rejected, which revenue shows apart and never counts.
        status: j === 2 && i % 2 === 1 ? 'pending' : i === 3 && j === 0 ? 'rejected' : 'verified',
        log_index: 0,
        created_at: new Date(at),
      })),
    );
    await t.db.knex('ledger_entries').insert(history);
    await t.db.knex('ledger_entries').insert({
      ...history[0]!,
      id: 'led_other_seller_00000001',
      seller_id: other.seller_id,
      endpoint_id: null,
      tx_hash: `0x${randomBytes(32).toString('hex')}`,
    });

    const rows = (await t.db.knex('ledger_entries').where({ seller_id: seller.seller_id })) as Array<{
      endpoint_id: string | null;
      amount_micro: string;
      created_at: Date;
      status: string;
    }>;
    const expected = (from?: string, to?: string, endpoint?: string) => {
      const all = rows.filter(
        (r) =>
          (!from || r.created_at >= new Date(from)) &&
          (!to || r.created_at < new Date(to)) &&
          (!endpoint || r.endpoint_id === endpoint),
      );
      const inRange = all.filter((r) => r.status === 'verified');
      const apart = (status: string) => {
        const of = all.filter((r) => r.status === status);
        return { count: of.length, total_usd: formatUsd(of.reduce((a, r) => a + BigInt(r.amount_micro), 0n)) };
      };
      const by = new Map<string, { total: bigint; count: number }>();
      for (const r of inRange) {
        const e = by.get(r.endpoint_id ?? '') ?? { total: 0n, count: 0 };
        by.set(r.endpoint_id ?? '', { total: e.total + BigInt(r.amount_micro), count: e.count + 1 });
      }
      const sorted = [...by.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return {
        seller_id: seller.seller_id,
        counts: 'verified',
        pending: apart('pending'),
        rejected: apart('rejected'),
        total_usd: formatUsd(inRange.reduce((a, r) => a + BigInt(r.amount_micro), 0n)),
        count: inRange.length,
        by_endpoint: sorted.map(([k, e]) => ({
          endpoint_id: k === '' ? null : k,
          total_usd: formatUsd(e.total),
          count: e.count,
        })),
      };
    };
    const bounds = [
      undefined,
      '2026-11-19T00:00:00.000Z',
      '2026-11-20T00:00:00.000Z',
      '2026-11-20T23:59:59.999Z',
      '2026-11-21T00:00:00.000Z',
      '2026-11-21T12:34:56.789Z',
      '2026-11-21T12:34:56.790Z',
      '2026-11-22T00:00:00.000Z',
      '2026-11-23T00:00:00.001Z',
      '2026-11-23T00:00:00.002Z',
      '2099-01-01T00:00:00.000Z',
    ];
    let checked = 0;
    for (const from of bounds) {
      for (const to of bounds) {
        for (const endpoint of [undefined, endpoints[1]]) {
          const query = new URLSearchParams({
            ...(from ? { from } : {}),
            ...(to ? { to } : {}),
            ...(endpoint ? { endpoint_id: endpoint } : {}),
          });
          const res = await t.request('GET', `/v1/ledger/revenue?${query}`, { token: seller.pat });
          assert.equal(res.status, 200, JSON.stringify(res.body));
          assert.deepEqual(res.body, expected(from, to, endpoint), `from=${from} to=${to} endpoint=${endpoint}`);
          checked++;
        }
      }
    }
    assert.equal(checked, 242);
    assert.equal(
      (await t.request('GET', '/v1/ledger/revenue', { token: seller.pat })).body.count,
      3 + 21 - 3 - 1,
      'every verified row once, none of the other seller',
    );
  });

  it('a bound outside 1970–9999 once its offset is applied answers 400 invalid_request; the last day of 9999 sums', async () => {
    const { session } = await signInWithNewKey(t);
    const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Far Bounds' } })).body;
    for (const query of [
      'from=0000-01-01T00:00:00Z',
      'to=0000-01-01T00:00:00Z',
      'from=1969-12-31T23:59:59.999Z',
      'from=1970-01-01T00:00:00%2B00:01',
      'to=9999-12-31T23:59:59-23:59',
      'from=9999-12-31T23:59:59-00:01',
    ]) {
      for (const path of ['/v1/ledger/revenue', '/v1/ledger']) {
        const res = await t.request('GET', `${path}?${query}`, { token: seller.pat });
        assert.equal(res.status, 400, `${path}?${query}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.error_code, 'invalid_request', query);
      }
    }
    for (const query of [
      'from=1970-01-01T00:00:00Z&to=9999-12-31T23:59:59.999Z',
      'from=9999-12-31T12:00:00Z',
      'from=9999-12-31T12:00:00Z&to=9999-12-31T23:59:59Z',
      'to=9999-12-31T23:59:59%2B23:59',
    ]) {
      const res = await t.request('GET', `/v1/ledger/revenue?${query}`, { token: seller.pat });
      assert.equal(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.count, 0, query);
    }
  });
});
