/**
 * Agents through HTTP: the sign-in session lists its auto-spawned agent, spawns another (each with its own
 * Treasury account), and adds wallets to an agent; the agent's own PAT reads itself and adds wallets to its
 * own Treasury account but cannot set their policy, touch a sibling, or list the account's agents; another
 * account sees 404. The wallet then pays with the agent PAT. The account's list pages with a keyset cursor
 * and reads the wallets of a page's agents in one query, whatever the number of agents.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { useTestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';

describe('agents (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(120_000);
  const t = useTestTreasury();

  it('session manages agents; an agent PAT adds wallets to itself only; others see 404', async () => {
    const me = await signInWithNewKey(t);
    const listed = await t.request('GET', '/v1/agents', { token: me.session });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.deepEqual(
      listed.body.agents.map((a: { agent_id: string }) => a.agent_id),
      [me.agent_id],
    );

    const spawned = await t.request('POST', '/v1/agents', { token: me.session, body: { label: 'research' } });
    assert.equal(spawned.status, 201);
    assert.equal(spawned.body.label, 'research');
    assert.notEqual(
      spawned.body.treasury_account_id,
      listed.body.agents[0].treasury_account_id,
      'each agent has its own Treasury account',
    );

    const owned = await t.request('POST', `/v1/agents/${me.agent_id}/wallets`, {
      token: me.session,
      body: { label: 'main', network: 'eip155:84532', policy: { per_tx_cap_usd: '0.5' } },
    });
    assert.equal(owned.status, 201, JSON.stringify(owned.body));
    assert.equal(owned.body.network, 'eip155:84532');

    const pat = (
      await t.request('POST', '/v1/pats', {
        token: me.session,
        body: { scope_type: 'agent', scope_id: me.agent_id, label: 'cli' },
      })
    ).body.pat as string;
    const self = await t.request('GET', `/v1/agents/${me.agent_id}`, { token: pat });
    assert.equal(self.status, 200);
    assert.deepEqual(
      self.body.wallets.map((w: { id: string }) => w.id),
      [owned.body.id],
    );
    const extra = await t.request('POST', `/v1/agents/${me.agent_id}/wallets`, {
      token: pat,
      body: { label: 'second' },
    });
    assert.equal(extra.status, 201);
    const withPolicy = await t.request('POST', `/v1/agents/${me.agent_id}/wallets`, {
      token: pat,
      body: { policy: {} },
    });
    assert.equal(withPolicy.status, 403);
    assert.equal(
      (await t.request('GET', `/v1/agents/${spawned.body.agent_id}`, { token: pat })).status,
      404,
      'a sibling agent is not visible to this PAT',
    );
    assert.equal((await t.request('GET', '/v1/agents', { token: pat })).status, 403);

    // The agent PAT pays with its wallet; the owner's policy applies.
    const ok = await t.request('POST', `/v1/wallets/${owned.body.id}/pay`, {
      token: pat,
      body: { payment_requirements: paymentRequirements({ amount: '500000' }) },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const denied = await t.request('POST', `/v1/wallets/${owned.body.id}/pay`, {
      token: pat,
      body: { payment_requirements: paymentRequirements({ amount: '500001' }) },
    });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.rule, 'per_tx_cap_usd');

    const stranger = await signInWithNewKey(t);
    assert.equal((await t.request('GET', `/v1/agents/${me.agent_id}`, { token: stranger.session })).status, 404);
    assert.equal(
      (await t.request('POST', `/v1/agents/${me.agent_id}/wallets`, { token: stranger.session, body: {} })).status,
      404,
    );
    assert.equal((await t.request('GET', '/v1/agents/agt_nothex', { token: me.session })).status, 400);
  });
  /** Walks GET /v1/agents page by page; every page's answer and the statements that touched agents or wallets. */
  async function walkAgents(session: string, limit: number) {
    const pages: Array<{ agents: any[]; statements: number }> = [];
    let cursor: string | null = null;
    do {
      const statements: string[] = [];
      const onQuery = (q: { sql: string }) => {
        if (/\b(agents|wallets)\b/.test(q.sql)) statements.push(q.sql);
      };
      t.db.knex.on('query', onQuery);
      let res;
      try {
        res = await t.request('GET', `/v1/agents?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, {
          token: session,
        });
      } finally {
        t.db.knex.off('query', onQuery);
      }
      assert.equal(res.status, 200, JSON.stringify(res.body));
      pages.push({ agents: res.body.agents, statements: statements.length });
      cursor = res.body.next_cursor;
    } while (cursor);
    return pages;
  }

  /** `count` active wallets straight into an agent's Treasury account (listing needs no key in the HSM). */
  async function insertWallets(treasuryAccountId: string, count: number, at: Date) {
    const rows = Array.from({ length: count }, () => ({
      id: `wal_${randomBytes(12).toString('hex')}`,
      account_id: treasuryAccountId,
      network: 'eip155:84532',
      address: `0x${randomBytes(20).toString('hex')}`,
      public_key: `0x04${randomBytes(64).toString('hex')}`,
      policy: '{}',
      status: 'active',
      created_at: at,
      updated_at: at,
    }));
    await t.db.knex('wallets').insert(rows);
    return rows.map((r) => r.id);
  }

  it("lists agents page by page: each once, oldest first, ties broken by id; another account's never; bad cursors are 400", async () => {
    const me = await signInWithNewKey(t);
    for (let i = 0; i < 6; i++)
      assert.equal(
        (await t.request('POST', '/v1/agents', { token: me.session, body: { label: `a${i}` } })).status,
        201,
      );
    const other = await signInWithNewKey(t);
    await t.request('POST', '/v1/agents', { token: other.session, body: { label: 'theirs' } });
    // Three agents created in the same millisecond: the id orders them.
    const all = (await t.db
      .knex('agents')
      .where({ account_id: me.account_id })
      .orderBy('created_at')
      .pluck('id')) as string[];
    await t.db
      .knex('agents')
      .whereIn('id', all.slice(2, 5))
      .update({ created_at: new Date('2026-11-25T10:00:00.000Z') });
    const expected = (await t.db
      .knex('agents')
      .where({ account_id: me.account_id })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .pluck('id')) as string[];
    assert.equal(expected.length, 7);

    for (const limit of [1, 2, 3, 7, 500]) {
      const pages = (await walkAgents(me.session, limit)).map((p) => p.agents.map((a) => a.agent_id as string));
      assert.deepEqual(pages.flat(), expected, `limit=${limit}`);
      assert.ok(
        pages.every(
          (p, i) => p.length === (i < pages.length - 1 ? limit : expected.length - limit * (pages.length - 1)),
        ),
        `limit=${limit}: full pages before the last`,
      );
    }
    // A cursor of the other account names a position, not its agents.
    const theirs = await t.request('GET', '/v1/agents?limit=1', { token: other.session });
    const foreign = await t.request('GET', `/v1/agents?cursor=${theirs.body.next_cursor}`, { token: me.session });
    assert.equal(foreign.status, 200);
    assert.ok(foreign.body.agents.every((a: { agent_id: string }) => expected.includes(a.agent_id)));

    const walletCursor = Buffer.from(`2026-11-25T10:00:00.000Z|wal_${'a'.repeat(24)}`).toString('base64url');
    for (const query of [
      'cursor=not-a-cursor',
      `cursor=${walletCursor}`,
      'cursor=x%20y',
      `cursor=${'a'.repeat(201)}`,
      'limit=0',
      'limit=501',
      'limit=ten',
      'limit=1.5',
      'status=active',
      'cursor=a&cursor=b',
    ]) {
      const res = await t.request('GET', `/v1/agents?${query}`, { token: me.session });
      assert.equal(res.status, 400, query);
      assert.equal(res.body.error_code, 'invalid_request', query);
    }
  });

  it('reads the wallets of a page of agents in one query, whatever the number of agents; each agent shows what GET /v1/agents/{id} shows', async () => {
    const me = await signInWithNewKey(t);
    const oneAgent = await walkAgents(me.session, 100);
    assert.equal(oneAgent.length, 1);

    for (let i = 0; i < 11; i++) await t.request('POST', '/v1/agents', { token: me.session, body: { label: `b${i}` } });
    const agents = (await t.db
      .knex('agents')
      .where({ account_id: me.account_id })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])) as Array<{ id: string; treasury_account_id: string }>;
    assert.equal(agents.length, 12);
    // Wallets: none for the first agent, two (one of them revoked) for the second, 101 for the third (one more
    // than an agent shows), one each for the rest; all of them created in one millisecond so that ids order them.
    const at = new Date('2026-11-25T11:00:00.000Z');
    const [, second, third, ...rest] = agents;
    const [kept, revoked] = await insertWallets(second!.treasury_account_id, 2, at);
    await t.db.knex('wallets').where({ id: revoked }).update({ status: 'revoked', revoked_at: at });
    await insertWallets(third!.treasury_account_id, 101, at);
    for (const agent of rest) await insertWallets(agent.treasury_account_id, 1, at);

    const twelve = await walkAgents(me.session, 500);
    assert.equal(twelve.length, 1);
    assert.equal(twelve[0]!.statements, oneAgent[0]!.statements, 'as many statements for 12 agents as for one');
    assert.ok(
      twelve[0]!.statements <= 2,
      `${twelve[0]!.statements} statements: the agents, then the wallets of all of them`,
    );
    const paged = await walkAgents(me.session, 5);
    assert.deepEqual(
      paged.map((p) => p.statements),
      [2, 2, 2],
    );
    assert.deepEqual(
      paged.flatMap((p) => p.agents),
      twelve[0]!.agents,
      'the same agents and wallets in pages of 5',
    );

    const listed = twelve[0]!.agents;
    for (const [i, agent] of agents.entries()) {
      const expected = (await t.db
        .knex('wallets')
        .where({ account_id: agent.treasury_account_id, status: 'active' })
        .orderBy([{ column: 'created_at' }, { column: 'id' }])
        .pluck('id')) as string[];
      assert.equal(listed[i].agent_id, agent.id);
      assert.deepEqual(
        listed[i].wallets.map((w: { id: string }) => w.id),
        expected.slice(0, 100),
        `agent ${i}`,
      );
      assert.ok(
        listed[i].wallets.every(
          (w: { account_id: string; status: string }) =>
            w.account_id === agent.treasury_account_id && w.status === 'active',
        ),
      );
      const single = await t.request('GET', `/v1/agents/${agent.id}`, { token: me.session });
      assert.deepEqual(listed[i], single.body, `agent ${i}: the list shows what GET /v1/agents/{id} shows`);
    }
    assert.deepEqual(
      listed[1].wallets.map((w: { id: string }) => w.id),
      [kept],
    );
    assert.equal(listed[0].wallets_next_cursor, null);
    // The third agent's 101st wallet is where wallets_next_cursor continues.
    const treasuryPat = (
      await t.request('POST', '/v1/pats', {
        token: me.session,
        body: { scope_type: 'treasury', scope_id: third!.treasury_account_id },
      })
    ).body.pat;
    const more = await t.request('GET', `/v1/wallets?status=active&cursor=${listed[2].wallets_next_cursor}`, {
      token: treasuryPat,
    });
    assert.equal(more.status, 200, JSON.stringify(more.body));
    const thirdWallets = (await t.db
      .knex('wallets')
      .where({ account_id: third!.treasury_account_id })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .pluck('id')) as string[];
    assert.deepEqual(
      more.body.wallets.map((w: { id: string }) => w.id),
      thirdWallets.slice(100),
    );
    assert.equal(more.body.next_cursor, null);
  });
});
