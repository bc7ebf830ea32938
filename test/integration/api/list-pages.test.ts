/**
 * The platform's paged lists through HTTP and real PostgreSQL: GET /v1/pats, /v1/sellers and a seller's
 * endpoints, payout flushes and service PATs. Each is walked page by page at several page sizes: every row
 * of the caller once, in the list's order (oldest first; flushes newest first), rows created in the same
 * millisecond ordered by id, never a row of another account or seller, even with that one's cursor. A
 * cursor that is not one of the list's own (malformed, or of another list kind) and ill-typed or unknown
 * query values answer 400 invalid_request. (GET /v1/agents: agents.test.ts; GET /v1/wallets:
 * wallet-lifecycle.test.ts.)
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { idsInListOrder } from '../../support/list-order.js';

interface PagedList {
  route: string;
  key: string;
  id: string;
  token: string;
  /** The rows the route must list, in its order. */
  expected: string[];
  /** Rows of the same kind the route must never list (another account's or seller's). */
  foreign: string[];
  /** A cursor the route handed another account or seller. */
  foreignCursor?: string;
}

describe('paged platform lists (HTTP, PostgreSQL)', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  const lists: Record<string, PagedList> = {};

  const ordered = (table: string, where: Record<string, unknown>, order: 'asc' | 'desc' = 'asc') =>
    idsInListOrder(t.db.knex, table, where, order);
  /** Gives rows one created_at, so that their order within the list is their ids'. */
  const sameMillisecond = (table: string, ids: string[]) =>
    t.db
      .knex(table)
      .whereIn('id', ids)
      .update({ created_at: new Date('2026-11-25T12:00:00.000Z') });

  async function walk(list: PagedList, limit: number, token = list.token) {
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const res = await t.request('GET', `${list.route}?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, { token });
      assert.equal(res.status, 200, `${list.route}: ${JSON.stringify(res.body)}`);
      assert.ok(Array.isArray(res.body[list.key]), `${list.route} keeps its "${list.key}" array`);
      assert.ok(res.body.next_cursor === null || typeof res.body.next_cursor === 'string');
      pages.push(res.body[list.key].map((row: Record<string, string>) => row[list.id]));
      cursor = res.body.next_cursor;
      assert.ok(pages.length <= 100, `${list.route}: the cursor never ends`);
    } while (cursor);
    return pages;
  }

  before(async () => {
    t = await startTestTreasury();
    const me = await signInWithNewKey(t);
    const them = await signInWithNewKey(t);
    const session = me.session;

    // Sellers: five of mine (each registration mints a service PAT), one of another account.
    const sellers: Array<{ seller_id: string; pat: string }> = [];
    for (let i = 0; i < 5; i++)
      sellers.push((await t.request('POST', '/v1/sellers', { token: session, body: { name: `Paged ${i}` } })).body);
    const theirSeller = (await t.request('POST', '/v1/sellers', { token: them.session, body: { name: 'Theirs' } }))
      .body;
    await t.request('POST', '/v1/sellers', { token: them.session, body: { name: 'Theirs too' } });
    await sameMillisecond(
      'sellers',
      sellers.slice(1, 4).map((s) => s.seller_id),
    );
    const [mine, sibling] = sellers as [{ seller_id: string; pat: string }, { seller_id: string; pat: string }];

    // PATs: four agent PATs of mine besides the sellers' service PATs; two of the other account.
    for (let i = 0; i < 4; i++)
      await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'agent', label: `p${i}` } });
    for (let i = 0; i < 2; i++)
      await t.request('POST', '/v1/pats', { token: them.session, body: { scope_type: 'agent' } });
    // Service PATs: three more for one seller, one more for its sibling.
    for (let i = 0; i < 3; i++)
      await t.request('POST', `/v1/sellers/${mine.seller_id}/pats`, { token: session, body: { label: `s${i}` } });
    await t.request('POST', `/v1/sellers/${sibling.seller_id}/pats`, { token: session, body: { label: 'sibling' } });
    const myPats = await ordered('api_tokens', { account_id: me.account_id, kind: 'pat' });
    await sameMillisecond('api_tokens', myPats.slice(3, 7));

    // Endpoints: six of one seller, two of its sibling.
    for (let i = 0; i < 6; i++)
      assert.equal(
        (
          await t.request('POST', `/v1/sellers/${mine.seller_id}/endpoints`, {
            token: session,
            body: { path: `/e${i}`, price: '0.01' },
          })
        ).status,
        201,
      );
    for (let i = 0; i < 2; i++)
      await t.request('POST', `/v1/sellers/${sibling.seller_id}/endpoints`, {
        token: session,
        body: { path: `/e${i}`, price: '0.01' },
      });
    await sameMillisecond('endpoints', (await ordered('endpoints', { seller_id: mine.seller_id })).slice(0, 3));

    // Payout flushes (history rows, written as a flush writes them): six of one seller, two of its sibling —
    // paid out of earnings (seller_payables, which PostgreSQL holds every payout within).
    const flush = (sellerId: string, at: Date) => ({
      id: `po_${randomBytes(12).toString('hex')}`,
      seller_id: sellerId,
      amount_micro: '1000',
      created_by: 'test',
      created_at: at,
    });
    await t.db
      .knex('seller_payables')
      .insert([mine.seller_id, sibling.seller_id].map((id) => ({ seller_id: id, earned_micro: '6000' })));
    await t.db
      .knex('payout_flushes')
      .insert([
        ...Array.from({ length: 6 }, (_, i) => flush(mine.seller_id, new Date(Date.UTC(2026, 10, 20 + (i % 3))))),
        ...Array.from({ length: 2 }, () => flush(sibling.seller_id, new Date())),
      ]);

    const all = async (table: string, where: Record<string, unknown>) =>
      (await t.db.knex(table).where(where).pluck('id')) as string[];
    const theirs = (await t.request('GET', '/v1/sellers?limit=1', { token: them.session })).body;
    const theirPats = (await t.request('GET', '/v1/pats?limit=1', { token: them.session })).body;
    const siblingEndpoints = (
      await t.request('GET', `/v1/sellers/${sibling.seller_id}/endpoints?limit=1`, { token: session })
    ).body;
    const siblingFlushes = (
      await t.request('GET', `/v1/sellers/${sibling.seller_id}/payouts?limit=1`, { token: session })
    ).body;
    const siblingPats = (await t.request('GET', `/v1/sellers/${sibling.seller_id}/pats?limit=1`, { token: session }))
      .body;
    assert.equal(theirs.sellers[0].seller_id, theirSeller.seller_id);
    assert.equal(siblingPats.pats[0].scope_id, sibling.seller_id);

    lists.sellers = {
      route: '/v1/sellers',
      key: 'sellers',
      id: 'seller_id',
      token: session,
      expected: await ordered('sellers', { account_id: me.account_id }),
      foreign: await all('sellers', { account_id: them.account_id }),
      foreignCursor: theirs.next_cursor,
    };
    lists.pats = {
      route: '/v1/pats',
      key: 'pats',
      id: 'id',
      token: session,
      expected: await ordered('api_tokens', { account_id: me.account_id, kind: 'pat' }),
      foreign: await all('api_tokens', { account_id: them.account_id }),
      foreignCursor: theirPats.next_cursor,
    };
    lists.endpoints = {
      route: `/v1/sellers/${mine.seller_id}/endpoints`,
      key: 'endpoints',
      id: 'endpoint_id',
      token: mine.pat,
      expected: await ordered('endpoints', { seller_id: mine.seller_id }),
      foreign: await all('endpoints', { seller_id: sibling.seller_id }),
      foreignCursor: siblingEndpoints.next_cursor,
    };
    lists.payouts = {
      route: `/v1/sellers/${mine.seller_id}/payouts`,
      key: 'flushes',
      id: 'id',
      token: mine.pat,
      expected: await ordered('payout_flushes', { seller_id: mine.seller_id }, 'desc'),
      foreign: await all('payout_flushes', { seller_id: sibling.seller_id }),
      foreignCursor: siblingFlushes.next_cursor,
    };
    const servicePats = await ordered('api_tokens', {
      account_id: me.account_id,
      kind: 'pat',
      scope_type: 'service',
      scope_id: mine.seller_id,
    });
    // Everything else: the account's other PATs (agent PATs, the sibling's service PATs) and the other account's.
    const otherPats = (await all('api_tokens', { kind: 'pat' })).filter((id) => !servicePats.includes(id));
    lists.servicePats = {
      route: `/v1/sellers/${mine.seller_id}/pats`,
      key: 'pats',
      id: 'id',
      token: session,
      expected: servicePats,
      foreign: otherPats,
      foreignCursor: siblingPats.next_cursor,
    };
    // Every list has more rows than the small pages below, and rows to keep out.
    assert.deepEqual(
      Object.values(lists).map((l) => [
        l.route,
        l.expected.length >= 4,
        l.foreign.length > 0,
        typeof l.foreignCursor === 'string',
      ]),
      Object.values(lists).map((l) => [l.route, true, true, true]),
    );
  });
  after(async () => {
    await t?.stop();
  });

  for (const name of ['sellers', 'pats', 'endpoints', 'payouts', 'servicePats']) {
    it(`${name}: every row once, in order, at any page size; nothing of another account or seller`, async () => {
      const list = lists[name]!;
      for (const limit of [1, 2, 3, list.expected.length, 500]) {
        const pages = await walk(list, limit);
        assert.deepEqual(pages.flat(), list.expected, `${list.route} limit=${limit}`);
        assert.ok(
          pages.slice(0, -1).every((p) => p.length === limit),
          `${list.route} limit=${limit}: full pages before the last`,
        );
        assert.equal(
          pages.length,
          Math.max(1, Math.ceil(list.expected.length / limit)),
          `${list.route} limit=${limit}: a page exactly as long as the rest is the last one`,
        );
      }
      const defaultPage = await t.request('GET', list.route, { token: list.token });
      assert.deepEqual(
        defaultPage.body[list.key].map((row: Record<string, string>) => row[list.id]),
        list.expected,
        'without a query: the first 100',
      );
      assert.equal(defaultPage.body.next_cursor, null);
      // A cursor handed to another account or seller names a position, not its rows.
      const foreign = await t.request('GET', `${list.route}?limit=500&cursor=${list.foreignCursor}`, {
        token: list.token,
      });
      assert.equal(foreign.status, 200, JSON.stringify(foreign.body));
      const shown = foreign.body[list.key].map((row: Record<string, string>) => row[list.id]) as string[];
      assert.ok(
        shown.every((id) => list.expected.includes(id)) && !shown.some((id) => list.foreign.includes(id)),
        `${list.route}: ${shown.join(', ')}`,
      );
    });
  }

  it("refuses a cursor that is not the list's own and ill-typed or unknown query values with 400 invalid_request", async () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64url');
    const at = '2026-11-25T12:00:00.000Z';
    const idOf: Record<string, string> = {
      sellers: 'sel_',
      pats: 'pat_',
      endpoints: 'ep_',
      payouts: 'po_',
      servicePats: 'pat_',
    };
    for (const [name, list] of Object.entries(lists)) {
      const otherKinds = ['wal_', 'agt_', 'sel_', 'ep_', 'po_', 'pat_', 'led_'].filter((p) => p !== idOf[name]);
      const cursors = [
        'not-a-cursor',
        b64(`${at}|${idOf[name]}nothex`),
        b64(`yesterday|${list.expected[0]}`),
        b64(`${at}|${list.expected[0]}|extra`),
        ...otherKinds.map((p) => b64(`${at}|${p}${'a'.repeat(24)}`)),
      ];
      for (const query of [
        ...cursors.map((c) => `cursor=${c}`),
        `cursor=${'a'.repeat(201)}`,
        'cursor=x%20y',
        'cursor=',
        'limit=0',
        'limit=501',
        'limit=-1',
        'limit=2.5',
        'limit=ten',
        'limit=1&limit=2',
        'status=active',
        'seller_id=sel_1',
      ]) {
        const res = await t.request('GET', `${list.route}?${query}`, { token: list.token });
        assert.equal(res.status, 400, `${list.route}?${query}`);
        assert.equal(res.body.error_code, 'invalid_request', `${list.route}?${query}`);
      }
    }
  });

  it("a flush answers the payouts' first page; a service PAT of another seller is not revoked through this one", async () => {
    const session = (await signInWithNewKey(t)).session;
    const seller = (
      await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Flusher', payout_mode: 'platform_mor' } })
    ).body;
    const other = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Other' } })).body;
    // Paid out of earnings: PostgreSQL holds every payout above 0 and within what was earned.
    await t.db.knex('seller_payables').insert({ seller_id: seller.seller_id, earned_micro: '101' });
    await t.db.knex('payout_flushes').insert(
      Array.from({ length: 101 }, (_, i) => ({
        id: `po_${randomBytes(12).toString('hex')}`,
        seller_id: seller.seller_id,
        amount_micro: '1',
        created_by: 'test',
        created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
      })),
    );
    const flushed = await t.request('POST', `/v1/sellers/${seller.seller_id}/payouts/flush`, { token: session });
    assert.equal(flushed.status, 200, JSON.stringify(flushed.body));
    assert.equal(flushed.body.flushes.length, 100);
    const rest = await t.request('GET', `/v1/sellers/${seller.seller_id}/payouts?cursor=${flushed.body.next_cursor}`, {
      token: session,
    });
    assert.equal(rest.body.flushes.length, 1);
    assert.equal(rest.body.next_cursor, null);
    assert.equal(rest.body.accrued_usd, flushed.body.accrued_usd);

    const wrong = await t.request('DELETE', `/v1/sellers/${seller.seller_id}/pats/${other.pat_id}`, { token: session });
    assert.equal(wrong.status, 404);
    assert.equal(wrong.body.error_code, 'pat_not_found');
    assert.equal((await t.db.knex('api_tokens').where({ id: other.pat_id }).first()).revoked_at, null);
    const right = await t.request('DELETE', `/v1/sellers/${other.seller_id}/pats/${other.pat_id}`, { token: session });
    assert.equal(right.status, 200);
    assert.ok(right.body.revoked_at);
  });
});
