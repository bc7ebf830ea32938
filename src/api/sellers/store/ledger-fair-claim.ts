/**
 * The ledger verifier's claim (../ledger/ledger-verifier.ts): which due `pending` rows one batch takes. Sellers are served
 * in turns — each seller's due rows are numbered oldest due first (a window over the pending rows' per-seller
 * index, migration 20261128150000), and the batch takes every seller's first row, then every seller's second, and
 * so on, at most `sellerShare` rows of one seller per batch; the rows are decided in that order. A claimed row is
 * leased (its next_check_at moved past the lease) with FOR UPDATE SKIP LOCKED, so API processes never check one
 * row twice; a process claiming at the very moment another does skips the rows the other holds and may come back
 * with fewer (none, for one seller's backlog) — it takes the next turns once the other's lease is committed.
 *
 * Defends: one seller's backlog — thousands of made-up transactions, say — delaying every other seller's
 * verification behind it (one shared FIFO before): another seller's due row is in the next batch whatever the
 * backlog, decided among the first, and one batch spends at most `sellerShare` RPC reads on one seller. Does not
 * defend: the backlog's own size (bounded at report time, ../ledger/ledger-pending-cap.ts); it does not slow a seller
 * when no one else waits (the verifier claims again at once while rows are due).
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
}

export interface FairClaimOptions {
  now: Date;
  /** Until when the claimed rows are left alone by other processes. */
  leaseUntil: Date;
  batch: number;
  /** The most rows of one seller in one batch. */
  sellerShare: number;
}

/** Candidates read per claim, as a multiple of the batch: rows another process holds are skipped, not waited for. */
const CANDIDATES_PER_ROW = 4;

const CLAIM_SQL = `
WITH due AS (
  SELECT id, next_check_at, row_number() OVER (PARTITION BY seller_id ORDER BY next_check_at, id) AS turn
    FROM ledger_entries
   WHERE status = 'pending' AND next_check_at <= :now
), candidates AS (
  SELECT id, next_check_at, turn FROM due WHERE turn <= :share ORDER BY turn, next_check_at, id LIMIT :candidates
), claimed AS (
  SELECT e.id, c.turn FROM ledger_entries e JOIN candidates c ON c.id = e.id
   WHERE e.status = 'pending' AND e.next_check_at <= :now
   ORDER BY c.turn, c.next_check_at, c.id
   LIMIT :batch
   FOR UPDATE OF e SKIP LOCKED
)
UPDATE ledger_entries e SET next_check_at = :lease FROM claimed WHERE e.id = claimed.id
RETURNING e.id, e.seller_id, e.tx_hash, e.payer, e.amount_micro, e.network, e.created_at, e.attempts, claimed.turn`;

/**
 * Claims one batch, in turn order (the caller decides rows in that order). `moreDue`: the batch may have left due rows behind (it is full, or a seller used its whole
 * share), so the caller should claim again at once.
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
  // In turn order: every seller's first row is decided before any seller's second.
  const rows = claimed.sort((a, b) => Number(a.turn) - Number(b.turn)).map(({ turn: _turn, ...row }) => row);
  const perSeller = new Map<string, number>();
  for (const r of rows) perSeller.set(r.seller_id, (perSeller.get(r.seller_id) ?? 0) + 1);
  const shareUsed = [...perSeller.values()].some((n) => n >= options.sellerShare);
  return { rows, moreDue: rows.length === options.batch || shareUsed };
}
