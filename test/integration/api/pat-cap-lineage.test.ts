/**
 * A daily cap change reaches every PAT made within the agent PAT, through HTTP with real PostgreSQL and SoftHSM
 * (src/api/platform/store/pg-pat-caps.ts): those PATs spend from its daily total under its cap, so GET /v1/pats
 * must show them with its cap — lifted, lowered or raised, at any depth — and a mint racing the changes still
 * ends with the parent's cap. A PAT minted `within_session` caps its own spending: its cap changes like a root's,
 * and reaches what was made within it; one within another agent PAT stays 403 `lineage_exceeds_parent`.
 */
import assert from 'node:assert/strict';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

describe('a PAT cap change reaches the PATs made within it (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let owner: Awaited<ReturnType<typeof signInWithNewKey>>;

  before(async () => {
    t = await startTestTreasury();
    owner = await signInWithNewKey(t);
  });
  after(async () => {
    await t?.stop();
  });

  const mint = async (body: Record<string, unknown>) => {
    const res = await t.request('POST', '/v1/pats', {
      token: owner.session,
      body: { scope_type: 'agent', scope_id: owner.agent_id, ...body },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: string; pat: string; daily_cap_usd: string | null };
  };
  const patch = (id: string, cap: string | null) =>
    t.request('PATCH', `/v1/pats/${id}`, { token: owner.session, body: { daily_cap_usd: cap } });
  /** The caps GET /v1/pats shows, by PAT id. */
  const listedCaps = async (ids: string[]): Promise<Array<string | null>> => {
    const res = await t.request('GET', '/v1/pats?limit=500', { token: owner.session });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const byId = new Map((res.body.pats as Array<{ id: string; daily_cap_usd: string | null }>).map((p) => [p.id, p]));
    return ids.map((id) => byId.get(id)!.daily_cap_usd);
  };

  it('lifting, lowering and raising an agent PAT’s cap shows on every PAT within it, at any depth', async () => {
    const a = await mint({ daily_cap_usd: '5' });
    const b = await mint({ parent_pat_id: a.id });
    const c = await mint({ parent_pat_id: b.id, single_use: true });
    const other = await mint({ daily_cap_usd: '7' });
    assert.deepEqual(await listedCaps([a.id, b.id, c.id]), ['5', '5', '5']);
    for (const cap of [null, '2', '9']) {
      const res = await patch(a.id, cap);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.daily_cap_usd, cap);
      assert.deepEqual(await listedCaps([a.id, b.id, c.id]), [cap, cap, cap], `after PATCH ${cap}`);
    }
    assert.deepEqual(await listedCaps([other.id]), ['7'], 'another agent PAT keeps its own');
    const child = await patch(b.id, '1');
    assert.deepEqual([child.status, child.body.error_code], [403, 'lineage_exceeds_parent']);
  });

  it('what is listed is what is spent against: a child shown at $2 is refused a $3 payment', async () => {
    const a = await mint({ daily_cap_usd: '50' });
    const b = await mint({ parent_pat_id: a.id });
    assert.equal((await patch(a.id, '2')).status, 200);
    assert.deepEqual(await listedCaps([b.id]), ['2']);
    const wallet = await t.request('POST', `/v1/agents/${owner.agent_id}/wallets`, {
      token: owner.session,
      body: { label: 'cap lineage' },
    });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    const paid = await t.request('POST', `/v1/wallets/${wallet.body.id}/pay`, {
      token: b.pat,
      body: { payment_requirements: paymentRequirements({ amount: '3000000' }) },
    });
    assert.deepEqual([paid.status, paid.body.error_code], [429, 'MGMT_6014'], JSON.stringify(paid.body));
  });

  it('mints racing cap changes all end with the parent’s cap', async () => {
    const a = await mint({ daily_cap_usd: '5' });
    const caps = ['1', '2', '3', null, '4'];
    const [children] = await Promise.all([
      Promise.all(Array.from({ length: 8 }, () => mint({ parent_pat_id: a.id }))),
      (async () => {
        for (const cap of caps) assert.equal((await patch(a.id, cap)).status, 200);
      })(),
    ]);
    const last = caps.at(-1)!;
    assert.deepEqual(await listedCaps([a.id, ...children.map((c) => c.id)]), Array(9).fill(last));
  });

  it('a PAT minted within_session caps its own spending: its cap changes, and reaches its children', async () => {
    const own = await mint({ daily_cap_usd: '5', within_session: true });
    const child = await mint({ parent_pat_id: own.id });
    const res = await patch(own.id, '3');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(await listedCaps([own.id, child.id]), ['3', '3']);
  });
});
