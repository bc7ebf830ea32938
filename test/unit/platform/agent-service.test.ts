/**
 * The rules AgentService owns, through the in-memory platform stores (test/support/fake-platform-stores.ts)
 * and a recording wallets port: another account's agent is `agent_not_found`, an agent bearer may add a
 * wallet to its own agent only and never set its policy (its PAT's daily cap goes to the wallets wing, which
 * bounds the default policy with it), and a spawned agent gets a Treasury account of its own.
 */
import assert from 'node:assert/strict';
import { AccountService } from '../../../src/api/platform/account-service.js';
import { AgentService } from '../../../src/api/platform/agent-service.js';
import type { AgentWallets } from '../../../src/api/platform/agent-wallets.js';
import { FakeAccountStore, FakeAgentStore } from '../../support/fake-platform-stores.js';

const NOW = new Date('2026-01-01T00:00:00Z');
const ACCOUNT = 'acc_000000000000000000000001';
const OTHER = 'acc_000000000000000000000002';

function setUp() {
  const agentStore = new FakeAgentStore();
  const accountStore = new FakeAccountStore();
  const counter = { inc: () => undefined };
  const accounts = new AccountService({
    store: accountStore,
    signer: { call: async () => ({ account_key_ref: 'key-ref' }) } as never,
    metrics: { accountsMinted: counter, tokensIssued: counter } as never,
    maxPats: 1_000,
  });
  const created: Array<{ treasury: string; bearer: { patDailyCapMicro: bigint | null } | null }> = [];
  const wallets: AgentWallets = {
    firstActivePages: async (ids) => new Map(ids.map((id) => [id, { wallets: [], next_cursor: null }])),
    createForAgent: async (treasury, _input, _actor, bearer) => {
      created.push({ treasury, bearer });
      return {} as never;
    },
  };
  const agents = new AgentService({ store: agentStore, accounts, wallets, clock: () => NOW, maxAgents: 100 });
  return { agents, agentStore, accountStore, created };
}

const code = (c: string) => (err: unknown) => (err as { code?: string }).code === c;

describe('AgentService (through the in-memory platform stores)', () => {
  it('spawns an agent holding a Treasury account of its own', async () => {
    const { agents, accountStore } = setUp();
    const view = await agents.spawn(ACCOUNT, 'bot', 'ses_test');
    const treasury = accountStore.accounts.get(view.treasury_account_id);
    assert.deepEqual([treasury?.owner_type, treasury?.owner_id], ['agent', view.agent_id]);
    assert.equal(view.label, 'bot');
  });

  it('hides another account’s agent, and an agent from another agent’s bearer', async () => {
    const { agents } = setUp();
    const { agent_id } = await agents.spawn(ACCOUNT, undefined, 'ses_test');
    await assert.rejects(agents.get({ accountId: OTHER }, agent_id), code('agent_not_found'));
    await assert.rejects(agents.get({ agentId: 'agt_000000000000000000000009' }, agent_id), code('agent_not_found'));
    assert.equal((await agents.get({ agentId: agent_id }, agent_id)).agent_id, agent_id);
  });

  it('lets an agent bearer add a wallet without a policy, its PAT’s cap passed on; the owner without one', async () => {
    const { agents, created } = setUp();
    const { agent_id, treasury_account_id } = await agents.spawn(ACCOUNT, undefined, 'ses_test');
    await assert.rejects(
      agents.addWallet({ agentId: agent_id, patDailyCapMicro: 5n }, agent_id, { policy: {} }, 'pat'),
      code('insufficient_scope'),
    );
    await agents.addWallet({ agentId: agent_id, patDailyCapMicro: 5n }, agent_id, {}, 'pat');
    await agents.addWallet({ accountId: ACCOUNT }, agent_id, { policy: {} }, 'acc');
    assert.deepEqual(created, [
      { treasury: treasury_account_id, bearer: { patDailyCapMicro: 5n } },
      { treasury: treasury_account_id, bearer: null },
    ]);
  });
});
