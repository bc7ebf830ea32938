/**
 * The stores the seller's money reads and writes through, in the words of the services that use them
 * (PostgreSQL implementations in ./pg-ledger-stores.ts):
 * - `SellerLedgerStore`: a seller's ledger rows — reported once per transaction, listed, totalled (revenue from
 *   the rows at a range's edges and the per-day rollups between), exported page by page — and its payables and
 *   payouts (../ledger/seller-ledger-service.ts);
 * - `EndpointRoutes`: the seller's endpoints as a report's route is matched against them, with the version that
 *   moves when they change (../ledger/endpoint-matcher-cache.ts);
 * - `PendingRowCounts`: how many rows a seller already reported, still has pending, or had rejected lately
 *   (../ledger/ledger-pending-cap.ts);
 * - `PayToStore`: the seller's proven pay-to addresses (../seller-pay-to-service.ts);
 * - `LedgerVerificationStore`: what the background verifier (../ledger/ledger-verifier.ts) claims, reads and
 *   writes — due rows in turns (./ledger-fair-claim.ts), what a row was reported as, where its money may have
 *   gone and whether it came from the platform (./ledger-row-claim.ts), and each verdict.
 *
 * Defends: SQL outside a store; one seller's rows reached through another (every read and write names the
 * seller). Does not defend: what the caller writes (the services decide it).
 */
import type { PageRequest } from '../../db/keyset-cursor.js';
import type { MatchableEndpoint } from '../../../shared/endpoint-matcher.js';
import type { LedgerStatus, PayoutFlushView } from '../../../shared/api-responses/seller-ledger-responses.js';
import type { RowPage } from './seller-stores.js';
import type { ClaimedLedgerRow, FairClaimOptions } from './ledger-fair-claim.js';
import type { AuthorizationLink, RowClaim, RowRecipients } from './ledger-row-claim.js';
import type { MinedTransaction } from '../../chain/balance-reader.js';

/** A ledger row as stored. */
export interface LedgerRow {
  id: string;
  seller_id: string;
  endpoint_id: string | null;
  tx_hash: string;
  payer: string;
  amount_micro: string;
  network: string;
  method: string | null;
  route: string | null;
  content_hash: string | null;
  authorization_id: string | null;
  decision_id: string | null;
  status: LedgerStatus;
  reason: string | null;
  confirmations: number | null;
  verified_at: Date | null;
  created_at: Date;
}

/**
 * A row as reported: stored `pending`, to be checked from `next_check_at`. Its `payout_mode` is the seller's
 * mode when it reported, a guess the verifier replaces with the mode of the row's recipient on chain.
 */
export type NewLedgerRow = Omit<LedgerRow, 'confirmations' | 'verified_at' | 'status'> & {
  status: 'pending';
  nonce: string | null;
  payout_mode: string;
  next_check_at: Date;
};

/** Which of a seller's rows: reported within `from` (inclusive) and `to` (exclusive), for one endpoint when given. */
export interface LedgerRange {
  from?: Date | undefined;
  to?: Date | undefined;
  endpoint_id?: string | undefined;
}

/** Whole UTC days as YYYY-MM-DD: `first` included, `end` excluded (open when undefined). */
export interface RevenueDays {
  first?: string | undefined;
  end?: string | undefined;
}

/** A sum of rows by key (an endpoint, '' for none, or a status). */
export interface LedgerTotal {
  key: string;
  total: string;
  n: string;
}

/** A payout as stored. */
export interface PayoutRow {
  id: string;
  amount_micro: string;
  created_at: Date;
  status: PayoutFlushView['status'];
  network: string | null;
  pay_to: string | null;
  tx_hash: string | null;
  reason: string | null;
  settled_at: Date | null;
}

export interface SellerLedgerStore {
  /** Whether the seller has the endpoint. */
  hasEndpoint(sellerId: string, endpointId: string): Promise<boolean>;
  /**
   * Whether a row of `network` can have paid the seller anywhere: a pay-to address it proved on the network's
   * chain family (EVM: 0x, Solana: base58), or its collection wallet on the network.
   */
  hasRecipient(sellerId: string, network: string): Promise<boolean>;
  /** Stores the row unless the seller already reported its transaction; the row as stored either way. */
  reportOnce(row: NewLedgerRow): Promise<{ created: boolean; stored: LedgerRow }>;
  /** A page of the seller's rows in `range` (of one status when given), newest first. */
  pageOf(
    sellerId: string,
    range: LedgerRange & { status?: LedgerStatus | undefined },
    request: PageRequest,
  ): Promise<RowPage<LedgerRow>>;
  /** The seller's verified rows in `range`, summed by endpoint. */
  verifiedByEndpoint(sellerId: string, range: LedgerRange): Promise<LedgerTotal[]>;
  /** The seller's per-day rollups from `first` (inclusive) to `end` (exclusive), summed by endpoint. */
  revenueDays(sellerId: string, days: RevenueDays, endpointId?: string): Promise<LedgerTotal[]>;
  /** The seller's rows in `range` not verified, summed by status (read for a range's edges, each under a day). */
  unverifiedByStatus(sellerId: string, range: LedgerRange): Promise<LedgerTotal[]>;
  /** The seller's per-day rollups of rows not verified from `first` (inclusive) to `end` (exclusive), by status. */
  unverifiedDays(sellerId: string, days: RevenueDays, endpointId?: string): Promise<LedgerTotal[]>;
  /** Up to `limit` of the seller's rows in `range`, oldest first, after `after` when given. */
  rowsAfter(
    sellerId: string,
    range: LedgerRange,
    after: { created_at: Date; id: string } | undefined,
    limit: number,
  ): Promise<LedgerRow[]>;
  /** A page of the seller's payouts, newest first. */
  payoutsOf(sellerId: string, request: PageRequest): Promise<RowPage<PayoutRow>>;
  /** What the seller earned, was paid and was advanced (micro-USD), if anything yet. */
  payablesOf(
    sellerId: string,
  ): Promise<{ earned_micro: string; paid_micro: string; advance_micro: string } | undefined>;
  /** The seller's rows still pending that it reported while platform_mor: their sum (micro-USD) and count. */
  pendingCollected(sellerId: string): Promise<{ total: string | null; n: string } | undefined>;
}

export interface EndpointRoutes {
  /** The version of the seller's endpoint set (moves with every change); undefined for no such seller. */
  versionOf(sellerId: string): Promise<string | undefined>;
  /** The seller's endpoints as matched, oldest first. */
  matchableOf(sellerId: string): Promise<MatchableEndpoint[]>;
}

export interface PendingRowCounts {
  /** How many of `hashes` the seller has already reported. */
  reported(sellerId: string, hashes: readonly string[]): Promise<number>;
  /** The seller's pending rows, counted up to `upTo` (a seller far above it costs no more). */
  pending(sellerId: string, upTo: number): Promise<number>;
  /** The pending rows of all the account's sellers, counted up to `upTo`. */
  pendingOfAccount(accountId: string, upTo: number): Promise<number>;
  /** The seller's rejected rows created in the last `windowSeconds` (by the database's clock), counted up to `upTo`. */
  rejectedRecently(sellerId: string, windowSeconds: number, upTo: number): Promise<number>;
}

export interface PayToStore {
  /** Keeps the proven address (once per seller and address). */
  add(sellerId: string, address: string, signature: string, at: Date): Promise<void>;
  /**
   * Makes the rows that waited for a pay-to due for verification at `at`, and reopens (pending, due at `at`) the
   * rows rejected for paying an address not proven yet — newest first, only as many as keep the seller's pending
   * rows within `caps.perSeller` and its account's (all its sellers') within `caps.perAccount`; the others stay
   * rejected (a later proof reopens them as room comes back).
   */
  recheckForPayTo(sellerId: string, at: Date, caps: { perSeller: number; perAccount: number }): Promise<void>;
  /** The seller's proven addresses, oldest first. */
  listOf(sellerId: string): Promise<Array<{ address: string; created_at: Date }>>;
}

/** What every verdict writes: when the row was checked, its attempts, the confirmations seen. */
export interface CheckRecord {
  checked_at: Date;
  attempts: number;
  confirmations: number | null;
}

export interface LedgerVerificationStore {
  /** Makes the rows parked for the configuration (no RPC, no such network) due at `at`: it may have changed. */
  reopenParked(at: Date): Promise<void>;
  /** Every seller's pending rows. */
  pendingCount(): Promise<number>;
  /** Leases one batch of due rows, sellers in turns (./ledger-fair-claim.ts). */
  claimDue(options: FairClaimOptions): Promise<{ rows: ClaimedLedgerRow[]; moreDue: boolean }>;
  /** What the row was reported as: the seller's payout mode then and the nonce it names. */
  claimOf(rowId: string): Promise<RowClaim>;
  /** Where the row's money may have gone: the seller's collection wallet there, its pay-to addresses (./ledger-row-claim.ts). */
  recipientsOf(row: { seller_id: string; network: string }): Promise<RowRecipients>;
  /** Whether the row's payer is a platform collection wallet or its transaction a payout's (./ledger-row-claim.ts). */
  platformTransfer(row: { payer: string; network: string; tx_hash: string }): Promise<boolean>;
  /** The Treasury authorization with `nonce` that the mined transaction `tx` settled, if any (./ledger-row-claim.ts). */
  linkAuthorization(
    row: { payer: string; network: string },
    nonce: string,
    tx: MinedTransaction,
    asset: string,
  ): Promise<AuthorizationLink | undefined>;
  /** Keeps a pending row pending for `reason`, checked again at `nextCheckAt`. */
  keepPending(rowId: string, check: CheckRecord, reason: string, nextCheckAt: Date): Promise<void>;
  reject(rowId: string, check: CheckRecord, reason: string): Promise<void>;
  /**
   * Verifies a pending row on the transfer at `logIndex` (linked to `link` when given) as a row of `mode` (where
   * that transfer went); false when another row is verified on that transfer already.
   */
  verify(
    rowId: string,
    check: CheckRecord,
    logIndex: number,
    at: Date,
    link: AuthorizationLink | undefined,
    mode: RowClaim['payout_mode'],
  ): Promise<boolean>;
}
