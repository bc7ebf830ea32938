/**
 * The audit ledger: append-only (a trigger refuses UPDATE/DELETE) and hash-chained per subject (a wallet
 * or an account): each row stores the hash of the previous row of its chain, so any edit, deletion or
 * reordering is detected by `verifyAuditChain`, which names the first broken row.
 *
 * The verifier holds the hash to what is stored, not to what the driver makes of it: it reads the payload as
 * `payload::text` (PostgreSQL's spelling of the stored jsonb), hashes the canonical JSON of that text parsed,
 * and takes a row whose text says more than the parsed value as `hash_mismatch` — a number a double does not
 * hold exactly (./stored-payload-numbers.ts; a `__proto__` key is an ordinary key of canonical JSON, so its
 * hash covers it), or a created_at below the millisecond its hash spells (every row is written from a
 * JavaScript Date; the query compares created_at with itself truncated to milliseconds).
 *
 * Does not defend, on its own, against an attacker who can rewrite the whole table and recompute every hash,
 * or who drops a chain's newest rows: anchor the chain heads elsewhere for that (`audit:verify --heads-out`
 * to a store the database's owners cannot rewrite, then `--heads-in` on the next run: an anchored row whose
 * hash changed or that is gone breaks the verification; ./audit-heads.ts). `--since-heads` verifies only
 * from those heads on (./verify-audit-since.ts), which leaves edits before them to the full verification.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { canonicalJson, CanonicalJsonError } from '../../../base/canonical-json.js';
import { auditHash, canonicalPayloadText, writablePayloadText } from './audit-hash.js';
import { storedNumbersHold } from './stored-payload-numbers.js';

export const GENESIS_HASH = '0'.repeat(64);

export interface AuditEventInput {
  chainKey: string;
  eventType: string;
  actor: string;
  payload: Record<string, unknown>;
  at?: Date;
}

export interface AuditRow {
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

/** The hash of `row` (./audit-hash.ts: over its previous hash and its canonical JSON). */
export function computeAuditHash(row: Omit<AuditRow, 'id' | 'hash'>): string {
  const { chain_key, event_type, actor } = row;
  if (typeof chain_key !== 'string' || typeof event_type !== 'string' || typeof actor !== 'string')
    return legacyAuditHash(row);
  return auditHash({ ...row, chain_key, event_type, actor, payloadText: canonicalPayloadText(row.payload) });
}

/** The same hash spelled out with canonicalJson, for a row whose text fields are not all strings. */
function legacyAuditHash(row: Omit<AuditRow, 'id' | 'hash'>): string {
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

/** The row that follows `head` (null for a new chain), ready to insert (payload as its canonical JSON text). */
export function buildAuditRow(head: AuditHead | null, input: AuditEventInput) {
  const seq = head ? Number(head.seq) + 1 : 1;
  const prevHash = head ? head.hash : GENESIS_HASH;
  const createdAt = input.at ?? new Date();
  // Serialised once: the text the hash covers is the text the row stores (refused if it would be spelled
  // otherwise than every earlier row's: ./audit-hash.ts).
  const payloadText = writablePayloadText(input.payload);
  const hash = auditHash({
    chain_key: input.chainKey,
    seq,
    event_type: input.eventType,
    actor: input.actor,
    payloadText,
    prev_hash: prevHash,
    created_at: createdAt,
  });
  return {
    chain_key: input.chainKey,
    seq,
    event_type: input.eventType,
    actor: input.actor,
    payload: payloadText,
    prev_hash: prevHash,
    hash,
    created_at: createdAt,
  };
}

/**
 * Appends one event inside the caller's transaction; serialised per chain by an advisory lock. (The pay
 * path writes wallet chains itself, under the wallet lock, with `buildAuditRow`.)
 */
export async function appendAuditEvent(
  trx: Knex.Transaction,
  input: AuditEventInput,
): Promise<{ seq: number; hash: string }> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 42))', [`audit:${input.chainKey}`]);
  const last = (await trx('audit_events')
    .where({ chain_key: input.chainKey })
    .orderBy('seq', 'desc')
    .first('seq', 'hash')) as AuditHead | undefined;
  const row = buildAuditRow(last ?? null, input);
  await trx('audit_events').insert(row);
  return { seq: row.seq, hash: row.hash };
}

export type AuditBreak = 'hash_mismatch' | 'prev_hash_mismatch' | 'sequence_gap' | 'anchor_mismatch' | 'anchor_missing';

export interface AuditVerification {
  chains: number;
  /** Rows read and checked: every row when the ledger is intact, up to and including the first broken one otherwise. */
  rows: number;
  ok: boolean;
  /**
   * The first row that does not hold, in (chain, seq) order. `anchor_mismatch`: the row at an anchored head
   * has another hash now; `anchor_missing`: the chain no longer reaches its anchored head (no `id` then; a
   * chain gone altogether is named after every other chain was read).
   */
  firstBroken?: { id?: string; chain_key: string; seq: number; reason: AuditBreak };
}

/** A chain's newest row, as `--heads-out` records it and `--heads-in` checks it. */
export interface ChainHead {
  chain_key: string;
  seq: number;
  hash: string;
}

export interface VerifyAuditOptions {
  /** Rows per query (default AUDIT_VERIFY_BATCH_ROWS). */
  batchRows?: number;
  /** Heads recorded by an earlier run, by chain key: each must still be in its chain, with the same hash. */
  anchors?: ReadonlyMap<string, { seq: number; hash: string }>;
  /** Called with each chain's head once the chain was read whole and held. */
  onHead?: (head: ChainHead) => void;
}

/** An audit row as verification reads it (STORED_AUDIT_COLUMNS): the stored payload as text, not as a value. */
export interface StoredAuditRow extends Omit<AuditRow, 'payload'> {
  /** `payload::text`: PostgreSQL's own spelling of the stored jsonb, every digit of its numbers kept. */
  payload_text: string;
  /** Whether created_at has no digits below the millisecond (the hash spells it to the millisecond). */
  created_at_in_ms: boolean;
}

/** The select list of StoredAuditRow: one query reads a page of rows and what the checks need of each. */
export const STORED_AUDIT_COLUMNS =
  "id, chain_key, seq, event_type, actor, prev_hash, hash, created_at, payload::text AS payload_text, created_at = date_trunc('milliseconds', created_at) AS created_at_in_ms";

/**
 * The hash of a stored row, or undefined when what is stored says more than any hash can cover: a created_at
 * below the millisecond, a number the parsed payload does not hold exactly (./stored-payload-numbers.ts).
 */
export function storedAuditHash(row: StoredAuditRow): string | undefined {
  if (row.created_at_in_ms !== true || !storedNumbersHold(row.payload_text)) return undefined;
  const payload = JSON.parse(row.payload_text) as Record<string, unknown>;
  try {
    return computeAuditHash({ ...row, seq: Number(row.seq), payload });
  } catch (err) {
    if (err instanceof CanonicalJsonError) return undefined;
    throw err;
  }
}

/**
 * Why `row` does not follow `head` (the chain's previous row, or seq 0 with the genesis hash), if it does not:
 * its seq, its link, its own hash (over what is stored: storedAuditHash), and at an anchored seq the anchored
 * hash.
 */
export function auditRowBreak(
  head: ChainHead,
  row: StoredAuditRow,
  anchor?: { seq: number; hash: string },
): AuditBreak | undefined {
  const seq = Number(row.seq);
  if (seq !== head.seq + 1) return 'sequence_gap';
  if (row.prev_hash !== head.hash) return 'prev_hash_mismatch';
  if (storedAuditHash(row) !== row.hash) return 'hash_mismatch';
  if (anchor && anchor.seq === seq && anchor.hash !== row.hash) return 'anchor_mismatch';
  return undefined;
}

/** Rows read per query by verifyAuditChain (keyset pages on the UNIQUE (chain_key, seq) index). */
export const AUDIT_VERIFY_BATCH_ROWS = 5_000;

/**
 * Recomputes every chain (or one) and reports the first row whose hash or link does not hold, or an anchored
 * head that no longer holds. The ledger is read in keyset pages of `batchRows` in (chain_key, seq) order, so
 * memory stays bounded however long the ledger grows (at 400 payments a second it gains 35 million rows a
 * day); anchors are held in memory, one entry per chain.
 */
export async function verifyAuditChain(
  knex: Knex,
  chainKey?: string,
  options: VerifyAuditOptions = {},
): Promise<AuditVerification> {
  const batchRows = Math.max(1, Math.floor(options.batchRows ?? AUDIT_VERIFY_BATCH_ROWS));
  const anchors = options.anchors ?? new Map<string, { seq: number; hash: string }>();
  let chains = 0;
  let rows = 0;
  let head: ChainHead | undefined;
  let anchor: { seq: number; hash: string } | undefined;
  /** Anchored chains the scan has read. */
  const met = new Set<string>();
  const result = (firstBroken?: AuditVerification['firstBroken']): AuditVerification =>
    firstBroken ? { chains, rows, ok: false, firstBroken } : { chains, rows, ok: true };
  /** The chain just read whole: it must still reach its anchored head. */
  const endOfChain = (): AuditVerification | undefined => {
    if (!head) return undefined;
    if (anchor) met.add(head.chain_key);
    if (anchor && anchor.seq > head.seq)
      return result({ chain_key: head.chain_key, seq: anchor.seq, reason: 'anchor_missing' });
    options.onHead?.(head);
    return undefined;
  };
  let after: { chainKey: string; seq: number } | undefined;
  for (;;) {
    const query = knex('audit_events')
      .select(knex.raw(STORED_AUDIT_COLUMNS))
      .orderBy([{ column: 'chain_key' }, { column: 'seq' }])
      .limit(batchRows);
    if (chainKey !== undefined) query.where({ chain_key: chainKey });
    if (after) query.whereRaw('(chain_key, seq) > (?, ?)', [after.chainKey, after.seq]);
    const page = (await query) as StoredAuditRow[];
    for (const row of page) {
      if (row.chain_key !== head?.chain_key) {
        const missing = endOfChain();
        if (missing) return missing;
        chains++;
        head = { chain_key: row.chain_key, seq: 0, hash: GENESIS_HASH };
        anchor = anchors.get(row.chain_key);
      }
      rows++;
      const reason = auditRowBreak(head, row, anchor);
      if (reason) return result({ id: String(row.id), chain_key: row.chain_key, seq: Number(row.seq), reason });
      head = { chain_key: row.chain_key, seq: Number(row.seq), hash: row.hash };
    }
    if (page.length < batchRows) break;
    const last = page[page.length - 1]!;
    after = { chainKey: last.chain_key, seq: Number(last.seq) };
  }
  const missing = endOfChain();
  if (missing) return missing;
  const gone = goneAnchor(anchors, chainKey, met);
  return gone ? result(gone) : result();
}

/**
 * The first anchored chain (in key order) that a verification never met: gone altogether. Only the named
 * chain's anchor counts when one chain was named.
 */
export function goneAnchor(
  anchors: ReadonlyMap<string, { seq: number; hash: string }>,
  chainKey: string | undefined,
  met: ReadonlySet<string>,
): AuditVerification['firstBroken'] {
  const gone = [...anchors.keys()]
    .filter((key) => (chainKey === undefined || key === chainKey) && !met.has(key))
    .sort()[0];
  return gone === undefined ? undefined : { chain_key: gone, seq: anchors.get(gone)!.seq, reason: 'anchor_missing' };
}
