/**
 * GET /v1/wallets/{id}/balance against a real anvil chain: the figure is read on-chain on every call
 * (it follows a faucet mint at once), goes `stale: true` with the last figure and its time when the RPC
 * stops, recovers when the RPC is back, and answers 503 `chain_unavailable` when nothing was ever read.
 */
import assert from 'node:assert/strict';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { fundFromFaucet, startTestChain } from '../../support/chain-harness.js';
import { startAnvil } from '../../../ops/sandbox/chain/anvil-process.js';
import { deployTestUsdc } from '../../../ops/sandbox/chain/deploy-test-usdc.js';

describe('wallet balance (real anvil)', function () {
  this.timeout(120_000);
  let chain: Awaited<ReturnType<typeof startTestChain>>;
  let t: TestTreasury;
  let token: string;

  before(async () => {
    chain = await startTestChain();
    t = await startTestTreasury({ extraEnv: { TREASURY_RPC_URLS: JSON.stringify({ 'eip155:84532': chain.rpcUrl }), TREASURY_RPC_TIMEOUT_MS: '1000' } });
    token = (await t.request('POST', '/v1/treasury', { token: t.adminToken, body: { owner_type: 'agent', owner_id: 'balance' } })).body.api_key;
  });
  after(async () => {
    await t?.stop();
    await chain?.stop();
  });

  it('reads on-chain every call, serves the last figure as stale while the RPC is down, and recovers', async () => {
    const w = (await t.request('POST', '/v1/wallets', { token, body: {} })).body as { id: string; address: string };
    const zero = await t.request('GET', `/v1/wallets/${w.id}/balance`, { token });
    assert.equal(zero.status, 200, JSON.stringify(zero.body));
    assert.deepEqual({ raw: zero.body.balance_raw, usd: zero.body.balance_usd, stale: zero.body.stale }, { raw: '0', usd: '0', stale: false });
    assert.equal(zero.body.asset, '0x036CbD53842c5426634e7929541eC2318f3dCF7e');

    await fundFromFaucet(chain, w.address as `0x${string}`, '2.5');
    const funded = await t.request('GET', `/v1/wallets/${w.id}/balance`, { token });
    assert.deepEqual({ raw: funded.body.balance_raw, usd: funded.body.balance_usd, stale: funded.body.stale }, { raw: '2500000', usd: '2.5', stale: false });

    // The RPC stops: a figure read before is served stale; a wallet never read answers 503.
    const port = Number(new URL(chain.rpcUrl).port);
    await chain.stop();
    const stale = await t.request('GET', `/v1/wallets/${w.id}/balance`, { token });
    assert.equal(stale.status, 200, JSON.stringify(stale.body));
    assert.equal(stale.body.stale, true);
    assert.equal(stale.body.balance_usd, '2.5');
    assert.equal(stale.body.updated_at, funded.body.updated_at, 'the time of the figure, not of the request');

    const other = (await t.request('POST', '/v1/wallets', { token, body: {} })).body as { id: string };
    const never = await t.request('GET', `/v1/wallets/${other.id}/balance`, { token });
    assert.equal(never.status, 503);
    assert.equal(never.body.error_code, 'chain_unavailable');

    // The RPC comes back (a fresh chain on the same port): the next read is fresh again.
    const anvil = await startAnvil({ port });
    try {
      await deployTestUsdc({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId });
      const back = await t.request('GET', `/v1/wallets/${w.id}/balance`, { token });
      assert.equal(back.status, 200);
      assert.equal(back.body.stale, false);
      assert.equal(back.body.balance_raw, '0', 'read from the (new) chain, not the cache');
      const metrics = (await t.request('GET', '/metrics')).body as string;
      assert.match(metrics, /treasury_balance_reads_total\{network="eip155:84532",outcome="stale"\} 1/);
    } finally {
      await anvil.stop();
    }
  });

  it('refuses hostile wallet ids with 400 and other accounts\' wallets with 404', async () => {
    const bad = await t.request('GET', '/v1/wallets/..%2F..%2Fetc/balance', { token });
    assert.equal(bad.status, 400);
    const otherToken = (await t.request('POST', '/v1/treasury', { token: t.adminToken, body: { owner_type: 'agent', owner_id: 'other' } })).body.api_key;
    const w = (await t.request('POST', '/v1/wallets', { token: otherToken, body: {} })).body as { id: string };
    const res = await t.request('GET', `/v1/wallets/${w.id}/balance`, { token });
    assert.equal(res.status, 404);
  });
});
