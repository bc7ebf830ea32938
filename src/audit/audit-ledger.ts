/**
 * The audit ledger: append-only (a trigger refuses UPDATE/DELETE) and hash-chained per subject (a wallet
 * or an account): each row stores the hash of the previous row of its chain, so any edit, deletion or
 * reordering is detected by `verifyAuditChain`, which names the first broken row.
 *
 * Does not defend against an attacker who can rewrite the whole table and recompute every hash; anchor
 * chain heads elsewhere (e.g. export them to a log store) for that.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { canonicalJson } from './canonical-json.js';

export const GENESIS_HASH = '0'.repeat(64);

export interface AuditEventInput {
  chainKey: string;
  eventType: string;
  actor: string;
  payload: Record<string, unknown>;
  at?: Date;
}

interface AuditRow {
  id: string;
  chain_key: string;
  seq: number;
  event_type: string;
  actor: string;
  payload: Record<string, unknown>;
  prev_hash: string;
  hash: string;
  created_at: Date;
}

export function computeAuditHash(row: Omit<AuditRow, 'id' | 'hash'>): string {
  const body = canonicalJson({
    chain_key: row.chain_key,
    seq: row.seq,
    event_type: row.event_type,
    actor: row.actor,
    payload: row.payload,
    created_at: row.created_at.toISOString(),
  });
  return createHash('sha256').update(row.prev_hash).update('\n').update(body).digest('hex');
}

export interface AuditHead {
  seq: number;
  hash: string;
}

/** The row that follows `head` (null for a new chain), ready to insert (payload as JSON text). */
export function buildAuditRow(head: AuditHead | null, input: AuditEventInput) {
  const seq = head ? Number(head.seq) + 1 : 1;
  const prevHash = head ? head.hash : GENESIS_HASH;
  const createdAt = input.at ?? new Date();
  const hash = computeAuditHash({ chain_key: input.chainKey, seq, event_type: input.eventType, actor: input.actor, payload: input.payload, prev_hash: prevHash, created_at: createdAt });
  return { chain_key: input.chainKey, seq, event_type: input.eventType, actor: input.actor, payload: JSON.stringify(input.payload), prev_hash: prevHash, hash, created_at: createdAt };
}

/**
 * Appends one event inside the caller's transaction; serialised per chain by an advisory lock. (The pay
 * path writes wallet chains itself, under the wallet lock, with `buildAuditRow`.)
 */
export async function appendAuditEvent(trx: Knex.Transaction, input: AuditEventInput): Promise<{ seq: number; hash: string }> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 42))', [`audit:${input.chainKey}`]);
  const last = (await trx('audit_events').where({ chain_key: input.chainKey }).orderBy('seq', 'desc').first('seq', 'hash')) as AuditHead | undefined;
  const row = buildAuditRow(last ?? null, input);
  await trx('audit_events').insert(row);
  return { seq: row.seq, hash: row.hash };
}

export interface AuditVerification {
  chains: number;
  /** Rows read and checked: every row when the ledger is intact, up to and including the first broken one otherwise. */
  rows: number;
  ok: boolean;
  firstBroken?: { id: string; chain_key: string; seq: number; reason: 'hash_mismatch' | 'prev_hash_mismatch' | 'sequence_gap' };
}

/** Rows read per query by verifyAuditChain (keyset pages on the UNIQUE (chain_key, seq) index). */
export const AUDIT_VERIFY_BATCH_ROWS = 5_000;

/**
 * Recomputes every chain (or one) and reports the first row whose hash or link does not hold. The ledger is
 * read in keyset pages of `batchRows` in (chain_key, seq) order, so memory stays bounded however long the
 * ledger grows (at 400 payments a second it gains 35 million rows a day).
 */
export async function verifyAuditChain(knex: Knex, chainKey?: string, options: { batchRows?: number } = {}): Promise<AuditVerification> {
  const batchRows = Math.max(1, Math.floor(options.batchRows ?? AUDIT_VERIFY_BATCH_ROWS));
  let chains = 0;
  let rows = 0;
  let prevKey: string | null = null;
  let prevHash = GENESIS_HASH;
  let expectedSeq = 1;
  let after: { chainKey: string; seq: number } | undefined;
  for (;;) {
    const query = knex<AuditRow>('audit_events').orderBy([{ column: 'chain_key' }, { column: 'seq' }]).limit(batchRows);
    if (chainKey !== undefined) query.where({ chain_key: chainKey });
    if (after) query.whereRaw('(chain_key, seq) > (?, ?)', [after.chainKey, after.seq]);
    const page = (await query) as AuditRow[];
    for (const row of page) {
      rows++;
      if (row.chain_key !== prevKey) {
        chains++;
        prevKey = row.chain_key;
        prevHash = GENESIS_HASH;
        expectedSeq = 1;
      }
      const broken = (reason: 'hash_mismatch' | 'prev_hash_mismatch' | 'sequence_gap'): AuditVerification => ({
        chains,
        rows,
        ok: false,
        firstBroken: { id: String(row.id), chain_key: row.chain_key, seq: Number(row.seq), reason },
      });
      if (Number(row.seq) !== expectedSeq) return broken('sequence_gap');
      if (row.prev_hash !== prevHash) return broken('prev_hash_mismatch');
      if (computeAuditHash({ ...row, seq: Number(row.seq) }) !== row.hash) return broken('hash_mismatch');
      prevHash = row.hash;
      expectedSeq++;
    }
    if (page.length < batchRows) return { chains, rows, ok: true };
    const last = page[page.length - 1]!;
    after = { chainKey: last.chain_key, seq: Number(last.seq) };
  }
}
