/**
 * The settings that keep one seller, or one account's many sellers, from taking more than their share of what all
 * tenants share (docs/security-model.md, Tenant isolation: sellers): their environment variables, part of the API's
 * one configuration schema (./app-config.ts spreads them in), and the fields of `AppConfig` they become.
 * - the ledger verifier's turns (src/api/sellers/store/ledger-fair-claim.ts): at most
 *   TREASURY_LEDGER_VERIFY_SELLER_SHARE rows of one account (all its sellers) per batch;
 * - pending ledger rows (src/api/sellers/ledger/ledger-pending-cap.ts): per seller and per account;
 * - the x402 payment-identifier store (src/api/sellers/payment-ids/payment-id-service.ts): ids kept and bytes of
 *   stored answers per seller.
 *
 * Defends: a bound outside its range (each variable is a bounded integer; the answer-bytes budget at least 64 KiB).
 * Does not defend: the bounds themselves (the modules named above enforce them).
 */
import { z } from 'zod';
import { envInt } from '../../shared/env-int.js';

export const sellerBoundsEnvShape = {
  /**
   * Rows of one account's sellers a verifier claim takes before other accounts' due rows are served (the claim goes
   * round accounts in turns, and round an account's sellers within its share).
   */
  TREASURY_LEDGER_VERIFY_SELLER_SHARE: envInt(1, 1_000, 25),
  /** Ledger rows one seller may have waiting for verification; a report that would pass it is refused whole (429). */
  TREASURY_LEDGER_MAX_PENDING_PER_SELLER: envInt(1, 10_000_000, 10_000),
  /** The same over all of one account's sellers together (checked as well as each seller's own). */
  TREASURY_LEDGER_MAX_PENDING_PER_ACCOUNT: envInt(1, 100_000_000, 20_000),
  /**
   * The x402 payment-identifier store, per seller: ids kept (pending or answered, for up to 24 h), past which a
   * claim of a new id is refused (429 `payment_id_limit_reached`; the paywall answers 503, nothing paid); and bytes
   * of stored answers, past which an answer is kept without its body (a retry gets 410 with its receipt), or
   * refused when even that does not fit (the buyer, already paid, still gets its answer).
   */
  TREASURY_MAX_PAYMENT_IDS_PER_SELLER: envInt(1, 10_000_000, 20_000),
  TREASURY_MAX_PAYMENT_ID_BYTES_PER_SELLER: envInt(65_536, 64 * 1024 ** 3, 128 * 1024 ** 2),
};

type SellerBoundsEnv = { [K in keyof typeof sellerBoundsEnvShape]: z.infer<(typeof sellerBoundsEnvShape)[K]> };

export type SellerBoundsConfig = Readonly<{
  ledgerVerifySellerShare: number;
  ledgerMaxPendingPerSeller: number;
  ledgerMaxPendingPerAccount: number;
  /** The payment-identifier store's budgets per seller (ids kept, bytes of stored answers). */
  paymentIdBounds: Readonly<{ maxIdsPerSeller: number; maxAnswerBytesPerSeller: number }>;
}>;

export function sellerBoundsConfigOf(e: SellerBoundsEnv): SellerBoundsConfig {
  return {
    ledgerVerifySellerShare: e.TREASURY_LEDGER_VERIFY_SELLER_SHARE,
    ledgerMaxPendingPerSeller: e.TREASURY_LEDGER_MAX_PENDING_PER_SELLER,
    ledgerMaxPendingPerAccount: e.TREASURY_LEDGER_MAX_PENDING_PER_ACCOUNT,
    paymentIdBounds: Object.freeze({
      maxIdsPerSeller: e.TREASURY_MAX_PAYMENT_IDS_PER_SELLER,
      maxAnswerBytesPerSeller: e.TREASURY_MAX_PAYMENT_ID_BYTES_PER_SELLER,
    }),
  };
}
