/**
 * The store the wallet wing reads a wallet's history through (../payment-history-service.ts,
 * ../wallet-history-service.ts): its payments (and an account's), its newest decisions and audit events, and
 * the recomputation of its audit chain. Rows as stored; what they mean for the reader is decided by the
 * services. PostgreSQL implementation: ./pg-wallet-history-store.ts.
 *
 * Defends: nothing by itself — the callers check that the wallet or account is the bearer's before asking.
 * Does not defend: an account-wide page's cost (it sorts the account's authorizations).
 */
import type { AuditHead, AuditVerification } from '../../audit/audit-ledger.js';
import type { PageRequest } from '../../db/keyset-cursor.js';

/** An authorization as the payment history reads it, with the verified seller ledger row naming it, if any. */
export interface PaymentRow {
  id: string;
  wallet_id: string;
  decision_id: string;
  kind: string;
  scheme: 'exact' | 'upto';
  network: string;
  to_address: string;
  amount_micro: string | number;
  valid_before: string | number;
  capability: string | null;
  resource: string | null;
  status: 'reserved' | 'signed' | 'released';
  settled_raw: string | null;
  settlement_tx: string | null;
  settled_at: Date | null;
  ledger_tx_hash: string | null;
  created_at: Date;
}

/** What a refused and an allowed payment both say of the payment itself. */
export interface DecidedPayment {
  kind: 'pay' | 'transfer';
  amount_micro: string;
  to_address: string;
  capability: string | null;
  created_at: Date | string;
}

/** A refusal (a policy_decisions row). */
export interface DenialRow extends DecidedPayment {
  id: string;
  violations: Array<{ rule: string; message: string }>;
  headroom: Record<string, unknown>;
  /** The API's policy check or the signer's check of the owner-signed policy. */
  decided_by: 'api' | 'signer';
}

/** An allowed payment (its authorization row, which carries the decision's id). */
export interface AllowedRow extends DecidedPayment {
  id: string;
  decision_id: string;
}

export interface AuditEventRow {
  seq: string | number;
  event_type: string;
  actor: string;
  created_at: Date | string;
  prev_hash: string;
  hash: string;
}

export interface PaymentRowPage {
  page: PaymentRow[];
  nextCursor: string | null;
}

/** A chain's verification and, when it holds, the newest row it reached. */
export interface ChainVerification {
  verification: AuditVerification;
  head?: AuditHead;
}

export interface WalletHistoryStore {
  /** A page of one wallet's payments, newest first. */
  paymentsOfWallet(walletId: string, page: PageRequest): Promise<PaymentRowPage>;
  /** A page of the payments of every wallet (active or not) of a Treasury account, newest first. */
  paymentsOfAccount(accountId: string, page: PageRequest): Promise<PaymentRowPage>;
  /** The wallet's newest `limit` refusals and newest `limit` allowed payments. */
  newestDecisions(walletId: string, limit: number): Promise<{ denials: DenialRow[]; allowed: AllowedRow[] }>;
  /** The wallet's newest `limit` audit events, newest first. */
  newestAuditEvents(walletId: string, limit: number): Promise<AuditEventRow[]>;
  /**
   * The wallet's audit chain recomputed from its first row, or from the row at `since.seq` on: that row's
   * hash recomputed from its contents (its link included) and held to `since.hash`, then every later row
   * (../../audit/verify-audit-since.ts; `rows` counts the rows read, from `since.seq` on).
   */
  verifyChain(walletId: string, since?: AuditHead): Promise<ChainVerification>;
}
