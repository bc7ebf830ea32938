/**
 * The rules PatService owns, through the in-memory platform stores (test/support/fake-platform-stores.ts): a
 * daily cap only on a buyer (agent) PAT, a scope only among the account's own agents and sellers, a parent
 * only among the account's own PATs (its scope inherited, its cap and expiry bounding the child), a child
 * PAT's daily cap changed only on its parent, and the account's live PATs bounded (pat_limit_reached).
 */
import assert from 'node:assert/strict';
import { PatService } from '../../../src/api/platform/pat-service.js';
import { FakePatStore } from '../../support/fake-platform-stores.js';

const NOW = new Date('2026-01-01T00:00:00Z');
const ACCOUNT = 'acc_000000000000000000000001';
const OTHER = 'acc_000000000000000000000002';
const AGENT = 'agt_000000000000000000000001';
const OTHER_AGENT = 'agt_000000000000000000000002';

function setUp(maxPats = 1_000) {
  const store = new FakePatStore();
  const issued: string[] = [];
  const metrics = { tokensIssued: { inc: (l: { kind: string }) => void issued.push(l.kind) } };
  store.agents.push(
    { id: AGENT, account_id: ACCOUNT, label: null, treasury_account_id: 'acct_1', created_at: NOW },
    { id: OTHER_AGENT, account_id: OTHER, label: null, treasury_account_id: 'acct_2', created_at: NOW },
  );
  const pats = new PatService({ store, metrics: metrics as never, clock: () => NOW, maxPats });
  return { store, pats, issued };
}

const code = (c: string) => (err: unknown) => (err as { code?: string }).code === c;

describe('PatService (through the in-memory platform stores)', () => {
  it('mints an agent PAT on the account’s oldest agent, with its daily cap, and counts it', async () => {
    const { pats, issued } = setUp();
    const pat = await pats.create(ACCOUNT, { scope_type: 'agent', daily_cap_usd: '5' }, 'acc');
    assert.equal(pat.scope_id, AGENT);
    assert.equal(pat.daily_cap_usd, '5');
    assert.match(pat.pat, /^xx_pat_/);
    assert.deepEqual(issued, ['pat']);
  });

  it('refuses a daily cap on a PAT that is not a buyer (agent) PAT', async () => {
    const { pats, store } = setUp();
    await assert.rejects(
      pats.create(ACCOUNT, { scope_type: 'treasury', daily_cap_usd: '5' }, 'acc'),
      code('invalid_request'),
    );
    assert.equal(store.pats.size, 0);
  });

  it('refuses a scope the account does not hold (another account’s agent)', async () => {
    const { pats } = setUp();
    await assert.rejects(
      pats.create(ACCOUNT, { scope_type: 'agent', scope_id: OTHER_AGENT }, 'acc'),
      code('scope_not_found'),
    );
    await assert.rejects(pats.create(ACCOUNT, { scope_type: 'service' }, 'acc'), code('scope_not_found'));
  });

  it('mints a child within a PAT of the account only, inheriting its scope and bounded by its cap', async () => {
    const { pats } = setUp();
    const parent = await pats.create(ACCOUNT, { scope_type: 'agent', daily_cap_usd: '5' }, 'acc');
    const child = await pats.create(ACCOUNT, { scope_type: 'agent', parent_pat_id: parent.id }, 'acc');
    assert.equal(child.parent_token_id, parent.id);
    assert.equal(child.scope_id, AGENT);
    await assert.rejects(
      pats.create(OTHER, { scope_type: 'agent', parent_pat_id: parent.id }, 'acc'),
      code('pat_not_found'),
    );
    await assert.rejects(
      pats.create(ACCOUNT, { scope_type: 'agent', parent_pat_id: parent.id, daily_cap_usd: '6' }, 'acc'),
      code('lineage_exceeds_parent'),
    );
  });

  it('changes a daily cap on a root buyer PAT only: a child spends under its parent’s cap', async () => {
    const { pats } = setUp();
    const parent = await pats.create(ACCOUNT, { scope_type: 'agent', daily_cap_usd: '5' }, 'acc');
    const child = await pats.create(ACCOUNT, { scope_type: 'agent', parent_pat_id: parent.id }, 'acc');
    await assert.rejects(pats.setDailyCap(ACCOUNT, child.id, '1'), code('lineage_exceeds_parent'));
    await assert.rejects(pats.setDailyCap(OTHER, parent.id, '1'), code('pat_not_found'));
    assert.equal((await pats.setDailyCap(ACCOUNT, parent.id, '2')).daily_cap_usd, '2');
  });

  it('revokes a PAT with the PATs made within it, and lists them revoked', async () => {
    const { pats } = setUp();
    const parent = await pats.create(ACCOUNT, { scope_type: 'agent' }, 'acc');
    await pats.create(ACCOUNT, { scope_type: 'agent', parent_pat_id: parent.id }, 'acc');
    await assert.rejects(pats.revoke(OTHER, parent.id), code('pat_not_found'));
    await pats.revoke(ACCOUNT, parent.id);
    const listed = await pats.list(ACCOUNT, { limit: 10 });
    assert.equal(listed.pats.length, 2);
    assert.ok(listed.pats.every((p) => p.revoked_at !== null));
  });

  it('mints up to the account’s live-PAT bound, then pat_limit_reached; a revoked PAT frees its slot', async () => {
    const { pats, store } = setUp(2);
    const first = await pats.create(ACCOUNT, { scope_type: 'agent' }, 'acc');
    await pats.create(ACCOUNT, { scope_type: 'agent', parent_pat_id: first.id }, 'acc');
    await assert.rejects(pats.create(ACCOUNT, { scope_type: 'treasury' }, 'acc'), code('pat_limit_reached'));
    assert.equal(store.pats.size, 2, 'nothing written past the bound');
    await pats.create(OTHER, { scope_type: 'agent' }, 'acc'); // another account counts its own
    await pats.revoke(ACCOUNT, first.id); // its child ends with it
    await pats.create(ACCOUNT, { scope_type: 'agent' }, 'acc');
  });
});
