/**
 * The bound on agents per account in AgentService (src/api/platform/agent-bounds.ts), through the in-memory platform
 * stores: spawns pass up to the bound, the next is 409 `agent_limit_reached` with `limit`, and a refused spawn asks
 * the signer for no key and writes nothing; another account counts its own.
 */
import assert from 'node:assert/strict';
import { AccountService } from '../../../src/api/platform/account-service.js';
import { refuseOverAgentBound } from '../../../src/api/platform/agent-bounds.js';
import { AgentService } from '../../../src/api/platform/agent-service.js';
import type { AgentWallets } from '../../../src/api/platform/agent-wallets.js';
import { FakeAccountStore, FakeAgentStore } from '../../support/fake-platform-stores.js';

const ACCOUNT = 'acc_000000000000000000000001';
const OTHER = 'acc_000000000000000000000002';
const LIMIT = 2;

function setUp() {
  const agentStore = new FakeAgentStore();
  const counter = { inc: () => undefined };
  const keys = { made: 0 };
  const accounts = new AccountService({
    store: new FakeAccountStore(),
    signer: { call: async () => ({ account_key_ref: `key-ref-${++keys.made}` }) } as never,
    metrics: { accountsMinted: counter, tokensIssued: counter } as never,
    maxPats: 1_000,
  });
  const wallets: AgentWallets = {
    firstActivePages: async (ids) => new Map(ids.map((id) => [id, { wallets: [], next_cursor: null }])),
    createForAgent: async () => ({}) as never,
  };
  const clock = () => new Date('2026-01-01T00:00:00Z');
  const agents = new AgentService({ store: agentStore, accounts, wallets, clock, maxAgents: LIMIT });
  return { agents, agentStore, keys };
}

describe('agents per account (AgentService, in-memory stores)', () => {
  it('spawns up to the bound, then 409 agent_limit_reached with the limit; no key is made for the refused one', async () => {
    const { agents, agentStore, keys } = setUp();
    for (let i = 0; i < LIMIT; i++) await agents.spawn(ACCOUNT, `a${i}`, 'ses_test');
    await assert.rejects(agents.spawn(ACCOUNT, 'one too many', 'ses_test'), (err: unknown) => {
      const e = err as { code?: string; fields?: Record<string, unknown> };
      assert.equal(e.code, 'agent_limit_reached');
      assert.deepEqual(e.fields, { limit: LIMIT });
      return true;
    });
    assert.equal(keys.made, LIMIT, 'the refused spawn asked the signer for no key');
    assert.equal(agentStore.agents.filter((a) => a.account_id === ACCOUNT).length, LIMIT);
    await agents.spawn(OTHER, 'theirs', 'ses_test');
    assert.equal(agentStore.agents.length, LIMIT + 1, 'another account counts its own');
  });

  it('refuses at the bound and not below it', () => {
    assert.doesNotThrow(() => refuseOverAgentBound(0, 1));
    assert.doesNotThrow(() => refuseOverAgentBound(99, 100));
    assert.throws(() => refuseOverAgentBound(100, 100), { code: 'agent_limit_reached' });
  });
});
