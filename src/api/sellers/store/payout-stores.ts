/**
 * The stores a platform_mor seller's payouts (../payouts/seller-payouts.ts) and the platform's collection
 * wallets (../payouts/platform-wallets.ts) read and write through, in their words (PostgreSQL implementations in
 * ./pg-payout-stores.ts): what is owed and collected, recorded as payouts under the seller's lock
 * (`PayoutLedger`), the unfinished payouts with the account of the wallet that pays them, each payout's
 * progress, moved under the same lock (`PayoutMoves`); each seller's collection wallet per network and the
 * platform's own account.
 *
 * Defends: SQL outside a store; two flushes of one seller recording payouts of the same money (the lock, and the
 * rows read for update); one flush judging a payout another flush is submitting (the same lock, held across
 * the move). Does not defend: how much is paid (the service decides it; two CHECKs bound it).
 */
import type { StoreUnit } from '../../db/store-unit.js';

/** A payout not finished yet, with the account of the collection wallet that pays it. */
export interface UnfinishedPayout {
  id: string;
  seller_id: string;
  network: string;
  wallet_id: string;
  amount_micro: string;
  status: 'pending' | 'submitted' | 'settled' | 'failed';
  pay_to: string | null;
  account_id: string;
}

/** A collection wallet of the seller: what it took and what was paid out of it (micro-USD). */
export interface CollectionBalance {
  wallet_id: string;
  network: string;
  collected_micro: string;
  paid_micro: string;
}

/** A payout as recorded (`pending`). */
export interface NewPayout {
  id: string;
  seller_id: string;
  amount_micro: string;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  status: 'pending';
  network: string;
  wallet_id: string;
  idempotency_key: string | null;
}

/** What a payout's progress may change. */
export interface PayoutProgress {
  status?: 'submitted' | 'settled' | 'failed';
  pay_to?: string;
  authorization_id?: string;
  tx_hash?: string;
  settled_at?: Date;
  reason?: string | null;
  updated_at: Date;
}

/** The seller's payables and collection wallets inside the transaction that holds the seller's payout lock. */
export interface PayoutLedger {
  /** Whether a payout was already recorded under `idempotencyKey`. */
  recorded(idempotencyKey: string): Promise<boolean>;
  /** What the seller earned and was paid (micro-USD), read for update; undefined when nothing yet. */
  payables(): Promise<{ earned_micro: string; paid_micro: string } | undefined>;
  /** The seller's collection wallets by network, read for update. */
  collections(): Promise<CollectionBalance[]>;
  add(payout: NewPayout): Promise<void>;
}

/** The seller's unfinished payouts and their progress, on the connection that holds the seller's payout lock. */
export interface PayoutMoves {
  /** The seller's pending and submitted payouts, oldest first, as they are now. */
  unfinished(): Promise<UnfinishedPayout[]>;
  /** Records a payout's progress (committed at once), only while it is unfinished. */
  progress(payoutId: string, changes: PayoutProgress): Promise<void>;
}

export interface PayoutStore {
  /** Whether anything collected for the seller is unpaid or a payout of it unfinished. */
  owesAny(sellerId: string): Promise<boolean>;
  /**
   * Runs `work` in one transaction under the seller's payout lock. The lock is tried, never waited for: held
   * elsewhere, it throws 409 `payout_in_progress` at once (holding no connection).
   */
  underPayoutLock(sellerId: string, work: (ledger: PayoutLedger) => Promise<void>): Promise<void>;
  /**
   * Runs `work` holding the seller's payout lock (the one `underPayoutLock` takes) on one pooled connection,
   * outside any transaction: `work` may wait on the network with it (a facilitator's answer, a chain read), and
   * reads and writes only through `moves`, on that connection — it never asks the pool for another one. The
   * lock is tried, never waited for: held elsewhere, it throws 409 `payout_in_progress` at once (holding no
   * connection).
   */
  underMoveLock<T>(sellerId: string, work: (moves: PayoutMoves) => Promise<T>): Promise<T>;
  /** The seller's pending and submitted payouts, oldest first (read without the lock: what to sign). */
  unfinishedOf(sellerId: string): Promise<UnfinishedPayout[]>;
  /** The seller's oldest proven EVM pay-to address (payouts leave an EVM collection wallet). */
  oldestPayTo(sellerId: string): Promise<string | undefined>;
}

/** A seller's collection wallet on a network (`address` checksummed). */
export interface CollectionWallet {
  seller_id: string;
  network: string;
  wallet_id: string;
  address: string;
  account_id: string;
}

/**
 * The unit of work a store runs a step of another wing in (the platform account created under the store's
 * lock): handed through, never opened, by the services (src/api/db/store-unit.ts).
 */
export type StoreTransaction = StoreUnit;

export interface CollectionWalletStore {
  /** The seller's collection wallet on `network`, if it exists. */
  find(sellerId: string, network: string): Promise<CollectionWallet | undefined>;
  /**
   * Under a per-seller-and-network lock: the wallet found meanwhile, or the one `create` makes (in the platform
   * account `accountId`), kept as the seller's collection wallet there.
   */
  ensure(
    sellerId: string,
    network: string,
    accountId: string,
    create: () => Promise<{ id: string; address: string }>,
  ): Promise<CollectionWallet>;
  /** The platform's Treasury account: the one that exists, or the one `create` makes under the store's lock. */
  platformAccount(create: (tx: StoreTransaction) => Promise<string>): Promise<string>;
}
