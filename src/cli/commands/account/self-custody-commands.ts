/**
 * The self-custody side of the account commands (docs/cli.md, "Self-custody payments"):
 * - `xx wallet balance [name]`: the USDC of keystore `name`'s Base address (default `default`), read on
 *   chain now (local-chain.ts: the sandbox chain, or Base Sepolia / Base). A managed wallet id (`wal_…`) in
 *   its place reads that Treasury wallet's balance through the API with the active agent's PAT instead.
 * - `xx fund --testnet --self-custody [--keystore <name>]`: the sandbox faucet sends test USDC to the
 *   keystore's Base address; outside the sandbox the faucet URL with that address is printed.
 * Neither needs the passphrase: the address is the keystore header's, and nothing is signed.
 *
 * Does not defend against: a keystore header edited to name another address — these commands show or
 * fund what the header says (a payment checks the derived key's address first, keystore-account.ts).
 */
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import { TreasuryApiError, TreasuryClient, TreasurySdkError } from '../../../sdk/index.js';
import { keystoreBaseAddress } from './keystore-account.js';
import { localChain, readUsdc } from './local-chain.js';
import { requestSandboxFaucet } from './local-sandbox.js';
import { networkName } from './wallet-chains.js';

const WALLET_ID = /^wal_[0-9a-f]{24}$/;

export async function walletBalance(ctx: CliContext, name: string | undefined): Promise<void> {
  if (name !== undefined && WALLET_ID.test(name)) {
    const { agent } = ctx.agent();
    const client = new TreasuryClient({ apiUrl: process.env.XX_API_URL || agent.server, token: agent.pat });
    const b = await ctx
      .spin('Reading the balance', () => client.getBalance(name))
      .catch((err: unknown) => {
        if (err instanceof TreasuryApiError)
          throw new CliError({
            code: err.code,
            userMessage: err.userMessage,
            status: err.status,
            recovery: err.recovery as Record<string, unknown> | undefined,
          });
        if (err instanceof TreasurySdkError) throw new CliError({ code: err.code, userMessage: err.message });
        throw err;
      });
    ctx.out(
      {
        custody: 'managed',
        wallet_id: b.wallet_id,
        address: b.address,
        network: b.network,
        asset: b.asset,
        balance_raw: b.balance_raw,
        balance_usd: b.balance_usd,
        stale: b.stale,
      },
      `${b.wallet_id} ${b.address}: ${b.balance_usd} USDC on ${networkName(b.network)}${b.stale ? ' (stale)' : ''}`,
    );
    return;
  }
  const keystore = name ?? 'default';
  const { address } = keystoreBaseAddress(ctx, keystore);
  const chain = localChain(ctx);
  const balance = await ctx.spin('Reading the balance on chain', () => readUsdc(chain, address));
  ctx.out(
    {
      custody: 'self',
      keystore,
      address,
      network: chain.network,
      asset: chain.usdc,
      ...balance,
      stale: false,
    },
    `${keystore} ${address}: ${balance.balance_usd} USDC on ${chain.network}${chain.sandbox ? ' (local sandbox)' : ''}`,
  );
}

export async function fundSelfCustody(
  ctx: CliContext,
  opts: { keystore?: string | undefined; amount: string; print?: boolean | undefined; permit2?: boolean | undefined },
): Promise<void> {
  const keystore = opts.keystore ?? 'default';
  const { address } = keystoreBaseAddress(ctx, keystore);
  if (opts.permit2)
    throw new CliError({
      code: 'permit2_approval_unavailable',
      userMessage:
        'A self-custody address approves Permit2 with a transaction of its own; the faucet cannot send it for the address.',
    });
  const chain = localChain(ctx);
  if (!chain.faucetUrl || opts.print) {
    const url = `https://faucet.circle.com/?network=base-sepolia&address=${address}`;
    ctx.out(
      { funded: false, keystore, addresses: [address], urls: { base_sepolia_usdc: url } },
      `Fund this address with testnet USDC:\n  ${address}\n${url}`,
    );
    return;
  }
  const res = await requestSandboxFaucet(ctx, chain.faucetUrl, { address, amount_usd: opts.amount });
  ctx.out(
    {
      funded: true,
      custody: 'self',
      keystore,
      address,
      network: chain.network,
      amount_usd: opts.amount,
      tx_hash: res.tx_hash ?? null,
      balance_raw: res.balance_raw ?? null,
    },
    `Funded ${address} (keystore "${keystore}") with ${opts.amount} test USDC (tx ${String(res.tx_hash)}).`,
  );
}
