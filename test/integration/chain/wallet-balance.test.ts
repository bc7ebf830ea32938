/**
 * GET /v1/wallets/{id}/balance against a real anvil chain: the figure is read on-chain on every call
 * (it follows a faucet mint at once), goes `stale: true` with the last figure and its time when the RPC
 * stops — in another API process on the same PostgreSQL too —, recovers when the RPC is back, and answers
 * 503 `chain_unavailable` when nothing was ever read.
 * Rotating or revoking a wallet (its key destroyed) reads its balance first: a funded address is refused
 * (409 wallet_has_balance) and nothing changes; an empty one goes ahead, the zero read in its audit row;
 * abandon_balance goes ahead and says so; an unreachable RPC is refused (503).
 */
import assert from 'node:assert/strict';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { fundFromFaucet, startTestChain } from '../../support/chain-harness.js';
import { startAnvil } from '../../../ops/sandbox/chain/anvil-process.js';
import { deployTestUsdc } from '../../../ops/sandbox/chain/deploy-test-usdc.js';
import { freePort } from '../../support/test-database.js';

describe('wallet balance (real anvil)', function () {
  this.timeout(120_000);
  let chain: Awaited<ReturnType<typeof startTestChain>>;
  let t: TestTreasury;
  let token: string;

  before(async () => {
    chain = await startTestChain();
    t = await startTestTreasury({
      extraEnv: {
        TREASURY_RPC_URLS: JSON.stringify({ 'eip155:84532': chain.rpcUrl }),
        TREASURY_RPC_TIMEOUT_MS: '1000',
      },
    });
    token = await mintAgentKey(t, 'balance');
  });
  after(async () => {
    await t?.stop();
    await chain?.stop();
  });

  it('rotate and revoke read the balance first: a funded address is refused and nothing changes; an empty one, or abandon_balance, goes ahead and is audited', async () => {
    const funded = (await t.request('POST', '/v1/wallets', { token, body: {} })).body as {
      id: string;
      address: string;
    };
    await fundFromFaucet(chain, funded.address as `0x${string}`, '1.25');
    const audit = async (id: string) =>
      (await t.db.knex('audit_events').where({ chain_key: id }).orderBy('seq')).map((e) => [e.event_type, e.payload]);
    const before = await audit(funded.id);
    for (const op of ['rotate', 'revoke']) {
      const refused = await t.request('POST', `/v1/wallets/${funded.id}/${op}`, { token });
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.deepEqual(
        [
          refused.body.error_code,
          refused.body.balance_usd,
          refused.body.balance_raw,
          refused.body.address,
          refused.body.transfer,
        ],
        ['wallet_has_balance', '1.25', '1250000', funded.address, `POST /v1/wallets/${funded.id}/transfer`],
      );
    }
    const unchanged = (await t.request('GET', `/v1/wallets/${funded.id}`, { token })).body;
    assert.deepEqual([unchanged.status, unchanged.address, unchanged.key_version], ['active', funded.address, 1]);
    assert.deepEqual(await audit(funded.id), before, 'nothing audited, nothing changed');
    assert.equal(
      (await t.db.knex('wallet_keys').where({ wallet_id: funded.id }).whereNotNull('retired_at')).length,
      0,
      'the key is not retired',
    );

    const abandoned = await t.request('POST', `/v1/wallets/${funded.id}/rotate`, {
      token,
      body: { abandon_balance: true },
    });
    assert.equal(abandoned.status, 200, JSON.stringify(abandoned.body));
    assert.notEqual(abandoned.body.address, funded.address);
    const [rotatedEvent] = (await audit(funded.id)).slice(-1);
    assert.deepEqual(
      [rotatedEvent![0], (rotatedEvent![1] as { abandoned_balance?: boolean }).abandoned_balance],
      ['wallet.rotated', true],
    );

    const empty = (await t.request('POST', '/v1/wallets', { token, body: {} })).body as { id: string };
    assert.equal((await t.request('POST', `/v1/wallets/${empty.id}/rotate`, { token })).status, 200);
    assert.equal((await t.request('POST', `/v1/wallets/${empty.id}/revoke`, { token })).status, 200);
    const events = await audit(empty.id);
    for (const [type, payload] of events.slice(-2)) {
      const checked = (payload as { balance_checked?: { balance_raw: string; asset: string } }).balance_checked;
      assert.deepEqual(
        [type === 'wallet.rotated' || type === 'wallet.revoked', checked?.balance_raw, checked?.asset],
        [true, '0', '0x036CbD53842c5426634e7929541eC2318f3dCF7e'],
      );
    }
    const metrics = (await t.request('GET', '/metrics')).body as string;
    assert.match(metrics, /treasury_wallet_operations_total\{operation="rotate",outcome="wallet_has_balance"\} 1/);
    assert.match(metrics, /treasury_wallet_operations_total\{operation="revoke",outcome="wallet_has_balance"\} 1/);
    assert.equal(
      (await t.request('POST', `/v1/wallets/${empty.id}/rotate`, { token, body: { abandon_balance: true } })).status,
      410,
      'a revoked wallet is 410 before anything else',
    );
    const fresh = (await t.request('POST', '/v1/wallets', { token, body: {} })).body as { id: string };
    for (const body of [{ abandon_balance: 'yes' }, { abandon_balance: 1 }, { force: true }]) {
      const bad = await t.request('POST', `/v1/wallets/${fresh.id}/rotate`, { token, body });
      assert.deepEqual([bad.status, bad.body.error_code], [400, 'invalid_request'], JSON.stringify(body));
    }
  });

  it("an RPC that cannot be reached now refuses the key's destruction (503 chain_unavailable), and nothing changes", async () => {
    const dead = await startTestTreasury({
      extraEnv: {
        TREASURY_RPC_URLS: JSON.stringify({ 'eip155:84532': `http://127.0.0.1:${await freePort()}` }),
        TREASURY_RPC_TIMEOUT_MS: '500',
      },
    });
    try {
      const key = await mintAgentKey(dead, 'no-balance');
      const w = (await dead.request('POST', '/v1/wallets', { token: key, body: {} })).body as {
        id: string;
        address: string;
      };
      for (const op of ['rotate', 'revoke']) {
        const refused = await dead.request('POST', `/v1/wallets/${w.id}/${op}`, { token: key });
        assert.deepEqual(
          [refused.status, refused.body.error_code],
          [503, 'chain_unavailable'],
          JSON.stringify(refused.body),
        );
      }
      const still = (await dead.request('GET', `/v1/wallets/${w.id}`, { token: key })).body;
      assert.deepEqual([still.status, still.address, still.key_version], ['active', w.address, 1]);
      assert.equal(
        (await dead.request('POST', `/v1/wallets/${w.id}/revoke`, { token: key, body: { abandon_balance: true } }))
          .status,
        200,
      );
    } finally {
      await dead.stop();
    }
  });

  it('reads on-chain every call, serves the last figure as stale while the RPC is down, and recovers', async () => {
    const w = (await t.request('POST', '/v1/wallets', { token, body: {} })).body as { id: string; address: string };
    const zero = await t.request('GET', `/v1/wallets/${w.id}/balance`, { token });
    assert.equal(zero.status, 200, JSON.stringify(zero.body));
    assert.deepEqual(
      { raw: zero.body.balance_raw, usd: zero.body.balance_usd, stale: zero.body.stale },
      { raw: '0', usd: '0', stale: false },
    );
    assert.equal(zero.body.asset, '0x036CbD53842c5426634e7929541eC2318f3dCF7e');

    await fundFromFaucet(chain, w.address as `0x${string}`, '2.5');
    const funded = await t.request('GET', `/v1/wallets/${w.id}/balance`, { token });
    assert.deepEqual(
      { raw: funded.body.balance_raw, usd: funded.body.balance_usd, stale: funded.body.stale },
      { raw: '2500000', usd: '2.5', stale: false },
    );

    // The RPC stops: a figure read before is served stale; a wallet never read answers 503.
    const port = Number(new URL(chain.rpcUrl).port);
    await chain.stop();
    const stale = await t.request('GET', `/v1/wallets/${w.id}/balance`, { token });
    assert.equal(stale.status, 200, JSON.stringify(stale.body));
    assert.equal(stale.body.stale, true);
    assert.equal(stale.body.balance_usd, '2.5');
    assert.equal(stale.body.updated_at, funded.body.updated_at, 'the time of the figure, not of the request');

    // Another API process on the same PostgreSQL (or this one restarted) serves the same stale figure: it was
    // kept in balance_readings, not only in the memory of the process that read it.
    const restarted = await startTestTreasury({
      database: t.db,
      extraEnv: {
        TREASURY_RPC_URLS: JSON.stringify({ 'eip155:84532': chain.rpcUrl }),
        TREASURY_RPC_TIMEOUT_MS: '1000',
      },
    });
    try {
      const fromStore = await restarted.request('GET', `/v1/wallets/${w.id}/balance`, { token });
      assert.equal(fromStore.status, 200, JSON.stringify(fromStore.body));
      assert.deepEqual(
        [fromStore.body.stale, fromStore.body.balance_usd, fromStore.body.updated_at],
        [true, '2.5', funded.body.updated_at],
      );
    } finally {
      await restarted.stop();
    }

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

  it("refuses hostile wallet ids with 400 and other accounts' wallets with 404", async () => {
    const bad = await t.request('GET', '/v1/wallets/..%2F..%2Fetc/balance', { token });
    assert.equal(bad.status, 400);
    const otherToken = await mintAgentKey(t, 'other');
    const w = (await t.request('POST', '/v1/wallets', { token: otherToken, body: {} })).body as { id: string };
    const res = await t.request('GET', `/v1/wallets/${w.id}/balance`, { token });
    assert.equal(res.status, 404);
  });
});
