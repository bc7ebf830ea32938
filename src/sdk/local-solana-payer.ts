/**
 * `localSolanaPayer`: self-custody on Solana for `createX402Buyer({ solanaSigner })`. A kit
 * `TransactionPartialSigner` the caller holds (a `KeyPairSigner`, or a signer over a keystore or a hardware
 * key) signs the chosen `exact` entry with the official x402 SVM client scheme (`@x402/svm/exact/client`:
 * compute budget, `TransferChecked` from ATA(signer) to ATA(payTo), memo; the facilitator's fee payer left
 * to sign), exactly as `@x402/fetch` would with the same signer. The scheme reads the mint and the latest
 * blockhash from `rpcUrl` (the official client's public endpoint of the network when omitted); the same
 * endpoint reads the signer's USDC after a refused payment, so a shortfall is `InsufficientFundsError`
 * naming the signer's own address.
 *
 * Defends against: the signer paying on another network than the one it was given (`network`: entries on other
 * networks are not candidates); a signer object without `signTransactions` (refused when the buyer is made).
 * The transaction it builds is compared with the entry before it is sent, like Treasury's
 * (x402-signed-payment.ts).
 * Does not defend against: a spending policy — a local signer has none but the buyer's `maxPriceUsd`; an
 * RPC endpoint that lies about the mint or the blockhash (the facilitator and the chain refuse what does not hold).
 */
import { address, createSolanaRpc, type TransactionPartialSigner } from '@solana/kit';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { formatUsd } from '../../policy/money.js';
import type { PaymentRequirements } from '../x402/wire-schemas.js';
import type { BuyerPayer, PayerBalance } from './buyer-payer.js';
import { associatedTokenAccount } from './svm-exact-transfer.js';
import { UnsupportedSignatureError } from './sdk-errors.js';

export interface LocalSolanaPayerOptions {
  /** The Solana CAIP-2 network the signer pays on; any `solana:` network of the buyer's patterns when omitted. */
  network?: string | undefined;
  /** JSON-RPC endpoint of that network (mint, blockhash, and the balance read after a refused payment). */
  rpcUrl?: string | undefined;
}

const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const SOLANA_NETWORKS: readonly string[] = Object.freeze(['solana:*']);

/** The signer's holding of `requirements.asset` (0 when its token account does not exist yet). */
async function readTokenBalance(
  rpcUrl: string,
  owner: string,
  requirements: PaymentRequirements,
): Promise<PayerBalance> {
  const rpc = createSolanaRpc(rpcUrl);
  const ata = await associatedTokenAccount(owner, requirements.asset, TOKEN_PROGRAM);
  const info = await rpc.getAccountInfo(address(ata), { encoding: 'base64' }).send();
  const raw = info.value === null ? 0n : BigInt((await rpc.getTokenAccountBalance(address(ata)).send()).value.amount);
  return {
    address: owner,
    network: requirements.network,
    asset: requirements.asset,
    balance_raw: raw.toString(),
    balance_usd: formatUsd(raw),
    stale: false,
  };
}

export function localSolanaPayer(signer: TransactionPartialSigner, options: LocalSolanaPayerOptions = {}): BuyerPayer {
  const scheme = new ExactSvmScheme(signer, options.rpcUrl ? { rpcUrl: options.rpcUrl } : undefined);
  const { rpcUrl } = options;
  return {
    networks: SOLANA_NETWORKS,
    network: async () => options.network,
    async sign(requirements: PaymentRequirements) {
      if (requirements.scheme !== 'exact' || !requirements.network.startsWith('solana:'))
        throw new UnsupportedSignatureError(`scheme ${requirements.scheme} on ${requirements.network}`);
      const { payload } = await scheme.createPaymentPayload(
        2,
        requirements as Parameters<ExactSvmScheme['createPaymentPayload']>[1],
      );
      const transaction = String((payload as { transaction?: unknown }).transaction);
      return {
        terms: { scheme: 'exact', network: requirements.network, asset: requirements.asset, transaction },
        payer: signer.address,
      };
    },
    ...(rpcUrl ? { balance: (requirements) => readTokenBalance(rpcUrl, signer.address, requirements) } : {}),
  };
}
