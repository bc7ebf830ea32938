/**
 * The ledger verifier's claim (../ledger/ledger-verifier.ts): which due `pending` rows one batch takes. Accounts are
 * served in turns, and within an account its sellers — each seller's due rows are numbered oldest due first (a
 * window over the pending rows' per-seller index, migration 20261128150000), its first `sellerShare` of them are
 * numbered again within the seller's account (every seller's first row, then every seller's second), and the batch
 * takes every account's first turn, then every account's second, and so on, at most `sellerShare` rows of one
 * account (so of one seller) per batch; the rows are decided in that order. A claimed row is leased (its
 * next_check_at moved past the lease) with FOR UPDATE SKIP LOCKED, so API processes never check one row twice; a
 * process claiming at the very moment another does skips the rows the other holds and may come back with fewer
 * (none, for one account's backlog) — it takes the next turns once the other's lease is committed.
 *
 * Defends: one seller's backlog — thousands of made-up transactions, say — delaying every other seller's
 * verification behind it (one shared FIFO before), and one account doing the same with many sellers (up to
 * TREASURY_MAX_SELLERS_PER_ACCOUNT, each a turn of its own before): another account's due row is in the next batch
 * whatever the backlog or its number of sellers, decided among the first, and one batch spends at most
 * `sellerShare` RPC reads on one account. Does not defend: the backlog's own size (bounded at report time, per
 * seller and per account, ../ledger/ledger-pending-cap.ts); many accounts (each gets a turn); it does not slow an
 * account when no one else waits (the verifier claims again at once while rows are due).
 */
import type { Knex } from 'knex';

/** A claimed row: what the verifier needs to decide it. */
export interface ClaimedLedgerRow {
  id: string;
  seller_id: string;
  tx_hash: string;
  payer: string;
  amount_micro: string;
  network: string;
  created_at: Date;
  attempts: number;
  /** The seller's platform account: the tenant its on-chain read counts under (src/api/chain/chain-read-admission.ts). */
  account_id: string;
}

export interface FairClaimOptions {
  now: Date;
  /** Until when the claimed rows are left alone by other processes. */
  leaseUntil: Date;
  batch: number;
  /** The most rows of one account (all its sellers) in one batch. */
  sellerShare: number;
}

/** Candidates read per claim, as a multiple of the batch: rows another process holds are skipped, not waited for. */
const CANDIDATES_PER_ROW = 4;

/**
 * `due`: each seller's due rows numbered oldest due first (the window runs in the order of the per-seller pending
 * index); `firsts`: each seller's first `share` of them, numbered within their account — every seller's first row,
 * oldest first, then every seller's second — so an account's turns go round its sellers; a turn past `share` is
 * not taken. The batch then takes every account's first turn, then every account's second, and so on.
 */
const CLAIM_SQL = `
WITH due AS (
  SELECT id, seller_id, next_check_at,
         row_number() OVER (PARTITION BY seller_id ORDER BY next_check_at, id) AS seller_turn
    FROM ledger_entries
   WHERE status = 'pending' AND next_check_at <= :now
), firsts AS (
  SELECT d.id, d.next_check_at, s.account_id,
         row_number() OVER (PARTITION BY s.account_id ORDER BY d.seller_turn, d.next_check_at, d.id) AS turn
    FROM due d JOIN sellers s ON s.id = d.seller_id
   WHERE d.seller_turn <= :share
), candidates AS (
  SELECT id, next_check_at, account_id, turn FROM firsts WHERE turn <= :share
   ORDER BY turn, next_check_at, id LIMIT :candidates
), claimed AS (
  SELECT e.id, c.turn, c.account_id FROM ledger_entries e JOIN candidates c ON c.id = e.id
   WHERE e.status = 'pending' AND e.next_check_at <= :now
   ORDER BY c.turn, c.next_check_at, c.id
   LIMIT :batch
   FOR UPDATE OF e SKIP LOCKED
)
UPDATE ledger_entries e SET next_check_at = :lease FROM claimed WHERE e.id = claimed.id
RETURNING e.id, e.seller_id, e.tx_hash, e.payer, e.amount_micro, e.network, e.created_at, e.attempts,
          claimed.turn, claimed.account_id`;

/**
 * Claims one batch, in turn order (the caller decides rows in that order). `moreDue`: the batch may have left due
 * rows behind (it is full, or an account used its whole share), so the caller should claim again at once.
 */
export async function claimDueLedgerRows(
  knex: Knex,
  options: FairClaimOptions,
): Promise<{ rows: ClaimedLedgerRow[]; moreDue: boolean }> {
  const claimed = (
    await knex.raw(CLAIM_SQL, {
      now: options.now,
      lease: options.leaseUntil,
      share: options.sellerShare,
      batch: options.batch,
      candidates: options.batch * CANDIDATES_PER_ROW,
    })
  ).rows as Array<ClaimedLedgerRow & { turn: string }>;
  // In turn order: every account's first row is decided before any account's second.
  const inTurns = claimed.sort((a, b) => Number(a.turn) - Number(b.turn));
  const perAccount = new Map<string, number>();
  for (const r of inTurns) perAccount.set(r.account_id, (perAccount.get(r.account_id) ?? 0) + 1);
  const shareUsed = [...perAccount.values()].some((n) => n >= options.sellerShare);
  const rows = inTurns.map(({ turn: _turn, ...row }) => row);
  return { rows, moreDue: rows.length === options.batch || shareUsed };
}
