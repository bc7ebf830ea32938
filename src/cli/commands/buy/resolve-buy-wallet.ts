/**
 * The wallet `xx buy` pays from. The agent's stored wallets answer first (no request); a wallet the agent
 * holds but has not stored — made on another machine, through the API, or past the first 100 the agent view
 * carries — is asked of the server: by id directly, by address through every page of the wallet list.
 * Only an active wallet of the agent's own account is ever returned (the server scopes its PAT to it).
 */
import { getAddress, isAddress } from 'viem';
import { TreasuryApiError, type TreasuryClient } from '../../../sdk/index.js';
import type { ManagedWallet } from '../../core/cli-state.js';
import { CliError } from '../../core/cli-error.js';
import { badArgument } from '../seller/seller-kit.js';

export interface BuyWallet {
  id: string;
  address: string;
}

const WALLET_ID = /^wal_[0-9a-f]{24}$/;

function noWallet(wanted: string): CliError {
  return new CliError({
    code: 'no_wallet',
    userMessage: `The active agent has no active wallet ${wanted}.`,
  });
}

/**
 * The wallet to pay from. With none at all the error carries the `create_wallet` recovery (the chain managed
 * wallets are made on, where to make one, and the command that does).
 */
export async function resolveBuyWallet(
  client: TreasuryClient,
  stored: readonly ManagedWallet[],
  wanted: string | undefined,
  dashboardUrl: string,
): Promise<BuyWallet> {
  if (wanted === undefined) {
    const first = stored[0] ?? (await client.listWallets()).find((w) => w.status === 'active');
    if (!first) {
      throw new CliError({
        code: 'no_wallet',
        userMessage: 'The active agent has no managed wallet; add one with `xx agent wallets add`.',
        recovery: {
          kind: 'create_wallet',
          chain: 'base',
          dashboard_url: `${dashboardUrl}/wallets/new`,
          cli_command: 'xx agent wallets add',
        },
      });
    }
    return first;
  }
  if (!WALLET_ID.test(wanted) && !isAddress(wanted, { strict: false })) {
    throw badArgument('--wallet', `expected a wallet id (wal_…) or a 0x address, got "${wanted}"`);
  }
  const address = WALLET_ID.test(wanted) ? undefined : getAddress(wanted);
  const local = stored.find((w) => (address ? getAddress(w.address) === address : w.id === wanted));
  if (local) return local;
  if (address) {
    const found = (await client.listWallets()).find((w) => w.status === 'active' && getAddress(w.address) === address);
    if (!found) throw noWallet(wanted);
    return found;
  }
  try {
    const wallet = await client.getWallet(wanted);
    if (wallet.status !== 'active') throw noWallet(wanted);
    return wallet;
  } catch (err) {
    if (err instanceof TreasuryApiError && (err.code === 'wallet_not_found' || err.code === 'wallet_revoked'))
      throw noWallet(wanted);
    throw err;
  }
}
