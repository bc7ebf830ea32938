/**
 * The one step `createX402Buyer` leaves to the paying wallet: sign a chosen accepts entry (and, after a
 * payment the seller did not take, read the wallet's balance; after an `upto` settlement, report it). Two
 * payers share the buyer's single code path (x402-buyer.ts): `treasuryPayer` asks Treasury's pay endpoint
 * (the wallet's policy is checked and the spend recorded there), `localAccountPayer`
 * (local-account-payer.ts) signs with a viem account the caller holds.
 *
 * An `upto` entry whose 402 advertises `eip2612GasSponsoring` is paid with `gas_sponsoring: "eip2612"`: a
 * wallet without the Permit2 allowance gets an EIP-2612 permit to Permit2 back (x402-buyer.ts attaches it).
 * Defends against: an `upto` entry the Treasury wallet has no Permit2 allowance for stopping the exchange
 * when a later entry is payable (it is skipped; on the last entry `Permit2AllowanceRequiredError`).
 * Does not defend against: anything the buyer checks itself (budget, terms signed as asked, one paid retry).
 */
import type { PaymentRequirements } from '../x402/wire-schemas.js';
import { Permit2AllowanceRequiredError, TreasuryApiError } from './sdk-errors.js';
import type { TreasuryClient } from './treasury-client.js';
import { isSolanaPayReply, type PayReply, type Settlement } from './treasury-client-schemas.js';
import { newIdempotencyKey } from './new-idempotency-key.js';
import { PurchaseTermsChangedError } from './purchase-errors.js';
import type { SignedTerms } from './signed-terms.js';

/** The x402 extension key of gasless Permit2 approval by EIP-2612 permit (as `@x402/extensions` names it). */
export const EIP2612_GAS_SPONSORING_KEY = 'eip2612GasSponsoring';

/** The wallet's holding of the price's asset, as `InsufficientFundsError` reports it. */
export interface PayerBalance {
  address: string;
  network: string;
  asset: string;
  balance_raw: string;
  balance_usd: string;
  stale: boolean;
}

export interface SignOutcome {
  terms: SignedTerms;
  /** Treasury's record of the payment (authorization and decision ids); absent for a local account. */
  payment?: PayReply;
  /** Who pays (the transfer's authority), when the payer knows it: a Solana transaction is checked against it. */
  payer?: string;
}

export interface BuyerPayer {
  /** The network patterns this payer can sign for (`eip155:*`, `solana:*`); the buyer's default. */
  readonly networks: readonly string[];
  /** The network the wallet pays on, when it has one (entries on other networks are not candidates). */
  network(): Promise<string | undefined>;
  /**
   * Signs `requirements`; `undefined` skips the entry for the next one (`last`: no next one). `extensions`:
   * the 402's `extensions` (a payer may answer `eip2612GasSponsoring` with a permit). `paymentId`: the
   * purchase's x402 `payment-identifier` (Treasury signs one payment per identifier; a local key's payment is
   * kept by the purchase store instead, x402-purchase.ts). `challengeOrigin`: the origin that answered the 402
   * (`URL.origin`); Treasury signs a Treasury seller's payee only for that seller's own origins.
   */
  sign(
    requirements: PaymentRequirements,
    last: boolean,
    extensions?: Record<string, unknown>,
    paymentId?: string,
    challengeOrigin?: string,
  ): Promise<SignOutcome | undefined>;
  /** The wallet's balance of the price's asset, when the payer can read it. */
  balance?(requirements: PaymentRequirements): Promise<PayerBalance>;
  /** Reports a settlement (`upto`: Treasury gives back the unsettled part of the signed maximum; EVM `exact` too). */
  recordSettlement?(authorizationId: string, transaction: string): Promise<Settlement>;
}

export function toSignedTerms(payment: PayReply): SignedTerms {
  if (isSolanaPayReply(payment))
    return { scheme: 'exact', network: payment.network, asset: payment.asset, transaction: payment.transaction };
  const common = { signature: payment.signature, network: payment.network, asset: payment.asset };
  return payment.scheme === 'upto'
    ? {
        ...common,
        scheme: 'upto',
        permit2_authorization: payment.permit2_authorization,
        ...(payment.eip2612_permit ? { eip2612_permit: payment.eip2612_permit } : {}),
      }
    : { ...common, scheme: 'exact', authorization: payment.authorization };
}

const MANAGED_WALLET_NETWORKS: readonly string[] = Object.freeze(['eip155:*', 'solana:*']);

/** A Treasury-managed wallet: Treasury signs (policy checked, spend recorded). */
export function treasuryPayer(
  client: Pick<TreasuryClient, 'pay' | 'getWallet'> & Partial<Pick<TreasuryClient, 'recordSettlement' | 'getBalance'>>,
  walletId: string,
  capability: string | undefined,
): BuyerPayer {
  let wallet: Promise<{ network: string; address: string }> | undefined;
  const getBalance = client.getBalance?.bind(client);
  const recordSettlement = client.recordSettlement?.bind(client);
  const readWallet = () => {
    wallet ??= client.getWallet(walletId).then(
      (w) => ({ network: w.network, address: w.address }),
      (err: unknown) => {
        wallet = undefined; // not cached: the next request asks again
        throw err;
      },
    );
    return wallet;
  };
  return {
    // Treasury signs on the wallet's own network, EVM or Solana; network() narrows to it.
    networks: MANAGED_WALLET_NETWORKS,
    network: () => readWallet().then((w) => w.network),
    async sign(requirements, last, extensions, paymentId, challengeOrigin) {
      try {
        // The purchase's identifier keys the payment on the wallet (else a key of its own for each entry asked
        // for): a 503 or a lost answer is retried by the client as this same payment (Treasury answers the retry
        // with the signature it recorded), never as a second one; so is the purchase retried later, by its id.
        const payment = await client.pay(walletId, {
          paymentRequirements: requirements,
          ...(paymentId !== undefined
            ? { paymentIdentifier: paymentId }
            : { idempotencyKey: newIdempotencyKey('x402') }),
          ...(capability !== undefined ? { capability } : {}),
          // The origin whose 402 this is: a copied challenge of a Treasury seller is refused there (403).
          ...(challengeOrigin !== undefined ? { challengeOrigin } : {}),
          ...(requirements.scheme === 'upto' && extensions?.[EIP2612_GAS_SPONSORING_KEY] !== undefined
            ? { gasSponsoring: 'eip2612' as const }
            : {}),
        });
        return { terms: toSignedTerms(payment), payment, payer: (await readWallet()).address };
      } catch (err) {
        if (err instanceof TreasuryApiError && err.code === 'payment_identifier_conflict' && paymentId !== undefined)
          throw new PurchaseTermsChangedError(paymentId, err);
        if (!(err instanceof TreasuryApiError) || err.code !== 'permit2_allowance_required') throw err;
        if (last) throw new Permit2AllowanceRequiredError(err);
        return undefined;
      }
    },
    // Read to explain a refusal the buyer already has: asked once, never held behind the client's 503 retries.
    ...(getBalance ? { balance: () => getBalance(walletId, { unavailableRetries: 0 }) } : {}),
    ...(recordSettlement ? { recordSettlement: (id: string, tx: string) => recordSettlement(walletId, id, tx) } : {}),
  };
}
