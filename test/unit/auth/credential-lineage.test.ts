/**
 * The lineage rule as a pure function (src/api/auth/credential-lineage.ts): a root bounds nothing; a parent
 * bounds its child's scope, expiry, daily cap and depth, cutting an expiry and refusing the rest.
 */
import assert from 'node:assert/strict';
import {
  MAX_LINEAGE_DEPTH,
  boundChild,
  type ChildRequest,
  type ParentCredential,
} from '../../../src/api/auth/credential-lineage.js';

const now = new Date('2026-11-28T12:00:00Z');
const at = (seconds: number) => new Date(now.getTime() + seconds * 1000);
const parent = (over: Partial<ParentCredential> = {}): ParentCredential => ({
  id: 'pat_parent',
  scopeType: 'treasury',
  scopeId: 'acct_1',
  gate: false,
  expiresAt: null,
  dailyCapMicro: null,
  depth: 1,
  ...over,
});
const child = (over: Partial<ChildRequest> = {}): ChildRequest => ({
  scopeType: 'treasury',
  scopeId: 'acct_1',
  gate: false,
  expiresAt: null,
  dailyCapMicro: undefined,
  ...over,
});
const refusal = (p: ParentCredential | null, c: ChildRequest) => {
  const d = boundChild(p, c, now);
  return d.ok ? undefined : d.refusal;
};

describe('credential lineage (pure)', () => {
  it('a root gives what is asked, with no parent', () => {
    const d = boundChild(null, child({ scopeType: 'agent', scopeId: 'agt_1', dailyCapMicro: 5n }), now);
    assert.deepEqual(d, {
      ok: true,
      child: { scopeType: 'agent', scopeId: 'agt_1', gate: false, parentId: null, expiresAt: null, dailyCapMicro: 5n },
    });
  });

  it('the scope is the parent’s: another id, another type or the gate it lacks is refused', () => {
    assert.equal(refusal(parent(), child({ scopeId: 'acct_2' })), 'scope');
    assert.equal(refusal(parent(), child({ scopeType: 'agent' })), 'scope');
    assert.equal(refusal(parent(), child({ gate: true })), 'scope');
    assert.equal(refusal(parent({ gate: true }), child({ gate: true })), undefined);
  });

  it('an account-scoped parent (a sign-in session) holds every scope of its own account and of no other', () => {
    const session = parent({ id: 'ses_1', scopeType: 'account', scopeId: 'acc_1', expiresAt: at(3600) });
    for (const scopeType of ['treasury', 'agent', 'service', 'gate'] as const) {
      const d = boundChild(
        session,
        child({ scopeType, scopeId: 'x_1', gate: scopeType === 'gate', accountId: 'acc_1' }),
        now,
      );
      assert.ok(d.ok, scopeType);
      assert.equal(d.child.parentId, 'ses_1');
      assert.deepEqual(d.child.expiresAt, at(3600));
    }
    assert.equal(refusal(session, child({ accountId: 'acc_2' })), 'scope');
    assert.equal(refusal(session, child()), 'scope', 'a child that names no account');
    assert.equal(refusal(session, child({ scopeType: 'account', scopeId: 'acc_1', accountId: 'acc_1' })), 'scope');
  });

  it('an expiring parent cuts a longer or open-ended expiry to its own; an expired one makes nothing', () => {
    for (const asked of [null, at(7200)]) {
      const d = boundChild(parent({ expiresAt: at(600) }), child({ expiresAt: asked }), now);
      assert.ok(d.ok);
      assert.deepEqual(d.child.expiresAt, at(600));
    }
    const shorter = boundChild(parent({ expiresAt: at(600) }), child({ expiresAt: at(60) }), now);
    assert.ok(shorter.ok && shorter.child.expiresAt?.getTime() === at(60).getTime());
    assert.equal(refusal(parent({ expiresAt: now }), child()), 'expiry');
  });

  it('a capped parent gives at most its cap (inherited when none is asked); an agent parent exactly its own', () => {
    const capped = parent({ dailyCapMicro: 10n });
    assert.equal(refusal(capped, child({ dailyCapMicro: 11n })), 'daily_cap');
    assert.equal(refusal(capped, child({ dailyCapMicro: null })), 'daily_cap');
    assert.equal(refusal(capped, child({ dailyCapMicro: 9n })), undefined);
    const inherited = boundChild(capped, child(), now);
    assert.ok(inherited.ok && inherited.child.dailyCapMicro === 10n);
    const agent = parent({ scopeType: 'agent', scopeId: 'agt_1', dailyCapMicro: null });
    const agentChild = child({ scopeType: 'agent', scopeId: 'agt_1' });
    assert.equal(
      refusal(agent, { ...agentChild, dailyCapMicro: 1n }),
      'daily_cap',
      'a second total beside the parent’s',
    );
    assert.equal(refusal(agent, agentChild), undefined);
  });

  it('a chain ends at MAX_LINEAGE_DEPTH credentials', () => {
    assert.equal(refusal(parent({ depth: MAX_LINEAGE_DEPTH - 1 }), child()), undefined);
    assert.equal(refusal(parent({ depth: MAX_LINEAGE_DEPTH }), child()), 'depth');
  });
});
