/**
 * `localSolanaPayer`: self-custody on Solana for `createX402Buyer({ solanaSigner })`. A kit
 * `TransactionPartialSigner` the caller holds (a `KeyPairSigner`, or a signer over a keystore or a hardware
 * key) signs the chosen `exact` entry with the official x402 SVM client scheme (`@x402/svm/exact/client`:
 * compute budget, `TransferChecked` from ATA(signer) to ATA(payTo), memo; the facilitator's fee payer left
 * to sign), as `@x402/fetch` would with the same signer. The scheme reads the mint and the latest
 * blockhash from `rpcUrl` (the official client's public endpoint of the entry's network when omitted); the
 * same endpoint reads the signer's USDC after a refused payment, so a shortfall is `InsufficientFundsError`
 * naming the signer's own address.
 *
 * A Solana transaction names no cluster: it lands on whichever cluster knows its blockhash, the cluster of
 * the endpoint that gave it. So with `rpcUrl` the entry's network is bound to what that endpoint serves: its
 * genesis hash is read once (`getGenesisHash`, bounded by a time-out, kept after the first answer), and only
 * an entry on `solana:<its first 32 characters>` — the CAIP-2 id of that cluster — is signed; the blockhash
 * is always the endpoint's (a seller's `extra.recentBlockhash`, which the official client would use as is,
 * is not passed on). An entry on another network is skipped for the seller's next one, and the last is
 * refused with `SolanaClusterMismatchError` (`solana_cluster_mismatch`); an endpoint that does not answer
 * is `SolanaRpcUnreachableError` (`solana_rpc_unreachable`); nothing is signed either way. Without `rpcUrl`
 * the official client reads the public endpoint of the entry's own network (mainnet, devnet or testnet; any
 * other it refuses), so what it builds is for that network.
 *
 * Defends against: a seller labelling an entry with a network the buyer does not pay on (Solana testnet, or
 * devnet to a buyer on mainnet) and having the transfer built against — and landing on — the buyer's own
 * cluster, in a token the buyer-side asset rule (buyer-assets.ts) would not have let through on that cluster;
 * the signer paying on another network than the one it was given (`network`: entries on other networks are
 * not candidates); a signer object without `signTransactions` (refused when the buyer is made).
 * The transaction it builds is compared with the entry before it is sent, like Treasury's
 * (x402-signed-payment.ts).
 * Does not defend against: a spending policy — a local signer has none but the buyer's `maxPriceUsd`; an
 * RPC endpoint that lies about its genesis hash, the mint or the blockhash (the facilitator and the chain
 * refuse what does not hold).
 */
import { address, createSolanaRpc, type TransactionPartialSigner } from '@solana/kit';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { formatUsd } from '../../policy/money.js';
import { redactUrl } from '../shared/redact-url.js';
import type { PaymentRequirements } from '../x402/wire-schemas.js';
import type { BuyerPayer, PayerBalance } from './buyer-payer.js';
import { SolanaClusterMismatchError, SolanaRpcUnreachableError } from './purchase-errors.js';
import { associatedTokenAccount } from './svm-exact-transfer.js';
import { UnsupportedSignatureError } from './sdk-errors.js';

export interface LocalSolanaPayerOptions {
  /** The Solana CAIP-2 network the signer pays on; any `solana:` network of the buyer's patterns when omitted. */
  network?: string | undefined;
  /**
   * JSON-RPC endpoint of that network (its cluster, the mint, the blockhash, and the balance read after a
   * refused payment); only entries on the cluster it serves are signed.
   */
  rpcUrl?: string | undefined;
  /** Time-out of the endpoint's genesis-hash read (ms, default 5,000). */
  rpcTimeoutMs?: number | undefined;
}

const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const SOLANA_NETWORKS: readonly string[] = Object.freeze(['solana:*']);
const GENESIS_HASH = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

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

/** The CAIP-2 id of the cluster `rpcUrl` serves (`solana:` + its genesis hash's first 32 characters). */
async function readCluster(rpcUrl: string, timeoutMs: number): Promise<string> {
  let hash: string;
  try {
    hash = await createSolanaRpc(rpcUrl)
      .getGenesisHash()
      .send({ abortSignal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new SolanaRpcUnreachableError(redactUrl(rpcUrl), err);
  }
  if (typeof hash !== 'string' || !GENESIS_HASH.test(hash))
    throw new SolanaRpcUnreachableError(redactUrl(rpcUrl), new Error('the answer is not a genesis hash'));
  return `solana:${hash.slice(0, 32)}`;
}

/** Reads the endpoint's cluster on first use and keeps it; a failed read is not kept (the next payment asks again). */
function clusterOf(rpcUrl: string, timeoutMs: number): () => Promise<string> {
  let cluster: Promise<string> | undefined;
  return () => {
    cluster ??= readCluster(rpcUrl, timeoutMs).catch((err: unknown) => {
      cluster = undefined;
      throw err;
    });
    return cluster;
  };
}

/** The entry as the official scheme is given it: without a blockhash of the seller's, so the endpoint's is used. */
function withoutSellerBlockhash(requirements: PaymentRequirements): PaymentRequirements {
  if (requirements.extra === undefined || !('recentBlockhash' in requirements.extra)) return requirements;
  const { recentBlockhash: _blockhash, lastValidBlockHeight: _height, ...extra } = requirements.extra;
  return { ...requirements, extra };
}

export function localSolanaPayer(signer: TransactionPartialSigner, options: LocalSolanaPayerOptions = {}): BuyerPayer {
  const scheme = new ExactSvmScheme(signer, options.rpcUrl ? { rpcUrl: options.rpcUrl } : undefined);
  const { rpcUrl } = options;
  const cluster = rpcUrl ? clusterOf(rpcUrl, options.rpcTimeoutMs ?? 5_000) : undefined;
  return {
    networks: SOLANA_NETWORKS,
    network: async () => options.network,
    async sign(requirements: PaymentRequirements, last: boolean) {
      if (requirements.scheme !== 'exact' || !requirements.network.startsWith('solana:'))
        throw new UnsupportedSignatureError(`scheme ${requirements.scheme} on ${requirements.network}`);
      if (cluster) {
        const served = await cluster();
        if (served !== requirements.network) {
          if (!last) return undefined; // the seller's next entry may be on this cluster
          throw new SolanaClusterMismatchError(requirements.network, served);
        }
      }
      const { payload } = await scheme.createPaymentPayload(
        2,
        withoutSellerBlockhash(requirements) as Parameters<ExactSvmScheme['createPaymentPayload']>[1],
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
