/**
 * Before a wallet's key is destroyed (rotate, revoke): the USDC its address holds, read fresh from the chain.
 * A key once destroyed can never sign again, so whatever the address still holds is lost: a funded address
 * is refused with 409 `wallet_has_balance` (its balance, and the transfer that moves it), a balance that
 * cannot be read now — no RPC configured for the wallet's network (409 `balance_unknown`), the RPC
 * unreachable (503 `chain_unavailable`; a figure cached from before is not enough, funds may have arrived
 * since) — is refused as well. `abandon_balance: true` is the caller's explicit acknowledgement that the
 * address may hold funds; the audit row of the rotation or revocation records which way it went.
 *
 * Defends: losing a wallet's USDC to a rotation or revocation made without knowing it was funded.
 * Does not defend: a deposit that lands between this read and the key's destruction; assets other than the
 * chain's USDC (native ETH, other tokens) at the address; an RPC endpoint that lies about the balance.
 */
import { AppError } from '../errors/app-error.js';
import type { BalanceReader } from '../chain/balance-reader.js';
import type { ChainRegistry } from '../../shared/chain-registry.js';

/** What the audit row records: the balance read (zero) and when, or that the caller abandoned it unread. */
export type RetirementBalance =
  { balance_checked: { balance_raw: string; asset: string; read_at: string } } | { abandoned_balance: true };

export async function checkRetirementBalance(
  balances: Pick<BalanceReader, 'usdcBalance'>,
  chains: Pick<ChainRegistry, 'resolveAny'>,
  wallet: { id: string; account_id: string; address: string; network: string },
  abandonBalance: boolean,
): Promise<RetirementBalance> {
  if (abandonBalance) return { abandoned_balance: true };
  const unknown = (reason: string, message: string, cause?: unknown) =>
    new AppError('balance_unknown', {
      message,
      fields: { wallet_id: wallet.id, network: wallet.network, reason },
      ...(cause ? { cause } : {}),
    });
  const chain = chains.resolveAny(wallet.network);
  if (!chain)
    throw unknown(
      'network_not_supported',
      `Treasury knows no USDC contract on ${wallet.network}; move the funds yourself, then pass abandon_balance: true.`,
    );
  let reading;
  try {
    reading = await balances.usdcBalance(wallet.account_id, chain, wallet.address);
  } catch (err) {
    if (err instanceof AppError && err.code === 'network_not_supported') {
      throw unknown(
        'no_rpc_configured',
        `No RPC endpoint is configured for ${wallet.network} (TREASURY_RPC_URLS), so the balance cannot be checked; move the funds, then pass abandon_balance: true.`,
        err,
      );
    }
    throw err;
  }
  if (reading.stale) {
    throw new AppError('chain_unavailable', {
      message:
        'The chain RPC is unreachable: the balance must be read now before the key is destroyed; retry shortly, or pass abandon_balance: true.',
      fields: { network: wallet.network },
    });
  }
  if (BigInt(reading.balance_raw) > 0n) {
    throw new AppError('wallet_has_balance', {
      fields: {
        wallet_id: wallet.id,
        address: reading.address,
        network: reading.network,
        asset: reading.asset,
        balance_raw: reading.balance_raw,
        balance_usd: reading.balance_usd,
        transfer: `POST /v1/wallets/${wallet.id}/transfer`,
      },
    });
  }
  return { balance_checked: { balance_raw: reading.balance_raw, asset: reading.asset, read_at: reading.updated_at } };
}
