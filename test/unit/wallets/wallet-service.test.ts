/**
 * The wallet service's own rules, over the in-memory store (test/support/fake-wallet-store.ts) and a stand-in
 * signer: a wallet past the account's bound is refused before the signer makes a key; another account's
 * wallet is not found and a revoked one is gone, and neither refusal writes anything; a key whose destruction
 * failed is destroyed by a later retry. The PostgreSQL store is exercised by
 * test/integration/api/wallet-lifecycle.test.ts and tenant-bounds.test.ts.
 */
import assert from 'node:assert/strict';
import pino from 'pino';
import { ChainRegistry } from '../../../src/shared/chain-registry.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import { WalletService } from '../../../src/api/wallets/wallet-service.js';
import { FakeWalletStore } from '../../support/fake-wallet-store.js';

const ACCOUNT = 'acct_a';
const OTHER = 'acct_b';

function setup(maxPerAccount = 5) {
  const store = new FakeWalletStore();
  store.accountKeys.set(ACCOUNT, 'akey_a');
  const calls: string[] = [];
  let keys = 0;
  let destroyFails = false;
  const signer = {
    call: async (method: string) => {
      calls.push(method);
      if (method === 'destroy_wallet_key') {
        if (destroyFails) throw new AppError('signer_unavailable');
        return {};
      }
      keys++;
      return {
        address: `0x${keys.toString(16).padStart(40, '0')}`,
        public_key: `0x04${keys}`,
        wallet_key_ref: `wkey_${keys}`,
      };
    },
  };
  const chains = ChainRegistry.fromConfig(undefined);
  const wallets = new WalletService({
    store,
    signer: signer as never,
    accounts: { get: async (id: string) => ({ account_key_ref: `akey_${id}` }) as never },
    chains,
    metrics: createTreasuryMetrics(),
    log: pino({ level: 'silent' }),
    defaultChain: chains.chains[0]!.name,
    balances: { usdcBalance: async () => assert.fail('abandon_balance reads no balance') },
    bounds: { maxPerAgent: 2, maxPerAccount, agentDailyCapUsd: '10.00', agentPerTxCapUsd: '1.00' },
  });
  return { store, wallets, calls, failDestroy: (fails: boolean) => (destroyFails = fails) };
}

const code = (expected: string) => (err: unknown) => err instanceof AppError && err.code === expected;

describe('wallet service (over the in-memory store)', () => {
  it("refuses a wallet past the account's bound before the signer makes a key", async () => {
    const { wallets, calls, store } = setup(1);
    await wallets.create(ACCOUNT, {}, 'actor');
    await assert.rejects(wallets.create(ACCOUNT, {}, 'actor'), code('wallet_limit_reached'));
    assert.deepEqual(calls, ['create_wallet_key'], 'one key made, for the first wallet only');
    assert.equal(store.wallets.size, 1);
  });

  it("answers another account's wallet as missing and a revoked one as gone, writing nothing", async () => {
    const { wallets, store } = setup();
    const wallet = await wallets.create(ACCOUNT, {}, 'actor');
    await assert.rejects(
      wallets.setPolicy(OTHER, wallet.id, { per_tx_cap_usd: '1.00' }, 'x'),
      code('wallet_not_found'),
    );
    await assert.rejects(wallets.revoke(OTHER, wallet.id, 'x', true), code('wallet_not_found'));
    await wallets.revoke(ACCOUNT, wallet.id, 'actor', true);
    await assert.rejects(wallets.getActive(ACCOUNT, wallet.id), code('wallet_revoked'));
    await assert.rejects(wallets.rotate(ACCOUNT, wallet.id, 'actor', true), code('wallet_revoked'));
    assert.deepEqual(
      store.audit.map((a) => a.eventType),
      ['wallet.created', 'wallet.revoked'],
    );
    assert.deepEqual(store.wallets.get(wallet.id)!.policy, {});
  });

  it('destroys later a retired key whose destruction failed', async () => {
    const { wallets, store, failDestroy } = setup();
    const wallet = await wallets.create(ACCOUNT, {}, 'actor');
    failDestroy(true);
    const rotated = await wallets.rotate(ACCOUNT, wallet.id, 'actor', true);
    assert.equal(rotated.key_version, 2);
    assert.notEqual(rotated.address, wallet.address);
    assert.equal((await store.retiredKeys()).length, 1, 'the old key waits, retired');
    assert.equal(await wallets.destroyRetiredKeys(), 0, 'the signer still fails');
    failDestroy(false);
    assert.equal(await wallets.destroyRetiredKeys(), 1);
    assert.equal(await wallets.destroyRetiredKeys(), 0, 'nothing left to do');
  });
});
