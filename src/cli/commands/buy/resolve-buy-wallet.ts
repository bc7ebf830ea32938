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
const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

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
  network?: string,
): Promise<BuyWallet> {
  if (wanted === undefined) {
    // On `--network`, the first wallet on it (the stored view may predate the field: the server is asked).
    const onNetwork = (w: { network?: string }) => network === undefined || w.network === network;
    const first =
      stored.find(onNetwork) ?? (await client.listWallets()).find((w) => w.status === 'active' && onNetwork(w));
    if (!first) {
      const chain = network?.startsWith('solana:') ? 'solana' : 'base';
      throw new CliError({
        code: 'no_wallet',
        userMessage: `The active agent has no managed wallet${network ? ` on ${network}` : ''}; add one with \`xx agent wallets add${chain === 'solana' ? ' --chain solana' : ''}\`.`,
        recovery: {
          kind: 'create_wallet',
          chain,
          dashboard_url: `${dashboardUrl}/wallets/new`,
          cli_command: `xx agent wallets add${chain === 'solana' ? ' --chain solana' : ''}`,
        },
      });
    }
    return first;
  }
  const base58 = BASE58_ADDRESS.test(wanted);
  if (!WALLET_ID.test(wanted) && !base58 && !isAddress(wanted, { strict: false })) {
    throw badArgument('--wallet', `expected a wallet id (wal_…), a 0x address or a Solana address, got "${wanted}"`);
  }
  // 0x addresses compare checksummed; base58 is case-sensitive and compares as written.
  const norm = (a: string) => (base58 ? a : isAddress(a, { strict: false }) ? getAddress(a) : a);
  const address = WALLET_ID.test(wanted) ? undefined : norm(wanted);
  const local = stored.find((w) => (address ? norm(w.address) === address : w.id === wanted));
  if (local) return local;
  if (address) {
    const found = (await client.listWallets()).find((w) => w.status === 'active' && norm(w.address) === address);
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
