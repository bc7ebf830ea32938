/**
 * The `create_wallet` recovery of a payment on a chain the paying agent holds no wallet on
 * (docs/api.md#errors). A pay request whose `payment_requirements.network` is served by this Treasury but is
 * not the wallet's chain is refused `network_not_supported` with `wallet_network` (pay/decide-payment.ts);
 * when the wallet's account — the agent's Treasury account — has no active wallet on the requested chain,
 * that refusal gets `recovery: {kind: "create_wallet", chain, network, dashboard_url, cli_command}` naming
 * the requested chain. When it has one, the refusal names those wallets instead (`wallets_on_network`) and
 * carries no recovery: the fix is to pay from one of them, not to make another.
 *
 * Defends: a recovery that sends the agent to create a wallet on a chain other than the one asked for.
 * Does not: read anything on the pay path of an allowed payment — only a refusal of this kind is looked at.
 */
import type { ChainRegistry } from '../../shared/chain-registry.js';
import { AppError } from '../errors/app-error.js';
import type { WalletService } from '../wallets/wallet-service.js';

/** `err` with the create_wallet recovery (or the account's wallets on that chain) when it is a chain mismatch. */
export async function withCreateWalletRecovery(
  err: unknown,
  accountId: string,
  deps: { wallets: Pick<WalletService, 'activeOn'>; chains: ChainRegistry; dashboardUrl: string },
): Promise<unknown> {
  if (!(err instanceof AppError) || err.code !== 'network_not_supported' || err.recovery) return err;
  const { network, wallet_network: walletNetwork } = err.fields;
  if (typeof network !== 'string' || typeof walletNetwork !== 'string') return err;
  const chain = deps.chains.resolveAny(network);
  if (!chain) return err;
  const onChain = await deps.wallets.activeOn(accountId, chain.network);
  if (onChain.length > 0)
    return new AppError('network_not_supported', {
      message: err.message,
      fields: { ...err.fields, wallets_on_network: onChain },
      cause: err,
    });
  return new AppError('network_not_supported', {
    message: `${err.message} The agent has no wallet on ${chain.name}: create one there to pay.`,
    fields: err.fields,
    recovery: {
      kind: 'create_wallet',
      chain: chain.name,
      network: chain.network,
      dashboard_url: deps.dashboardUrl,
      cli_command: `xx agent wallets add --chain ${chain.name}`,
    },
    cause: err,
  });
}
