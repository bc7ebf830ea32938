/**
 * The session rules IdentityService owns, through the in-memory identity store
 * (test/support/fake-identity-store.ts): only an agent PAT is exchanged for a session, the session is bound
 * to that agent and PAT and ends no later than the PAT, at most MAX_LIVE_EXCHANGED_SESSIONS stay live per
 * PAT (a new exchange ends the oldest), logout ends the caller's session and what was made within it, and dead
 * nonces are purged. Sign-in itself (signatures) is tested over HTTP (test/integration/api/identity-and-pats.test.ts).
 */
import assert from 'node:assert/strict';
import type { Principal } from '../../../src/api/auth/principal.js';
import { IdentityService, MAX_LIVE_EXCHANGED_SESSIONS } from '../../../src/api/identity/identity-service.js';
import { FakeIdentityStore } from '../../support/fake-identity-store.js';

const ACCOUNT = 'acc_000000000000000000000001';
const AGENT = 'agt_000000000000000000000001';
const PAT = 'pat_000000000000000000000001';

function setUp() {
  let now = new Date('2026-01-01T00:00:00Z');
  const store = new FakeIdentityStore();
  store.agents.set(AGENT, { id: AGENT, account_id: ACCOUNT });
  store.credentials.set(PAT, {
    id: PAT,
    kind: 'pat',
    scopeType: 'agent',
    scopeId: AGENT,
    accountId: ACCOUNT,
    parentId: null,
    createdAt: now,
    expiresAt: new Date(now.getTime() + 600_000),
    revokedAt: null,
  });
  const identity = new IdentityService({
    store,
    agents: {
      spawnIn: async () => AGENT,
      firstOf: async () => AGENT,
    },
    metrics: { tokensIssued: { inc: () => undefined } } as never,
    options: { publicUrl: 'http://127.0.0.1', sessionTtlSeconds: 3600, clock: () => now, evmChainIds: [8453] },
  });
  const tick = () => (now = new Date(now.getTime() + 1000));
  return { store, identity, tick };
}

const agentPat = (scopeType: 'agent' | 'treasury' = 'agent', tokenId = PAT): Principal => ({
  kind: 'token',
  actor: tokenId,
  tokenId,
  tokenKind: 'pat',
  scopeType,
  scopeId: AGENT,
  gate: false,
  accountId: ACCOUNT,
  dailyCapMicro: null,
  sessionOrigin: null,
  parentTokenId: null,
  spendingPatId: tokenId,
});

const code = (c: string) => (err: unknown) => (err as { code?: string }).code === c;

describe('IdentityService (through the in-memory identity store)', () => {
  it('exchanges an agent PAT only, for a session bound to that agent and PAT and ending no later than it', async () => {
    const { identity, store } = setUp();
    await assert.rejects(identity.exchangePat(agentPat('treasury')), code('insufficient_scope'));
    const grant = await identity.exchangePat(agentPat());
    assert.deepEqual([grant.account_id, grant.agent_id, grant.created], [ACCOUNT, AGENT, false]);
    const [session] = [...store.credentials.values()].filter((c) => c.kind === 'session');
    assert.deepEqual([session?.scopeType, session?.scopeId, session?.parentId], ['agent', AGENT, PAT]);
    assert.equal(session?.expiresAt?.getTime(), store.credentials.get(PAT)!.expiresAt!.getTime());
  });

  it(`keeps at most ${MAX_LIVE_EXCHANGED_SESSIONS} live sessions per PAT: a new exchange ends the oldest`, async () => {
    const { identity, store, tick } = setUp();
    const ended: string[][] = [];
    for (let i = 0; i <= MAX_LIVE_EXCHANGED_SESSIONS; i++) {
      tick();
      ended.push((await identity.exchangePat(agentPat())).ended);
    }
    const sessions = [...store.credentials.values()].filter((c) => c.kind === 'session');
    const oldest = sessions.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())[0]!;
    assert.deepEqual(ended.at(-1), [oldest.id]);
    assert.equal(sessions.filter((s) => s.revokedAt === null).length, MAX_LIVE_EXCHANGED_SESSIONS);
  });

  it('a revoked PAT exchanges for nothing', async () => {
    const { identity, store } = setUp();
    store.credentials.get(PAT)!.revokedAt = new Date('2025-12-31T00:00:00Z');
    await assert.rejects(identity.exchangePat(agentPat()), code('invalid_token'));
  });

  it('logout ends the session and every credential made within it; an unknown session is invalid_token', async () => {
    const { identity, store } = setUp();
    await identity.exchangePat(agentPat());
    const [session] = [...store.credentials.values()].filter((c) => c.kind === 'session');
    store.credentials.set('pat_child', { ...store.credentials.get(PAT)!, id: 'pat_child', parentId: session!.id });
    const out = await identity.logout(session!.id);
    assert.deepEqual(new Set(out.ended), new Set([session!.id, 'pat_child']));
    assert.ok(store.credentials.get('pat_child')!.revokedAt);
    await assert.rejects(identity.logout('ses_unknown'), code('invalid_token'));
  });

  it('issues nonces that expire, and purges used and expired ones', async () => {
    const { identity, store } = setUp();
    const { nonce } = await identity.issueNonce();
    store.nonces.get(nonce)!.usedAt = new Date();
    assert.equal(await identity.purgeDeadNonces(new Date('2026-01-01T00:00:00Z')), 1);
    assert.equal(store.nonces.size, 0);
  });
});
