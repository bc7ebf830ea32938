/**
 * The server's `create_wallet` recovery (docs/api.md#errors): a payment asking for a chain the agent holds no
 * wallet on is refused with `recovery.kind = "create_wallet"` naming that chain — the one the payment asked
 * for, whichever chain the paying wallet is on — and, once the agent holds a wallet there, with no recovery
 * and the wallets it holds there. Through HTTP with an agent PAT, as the buyer SDK and `xx buy` pay.
 */
import assert from 'node:assert/strict';
import { mintAgentKey, useTestTreasury } from '../../support/api-harness.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';

const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

describe('create_wallet recovery from the server (HTTP, SoftHSM, PostgreSQL)', function () {
  this.timeout(120_000);
  const t = useTestTreasury();

  const payOn = (token: string, walletId: string, requirements: Record<string, unknown>) =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, { token, body: { payment_requirements: requirements } });
  const onBase = paymentRequirements({
    network: 'eip155:8453',
    asset: BASE_USDC,
    extra: { name: 'USD Coin', version: '2' },
  });
  const onBaseSepolia = paymentRequirements();

  it('names the requested chain when the agent has no wallet there, and no recovery once it has one', async () => {
    const token = await mintAgentKey(t, 'create-wallet-recovery');
    const sepolia = await t.request('POST', '/v1/wallets', { token, body: { chain: 'base-sepolia' } });
    assert.equal(sepolia.status, 201, JSON.stringify(sepolia.body));
    assert.equal(sepolia.body.network, 'eip155:84532');

    const refused = await payOn(token, sepolia.body.id, onBase);
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.error_code, 'network_not_supported');
    assert.equal(refused.body.network, 'eip155:8453');
    assert.equal(refused.body.wallet_network, 'eip155:84532');
    const { dashboard_url: dashboardUrl, ...recovery } = refused.body.recovery ?? {};
    assert.deepEqual(recovery, {
      kind: 'create_wallet',
      chain: 'base',
      network: 'eip155:8453',
      cli_command: 'xx agent wallets add --chain base',
    });
    assert.match(dashboardUrl, /^https?:\/\//);
    assert.equal((await t.db.knex('authorizations').where({ wallet_id: sepolia.body.id })).length, 0);

    // A Base wallet on Base Sepolia's side: the recovery names Base Sepolia, not a fixed chain.
    const base = await t.request('POST', '/v1/wallets', { token, body: { chain: 'base' } });
    assert.equal(base.status, 201, JSON.stringify(base.body));
    const other = await payOn(token, base.body.id, onBaseSepolia);
    assert.equal(other.status, 400);
    assert.equal(other.body.error_code, 'network_not_supported');
    assert.equal(other.body.recovery, undefined, 'the agent holds a Base Sepolia wallet: nothing to create');
    assert.deepEqual(other.body.wallets_on_network, [sepolia.body.id]);

    // Now that it holds a Base wallet, paying Base from the Base Sepolia wallet names that wallet instead.
    const again = await payOn(token, sepolia.body.id, onBase);
    assert.equal(again.status, 400);
    assert.equal(again.body.recovery, undefined);
    assert.deepEqual(again.body.wallets_on_network, [base.body.id]);
  });

  it('names base-sepolia for an agent whose only wallet is on base', async () => {
    const token = await mintAgentKey(t, 'create-wallet-recovery-2');
    const base = await t.request('POST', '/v1/wallets', { token, body: { chain: 'base' } });
    assert.equal(base.status, 201, JSON.stringify(base.body));
    const refused = await payOn(token, base.body.id, onBaseSepolia);
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.recovery?.kind, 'create_wallet');
    assert.equal(refused.body.recovery.chain, 'base-sepolia');
    assert.equal(refused.body.recovery.network, 'eip155:84532');
    assert.equal(refused.body.recovery.cli_command, 'xx agent wallets add --chain base-sepolia');
  });
});
