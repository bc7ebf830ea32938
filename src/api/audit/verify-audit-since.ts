/**
 * Verification from anchored heads (`audit:verify --heads-in FILE --since-heads`): each anchored chain is read
 * from its anchored row on, each other chain from its start. A full verification reads the whole ledger, which
 * at 400 payments a second gains 35 million rows a day (≈ 80,000 rows/s to verify); this reads what was
 * added since the heads were recorded, plus one row per anchored chain.
 *
 * Defends against, since the heads were recorded: a row added, edited or deleted after an anchored head; the
 * anchored row rewritten, even with its hash recomputed (its hash is recomputed from its contents, its link
 * included, and compared with the anchor); a chain cut short below its anchor or gone; and any break in a
 * chain that had no anchor. Does not defend against an edit to a row at or before an anchored head that
 * leaves that head's stored hash alone: nothing before the anchor is read. Run the full verification as
 * well, less often (the runbook: incremental hourly, full weekly).
 */
import type { Knex } from 'knex';
import {
  AUDIT_VERIFY_BATCH_ROWS,
  auditRowBreak,
  GENESIS_HASH,
  goneAnchor,
  STORED_AUDIT_COLUMNS,
  type AuditVerification,
  type ChainHead,
  type StoredAuditRow,
} from './audit-ledger.js';

export interface VerifyAuditSinceOptions {
  /** Only this chain (its anchor, if it has one, is the only one held to). */
  chainKey?: string | undefined;
  /** Rows per query (default AUDIT_VERIFY_BATCH_ROWS). */
  batchRows?: number;
  /** Called with each chain's head once the chain was read from its start or anchor and held. */
  onHead?: (head: ChainHead) => void;
}

/** Every chain key in order, one index descent per chain (a loose index scan on the UNIQUE (chain_key, seq) index). */
async function chainKeys(knex: Knex): Promise<string[]> {
  const { rows } = (await knex.raw(`
    WITH RECURSIVE k AS (
      (SELECT chain_key FROM audit_events ORDER BY chain_key LIMIT 1)
      UNION ALL
      SELECT (SELECT e.chain_key FROM audit_events e WHERE e.chain_key > k.chain_key ORDER BY e.chain_key LIMIT 1) FROM k WHERE k.chain_key IS NOT NULL
    )
    SELECT chain_key FROM k WHERE chain_key IS NOT NULL`)) as { rows: Array<{ chain_key: string }> };
  return rows.map((r) => r.chain_key);
}

export async function verifyAuditSince(
  knex: Knex,
  anchors: ReadonlyMap<string, { seq: number; hash: string }>,
  options: VerifyAuditSinceOptions = {},
): Promise<AuditVerification> {
  const batchRows = Math.max(1, Math.floor(options.batchRows ?? AUDIT_VERIFY_BATCH_ROWS));
  const keys = options.chainKey === undefined ? await chainKeys(knex) : [options.chainKey];
  let chains = 0;
  let rows = 0;
  const result = (firstBroken?: AuditVerification['firstBroken']): AuditVerification =>
    firstBroken ? { chains, rows, ok: false, firstBroken } : { chains, rows, ok: true };

  for (const chainKey of keys) {
    const anchor = anchors.get(chainKey);
    let head: ChainHead | undefined;
    for (let after = anchor ? anchor.seq - 1 : 0; ;) {
      const page = (await knex('audit_events')
        .select(knex.raw(STORED_AUDIT_COLUMNS))
        .where({ chain_key: chainKey })
        .andWhere('seq', '>', after)
        .orderBy('seq')
        .limit(batchRows)) as StoredAuditRow[];
      for (const row of page) {
        if (!head) {
          chains++;
          // The anchored row's own link is vouched for by its hash, which must equal the anchor.
          head = anchor
            ? { chain_key: chainKey, seq: anchor.seq - 1, hash: row.prev_hash }
            : { chain_key: chainKey, seq: 0, hash: GENESIS_HASH };
          if (anchor && Number(row.seq) !== anchor.seq)
            return result({ chain_key: chainKey, seq: anchor.seq, reason: 'anchor_missing' });
        }
        rows++;
        const reason = auditRowBreak(head, row, anchor);
        if (reason) return result({ id: String(row.id), chain_key: chainKey, seq: Number(row.seq), reason });
        head = { chain_key: chainKey, seq: Number(row.seq), hash: row.hash };
      }
      if (page.length < batchRows) break;
      after = Number(page[page.length - 1]!.seq);
    }
    // No row left from the anchor on: the chain was cut short below its anchored head.
    if (!head && anchor) return result({ chain_key: chainKey, seq: anchor.seq, reason: 'anchor_missing' });
    if (head) options.onHead?.(head);
  }
  // Anchored chains with no row at all are gone.
  const gone = goneAnchor(anchors, options.chainKey, new Set(keys));
  return gone ? result(gone) : result();
}
