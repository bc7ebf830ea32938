/**
 * checkRetirementBalance, over a stand-in balance reader (the real one is exercised against anvil in
 * test/integration/chain/wallet-balance.test.ts): each way a balance can be unknown refuses, a funded address
 * refuses with its balance, an empty one passes with the figure read, and abandon_balance reads nothing.
 */
import assert from 'node:assert/strict';
import { ChainRegistry } from '../../../src/shared/chain-registry.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { checkRetirementBalance } from '../../../src/api/wallets/check-retirement-balance.js';
import type { BalanceReading } from '../../../src/api/chain/balance-reader.js';

const chains = ChainRegistry.fromConfig(undefined);
const wallet = {
  id: `wal_${'1'.repeat(24)}`,
  account_id: `acct_${'2'.repeat(24)}`,
  address: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
  network: 'eip155:84532',
};
const reading = (raw: string, stale = false): BalanceReading => ({
  network: wallet.network,
  asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  address: wallet.address,
  balance_raw: raw,
  balance_usd: raw,
  stale,
  updated_at: '2026-11-25T12:00:00.000Z',
});
const reader = (answer: () => BalanceReading) => {
  let reads = 0;
  return { reads: () => reads, usdcBalance: async () => (reads++, answer()) };
};
const refused = (code: string, reason?: string) => (err: unknown) =>
  err instanceof AppError && err.code === code && (reason === undefined || err.fields.reason === reason);

describe('checkRetirementBalance', () => {
  it('an empty address passes, with the figure and the time it was read', async () => {
    assert.deepEqual(
      await checkRetirementBalance(
        reader(() => reading('0')),
        chains,
        wallet,
        false,
      ),
      {
        balance_checked: {
          balance_raw: '0',
          asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
          read_at: '2026-11-25T12:00:00.000Z',
        },
      },
    );
  });

  it('a funded address is refused with its balance', async () => {
    await assert.rejects(
      checkRetirementBalance(
        reader(() => reading('1')),
        chains,
        wallet,
        false,
      ),
      (err: unknown) => refused('wallet_has_balance')(err) && (err as AppError).fields.balance_raw === '1',
    );
  });

  it('a stale figure (RPC down) is not enough, even a zero one', async () => {
    await assert.rejects(
      checkRetirementBalance(
        reader(() => reading('0', true)),
        chains,
        wallet,
        false,
      ),
      refused('chain_unavailable'),
    );
  });

  it('no RPC for the network, or a network Treasury knows no USDC on: balance_unknown', async () => {
    const noRpc = reader(() => {
      throw new AppError('network_not_supported', { fields: { network: wallet.network } });
    });
    await assert.rejects(
      checkRetirementBalance(noRpc, chains, wallet, false),
      refused('balance_unknown', 'no_rpc_configured'),
    );
    await assert.rejects(
      checkRetirementBalance(
        reader(() => reading('0')),
        chains,
        { ...wallet, network: 'eip155:999999' },
        false,
      ),
      refused('balance_unknown', 'network_not_supported'),
    );
  });

  it('abandon_balance reads nothing and says so', async () => {
    const r = reader(() => reading('5'));
    assert.deepEqual(await checkRetirementBalance(r, chains, wallet, true), { abandoned_balance: true });
    assert.equal(r.reads(), 0);
  });
});
