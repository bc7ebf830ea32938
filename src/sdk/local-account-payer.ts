/**
 * `localAccountPayer`: self-custody for `createX402Buyer({ account })`. A viem account the caller holds (a
 * `privateKeyToAccount`, an HD account, a custom account over a keystore or a hardware signer) signs the
 * chosen entry with the official x402 EVM client schemes (`@x402/evm`: `exact` is EIP-3009
 * `TransferWithAuthorization`, `upto` the Permit2 witness transfer), exactly as `@x402/fetch` would with the
 * same account. With an `rpcUrl` it reads the account's balance of the price's token (ERC-20 `balanceOf`), so a
 * payment the seller did not take because the account is short becomes `InsufficientFundsError` naming the
 * account's own address.
 *
 * Defends against: the account signing for another network than the one it was given (`network`: other
 * entries are not candidates); an account object without a typed-data signer (refused when the buyer is made).
 * Does not defend against: a spending policy — a local account has none but the buyer's `maxPriceUsd`, which
 * the buyer checks before this is called; the seller's facilitator refusing an `upto` payment whose Permit2
 * allowance the account never approved (an on-chain transaction of its own).
 */
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { createPublicClient, erc20Abi, getAddress, http } from 'viem';
import { formatUsd } from '../../policy/money.js';
import type { PaymentRequirements } from '../x402/wire-schemas.js';
import type { BuyerPayer } from './buyer-payer.js';
import { UnsupportedSignatureError } from './sdk-errors.js';
import type { SignedTerms } from './signed-terms.js';
import type { Permit2Authorization } from './treasury-client-schemas.js';

/** What the buyer needs of a viem account: its address and EIP-712 typed-data signing. */
export interface LocalBuyerAccount {
  readonly address: `0x${string}`;
  signTypedData(typedData: {
    domain: Record<string, unknown>;
    types: Record<string, unknown>;
    primaryType: string;
    message: Record<string, unknown>;
  }): Promise<`0x${string}`>;
}

export interface LocalAccountPayerOptions {
  /** The CAIP-2 network the account pays on; any network of the buyer's patterns when omitted. */
  network?: string | undefined;
  /** JSON-RPC endpoint of that network, to read the account's token balance after a refused payment. */
  rpcUrl?: string | undefined;
  /** Timeout of that read (ms, default 5,000). */
  rpcTimeoutMs?: number | undefined;
}

const str = (v: unknown): string => String(v);
const EVM_NETWORKS: readonly string[] = Object.freeze(['eip155:*']);

export function localAccountPayer(account: LocalBuyerAccount, options: LocalAccountPayerOptions = {}): BuyerPayer {
  // The official client schemes, given only what they need of the account (no RPC: the base flows sign only).
  const signer = { address: getAddress(account.address), signTypedData: account.signTypedData.bind(account) };
  const exact = new ExactEvmScheme(signer);
  const upto = new UptoEvmScheme(signer);
  const publicClient = options.rpcUrl
    ? createPublicClient({ transport: http(options.rpcUrl, { timeout: options.rpcTimeoutMs ?? 5_000, retryCount: 1 }) })
    : undefined;

  return {
    networks: EVM_NETWORKS,
    network: async () => options.network,
    async sign(requirements: PaymentRequirements) {
      const scheme = requirements.scheme === 'upto' ? upto : requirements.scheme === 'exact' ? exact : undefined;
      if (!scheme) throw new UnsupportedSignatureError(`scheme ${requirements.scheme}`);
      const { payload } = await scheme.createPaymentPayload(
        2,
        requirements as Parameters<ExactEvmScheme['createPaymentPayload']>[1],
      );
      const common = { signature: str(payload.signature), network: requirements.network, asset: requirements.asset };
      let terms: SignedTerms;
      if (requirements.scheme === 'upto') {
        const p = payload.permit2Authorization as Record<string, unknown> & {
          permitted: Record<string, unknown>;
          witness: Record<string, unknown>;
        };
        const permit2: Permit2Authorization = {
          from: str(p.from),
          permitted: { token: str(p.permitted.token), amount: str(p.permitted.amount) },
          spender: str(p.spender),
          nonce: str(p.nonce),
          deadline: str(p.deadline),
          witness: {
            to: str(p.witness.to),
            facilitator: str(p.witness.facilitator),
            validAfter: str(p.witness.validAfter),
          },
        } as Permit2Authorization;
        terms = { ...common, scheme: 'upto', permit2_authorization: permit2 };
      } else {
        const a = payload.authorization as Record<string, unknown>;
        terms = {
          ...common,
          scheme: 'exact',
          authorization: {
            from: str(a.from),
            to: str(a.to),
            value: str(a.value),
            validAfter: str(a.validAfter),
            validBefore: str(a.validBefore),
            nonce: str(a.nonce),
          },
        };
      }
      return { terms };
    },
    ...(publicClient
      ? {
          async balance(requirements: PaymentRequirements) {
            const raw = await publicClient.readContract({
              address: getAddress(requirements.asset),
              abi: erc20Abi,
              functionName: 'balanceOf',
              args: [signer.address],
            });
            return {
              address: signer.address,
              network: requirements.network,
              asset: getAddress(requirements.asset),
              balance_raw: raw.toString(),
              balance_usd: formatUsd(raw),
              stale: false,
            };
          },
        }
      : {}),
  };
}
