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
  rows: number;
  ok: boolean;
  firstBroken?: { id: string; chain_key: string; seq: number; reason: 'hash_mismatch' | 'prev_hash_mismatch' | 'sequence_gap' };
}

/** Recomputes every chain (or one) and reports the first row whose hash or link does not hold. */
export async function verifyAuditChain(knex: Knex, chainKey?: string): Promise<AuditVerification> {
  const query = knex<AuditRow>('audit_events').orderBy([{ column: 'chain_key' }, { column: 'seq' }]);
  if (chainKey) query.where({ chain_key: chainKey });
  const rows = (await query) as AuditRow[];
  let chains = 0;
  let prevKey: string | null = null;
  let prevHash = GENESIS_HASH;
  let expectedSeq = 1;
  for (const row of rows) {
    if (row.chain_key !== prevKey) {
      chains++;
      prevKey = row.chain_key;
      prevHash = GENESIS_HASH;
      expectedSeq = 1;
    }
    const broken = (reason: 'hash_mismatch' | 'prev_hash_mismatch' | 'sequence_gap'): AuditVerification => ({
      chains,
      rows: rows.length,
      ok: false,
      firstBroken: { id: String(row.id), chain_key: row.chain_key, seq: Number(row.seq), reason },
    });
    if (Number(row.seq) !== expectedSeq) return broken('sequence_gap');
    if (row.prev_hash !== prevHash) return broken('prev_hash_mismatch');
    if (computeAuditHash({ ...row, seq: Number(row.seq) }) !== row.hash) return broken('hash_mismatch');
    prevHash = row.hash;
    expectedSeq++;
  }
  return { chains, rows: rows.length, ok: true };
}
