/**
 * `xx buy <url> --self-custody [--keystore <name>] [--network <chain|CAIP-2>]`: the payer is the keystore's own
 * keys instead of a Treasury-managed wallet (docs/cli.md, "Self-custody payments"): its Base account (the BIP44
 * address `xx init` prints, keystore-account.ts) and its Solana key (SLIP-0010 m/44'/501'/0'/0',
 * ../account/self-custody-solana.ts). The buyer SDK runs the same exchange (`createX402Buyer({ account,
 * solanaSigner })`): the same `--max` check before anything is signed, the same errors and `--json` shape; a
 * shortfall is `insufficient_funds` with the `fund_wallet` recovery naming the local address and, on the test
 * network, `xx fund --testnet --self-custody`.
 *
 * Which key pays: `--network` names one (Base's chain or Solana's); without it, each key the keystore holds
 * pays on its own chain (the local Base chain and the local Solana network), the seller's first entry on either.
 * The passphrase is asked for once, before the request.
 *
 * Defends against: paying on another chain than the one the local address is funded on (the entries of other
 * networks are not candidates, local-chain.ts, self-custody-solana.ts); paying in another token than that
 * chain's USDC (the buyer's `assets`: an entry naming another is not a candidate, `NoCompatibleAcceptError`;
 * the keystore signers refuse it too, `unsupported_signature`); the key outliving its signature.
 * Does not defend against: spending without limits beyond `--max` — Treasury's wallet policy and PAT caps do
 * not apply to a key the buyer holds (no request goes to Treasury).
 */
import { createX402Buyer, type PurchaseStore, type X402Buyer } from '../../../sdk/index.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import { keystoreAccount, readKeystore } from '../account/keystore-account.js';
import { localChain } from '../account/local-chain.js';
import { passphraseFor } from '../account/owner-sign-in.js';
import { keystoreSolanaSigner, localSolanaChain } from '../account/self-custody-solana.js';

export interface SelfCustodyBuyer {
  buyer: X402Buyer;
  /** The local addresses that may pay (Base's, Solana's). */
  address: string;
  /** Adjusts a mapped buy error to the local payer (the recovery's command funds the local address). */
  mapError(err: unknown): unknown;
}

export interface SelfCustodyOptions {
  keystore: string;
  maxPriceUsd: string | undefined;
  /** The CAIP-2 network to pay on (`--network`), when named. */
  network: string | undefined;
  /** Where purchases are kept between runs (./buy-purchases.ts): a retried buy sends its stored payment. */
  purchases?: PurchaseStore;
  /** How long the exchange with the seller may take in all, in ms (`--timeout`; the SDK's `sellerTimeoutMs`). */
  sellerTimeoutMs?: number;
}

/** The keys that pay: the one of the network named, else each the keystore holds. */
function keysFor(ctx: CliContext, keystoreName: string, network: string | undefined) {
  const keystore = readKeystore(ctx, keystoreName);
  const solana = network === undefined || network.startsWith('solana:');
  const base = network === undefined || network.startsWith('eip155:');
  return {
    keystore,
    evm: base && (network !== undefined || keystore.addresses.base !== undefined),
    svm: solana && (network !== undefined || keystore.addresses.solana !== undefined),
  };
}

export async function selfCustodyBuyer(ctx: CliContext, opts: SelfCustodyOptions): Promise<SelfCustodyBuyer> {
  const keys = keysFor(ctx, opts.keystore, opts.network);
  const evmChain = keys.evm ? localChain(ctx) : undefined;
  const svmChain = keys.svm ? localSolanaChain(ctx) : undefined;
  const named = opts.network;
  if (named && ![evmChain?.network, svmChain?.network].includes(named))
    throw new CliError({
      code: 'network_not_local',
      userMessage: `--network ${named} is not the chain this keystore pays on here (${[evmChain?.network, svmChain?.network].filter(Boolean).join(', ')}).`,
      exitCode: 2,
    });
  const passphrase = await passphraseFor(ctx, `Passphrase of the keystore "${opts.keystore}"`);
  const evm = evmChain
    ? await keystoreAccount(ctx, opts.keystore, passphrase, { network: evmChain.network, usdc: evmChain.usdc })
    : undefined;
  const solanaSigner = svmChain ? keystoreSolanaSigner(keys.keystore, passphrase, svmChain.usdc) : undefined;
  const buyer = createX402Buyer({
    ...(evm ? { account: evm.account, rpcUrl: evmChain!.rpcUrl } : {}),
    ...(solanaSigner ? { solanaSigner, solanaRpcUrl: svmChain!.rpcUrl } : {}),
    networks: [evmChain?.network, svmChain?.network].filter((n): n is string => n !== undefined),
    // USDC only: the budget reads the price as micro-USD, and the local address holds USDC.
    assets: Object.fromEntries([evmChain, svmChain].flatMap((c) => (c ? [[c.network, c.usdc] as const] : []))),
    ...(named ? { network: named } : {}),
    ...(opts.maxPriceUsd ? { maxPriceUsd: opts.maxPriceUsd } : {}),
    ...(opts.purchases ? { purchases: opts.purchases } : {}),
    ...(opts.sellerTimeoutMs ? { sellerTimeoutMs: opts.sellerTimeoutMs } : {}),
  });
  const fundCommand = `xx fund --testnet --self-custody${opts.keystore === 'default' ? '' : ` --keystore ${opts.keystore}`}`;
  return {
    buyer,
    address: [evm?.address, solanaSigner?.address].filter(Boolean).join(', '),
    mapError(err) {
      if (!(err instanceof CliError) || err.code !== 'insufficient_funds' || !err.recovery) return err;
      const { cli_command: _managed, ...recovery } = err.recovery;
      return new CliError({
        code: err.code,
        userMessage: err.userMessage,
        recovery: { ...recovery, ...(recovery.chain === 'eip155:84532' ? { cli_command: fundCommand } : {}) },
        details: { ...err.details, keystore: opts.keystore },
      });
    },
  };
}
