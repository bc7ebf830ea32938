/**
 * How many payments one API process works on at once, and how many of one tenant (src/api/pay/pay-admission.ts) —
 * their environment variables, part of the API's one configuration schema (./bounds-config.ts joins them in), and
 * the fields of `AppConfig` they become:
 * - TREASURY_PAY_IN_FLIGHT: payments (pay and transfer calls) worked on at once over every tenant. Keep it, times
 *   the API processes sharing a signer, below the signer's TREASURY_SIGNER_MAX_QUEUE (1,024 by default): the signer
 *   answers `busy` past its queue, and that would fail any tenant's payment;
 * - TREASURY_PAY_IN_FLIGHT_PER_ACCOUNT: of those, at most this many of one tenant;
 * - TREASURY_PAY_QUEUE_PER_ACCOUNT: a tenant's payments waiting for a place; one more is refused 429
 *   `pay_concurrency_exceeded`;
 * - TREASURY_PAY_QUEUE: payments waiting over every tenant; one more is refused 503 `pay_overloaded`;
 * - TREASURY_PAY_QUEUE_WAIT_SECONDS: the longest a payment waits for its place (then 503 `pay_overloaded`), and a
 *   signer call of another kind for its own (then 503 `signer_unavailable`);
 * - TREASURY_SIGNER_OTHER_IN_FLIGHT: the signer calls other than a payment's (wallet and account keys, key
 *   destructions, policy reads, writes and receipts) this process has at the signer at once, a tenant's an eighth of
 *   them at most (src/api/signing/signer-gateway.ts). TREASURY_PAY_IN_FLIGHT plus this, times the processes, stays
 *   below the signer's queue;
 * - TREASURY_CHAIN_READS_IN_FLIGHT: the reads of a chain's RPC that tenants' calls cause (balances, reported
 *   settlements, Permit2 allowances, ledger rows) this process has at the RPC at once, a tenant's an eighth of them
 *   at most (src/api/chain/chain-read-admission.ts). Times the API processes, it stays below what the RPC endpoint
 *   takes at once.
 *
 * Defends: a value out of its range, and a tenant's share larger than the whole — refused at start
 * (`config_invalid`, the variable named). Does not defend: what the admission does with them (it enforces them).
 */
import { z } from 'zod';
import { ConfigError } from '../../../base/config-error.js';
import { envInt } from '../../shared/env-int.js';

export const DEFAULT_PAY_IN_FLIGHT = 256;
export const DEFAULT_PAY_IN_FLIGHT_PER_ACCOUNT = 64;
export const DEFAULT_PAY_QUEUE_PER_ACCOUNT = 256;
export const DEFAULT_PAY_QUEUE = 4_096;
export const DEFAULT_PAY_QUEUE_WAIT_SECONDS = 10;
export const DEFAULT_SIGNER_OTHER_IN_FLIGHT = 64;
export const DEFAULT_CHAIN_READS_IN_FLIGHT = 32;

export const payAdmissionEnvShape = {
  /** Payments worked on at once in this process, over every tenant (below the signer's queue). */
  TREASURY_PAY_IN_FLIGHT: envInt(1, 100_000, DEFAULT_PAY_IN_FLIGHT),
  /** Of those, one tenant's at most (≤ TREASURY_PAY_IN_FLIGHT). */
  TREASURY_PAY_IN_FLIGHT_PER_ACCOUNT: envInt(1, 100_000, DEFAULT_PAY_IN_FLIGHT_PER_ACCOUNT),
  /** A tenant's payments waiting for a place; past it 429 `pay_concurrency_exceeded`. */
  TREASURY_PAY_QUEUE_PER_ACCOUNT: envInt(0, 100_000, DEFAULT_PAY_QUEUE_PER_ACCOUNT),
  /** Payments waiting over every tenant; past it 503 `pay_overloaded`. */
  TREASURY_PAY_QUEUE: envInt(0, 1_000_000, DEFAULT_PAY_QUEUE),
  /** Seconds a payment waits for its place at most; then 503 `pay_overloaded`. */
  TREASURY_PAY_QUEUE_WAIT_SECONDS: envInt(1, 300, DEFAULT_PAY_QUEUE_WAIT_SECONDS),
  /** Signer calls other than a payment's at once in this process (a tenant's an eighth of them at most). */
  TREASURY_SIGNER_OTHER_IN_FLIGHT: envInt(1, 100_000, DEFAULT_SIGNER_OTHER_IN_FLIGHT),
  /** Reads of a chain's RPC at once in this process (a tenant's an eighth of them at most). */
  TREASURY_CHAIN_READS_IN_FLIGHT: envInt(1, 10_000, DEFAULT_CHAIN_READS_IN_FLIGHT),
};

type PayAdmissionEnv = { [K in keyof typeof payAdmissionEnvShape]: z.infer<(typeof payAdmissionEnvShape)[K]> };

export type PayAdmissionConfig = Readonly<{
  /**
   * TREASURY_PAY_IN_FLIGHT, …_PER_ACCOUNT, TREASURY_PAY_QUEUE, …_PER_ACCOUNT, …_WAIT_SECONDS,
   * TREASURY_SIGNER_OTHER_IN_FLIGHT, TREASURY_CHAIN_READS_IN_FLIGHT.
   */
  payAdmission: Readonly<{
    inFlight: number;
    inFlightPerAccount: number;
    queue: number;
    queuePerAccount: number;
    queueWaitSeconds: number;
    signerOtherInFlight: number;
    chainReadsInFlight: number;
  }>;
}>;

export function payAdmissionConfigOf(e: PayAdmissionEnv): PayAdmissionConfig {
  if (e.TREASURY_PAY_IN_FLIGHT_PER_ACCOUNT > e.TREASURY_PAY_IN_FLIGHT)
    throw new ConfigError(
      'api',
      `TREASURY_PAY_IN_FLIGHT_PER_ACCOUNT: must be at most TREASURY_PAY_IN_FLIGHT (${e.TREASURY_PAY_IN_FLIGHT})`,
    );
  return {
    payAdmission: Object.freeze({
      inFlight: e.TREASURY_PAY_IN_FLIGHT,
      inFlightPerAccount: e.TREASURY_PAY_IN_FLIGHT_PER_ACCOUNT,
      queue: e.TREASURY_PAY_QUEUE,
      queuePerAccount: e.TREASURY_PAY_QUEUE_PER_ACCOUNT,
      queueWaitSeconds: e.TREASURY_PAY_QUEUE_WAIT_SECONDS,
      signerOtherInFlight: e.TREASURY_SIGNER_OTHER_IN_FLIGHT,
      chainReadsInFlight: e.TREASURY_CHAIN_READS_IN_FLIGHT,
    }),
  };
}
