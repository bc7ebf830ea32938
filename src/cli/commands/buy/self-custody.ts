/**
 * `xx buy <url> --self-custody [--keystore <name>]`: the payer is the keystore's Base account (the BIP44
 * address `xx init` prints) instead of a Treasury-managed wallet (docs/cli.md, "Self-custody payments"). The
 * buyer SDK runs the same exchange (`createX402Buyer({ account })`): the same `--max` check before anything
 * is signed, the same errors and `--json` shape; a shortfall is `insufficient_funds` with the `fund_wallet`
 * recovery naming the local address and, on the test network, `xx fund --testnet --self-custody`.
 *
 * Defends against: paying on another chain than the one the local address is funded on (the entries of
 * other networks are not candidates, local-chain.ts); the key outliving its signature (keystore-account.ts).
 * Does not defend against: spending without limits beyond `--max` — Treasury's wallet policy and PAT caps do
 * not apply to a key the buyer holds (no request goes to Treasury).
 */
import { createX402Buyer, type X402Buyer } from '../../../sdk/index.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import { keystoreAccount } from '../account/keystore-account.js';
import { localChain } from '../account/local-chain.js';

export interface SelfCustodyBuyer {
  buyer: X402Buyer;
  address: string;
  /** Adjusts a mapped buy error to the local payer (the recovery's command funds the local address). */
  mapError(err: unknown): unknown;
}

export async function selfCustodyBuyer(
  ctx: CliContext,
  keystoreName: string,
  maxPriceUsd: string | undefined,
): Promise<SelfCustodyBuyer> {
  const chain = localChain(ctx);
  const { account, address } = await keystoreAccount(ctx, keystoreName);
  const buyer = createX402Buyer({
    account,
    network: chain.network,
    rpcUrl: chain.rpcUrl,
    ...(maxPriceUsd ? { maxPriceUsd } : {}),
  });
  const fundCommand = `xx fund --testnet --self-custody${keystoreName === 'default' ? '' : ` --keystore ${keystoreName}`}`;
  return {
    buyer,
    address,
    mapError(err) {
      if (!(err instanceof CliError) || err.code !== 'insufficient_funds' || !err.recovery) return err;
      const { cli_command: _managed, ...recovery } = err.recovery;
      return new CliError({
        code: err.code,
        userMessage: err.userMessage,
        recovery: { ...recovery, ...(chain.network === 'eip155:84532' ? { cli_command: fundCommand } : {}) },
        details: { ...err.details, keystore: keystoreName },
      });
    },
  };
}
