/**
 * An audit row's hash and stored payload text (src/api/audit/audit-hash.ts) against the spelling every row
 * already written was hashed with: SHA-256 over the previous hash, a newline and canonicalJson of the row. Over
 * the hostile-input table (as payload values, nested values and, parsed from JSON, as keys such as
 * `__proto__`), the payload text equals canonicalJson's and the hash equals the one spelled out here, so
 * chains written before verify, and rows written now verify with the same verifier.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { canonicalJson } from '../../../base/canonical-json.js';
import { canonicalPayloadText } from '../../../src/api/audit/audit-hash.js';
import { buildAuditRow, computeAuditHash, GENESIS_HASH } from '../../../src/api/audit/audit-ledger.js';

const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
) as Record<string, unknown>;
const values: unknown[] = Object.entries(hostile)
  .filter(([name]) => name !== 'about' && name !== 'notes')
  .flatMap(([, list]) => (Array.isArray(list) ? list : []));

/** The hash as every row so far was written: canonicalJson of the row after its previous hash and a newline. */
function referenceHash(row: {
  chain_key: string;
  seq: number;
  event_type: string;
  actor: string;
  payload: Record<string, unknown>;
  prev_hash: string;
  created_at: Date;
}): string {
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

/** Payloads built from one hostile value: as a value, nested, in an array, and under hostile keys parsed from JSON. */
function payloadsOf(v: unknown): Array<Record<string, unknown>> {
  const asKey = typeof v === 'string' ? v : JSON.stringify(v);
  return [
    { value: v },
    { b: 1, a: v, nested: { z: v, y: [v, { x: v }] } },
    { when: new Date('2026-11-29T07:00:00.123Z'), gone: undefined, value: v },
    JSON.parse(`{"__proto__":{"admin":true},${JSON.stringify(asKey)}:1,"constructor":{"prototype":{"x":1}}}`),
    Object.assign(Object.create(null) as Record<string, unknown>, { z: v, a: null }),
  ];
}

describe('audit row hash', () => {
  it('writes the payload as canonicalJson does, for every hostile value', () => {
    assert.ok(values.length > 20, 'the hostile-input table was read');
    for (const v of values)
      for (const payload of payloadsOf(v)) assert.equal(canonicalPayloadText(payload), canonicalJson(payload));
  });

  it('hashes a row as every row already written was hashed, and stores the text it hashed', () => {
    let head: { seq: number; hash: string } | null = null;
    for (const v of values) {
      for (const payload of payloadsOf(v)) {
        const at = new Date(Date.UTC(2026, 10, 29, 7, 0, 0, values.indexOf(v)));
        const input = {
          chainKey: 'w_chain',
          eventType: 'payment.reserved',
          actor: String(v).slice(0, 64),
          payload,
          at,
        };
        const row = buildAuditRow(head, input);
        const reference: Parameters<typeof referenceHash>[0] = {
          chain_key: 'w_chain',
          seq: head ? head.seq + 1 : 1,
          event_type: 'payment.reserved',
          actor: input.actor,
          payload,
          prev_hash: head ? head.hash : GENESIS_HASH,
          created_at: at,
        };
        assert.equal(row.hash, referenceHash(reference));
        assert.equal(row.payload, canonicalJson(payload));
        // The verifier's view: the row read back, its payload parsed from the stored text.
        const readBack = { ...reference, payload: JSON.parse(row.payload) as Record<string, unknown> };
        assert.equal(computeAuditHash(readBack), row.hash);
        head = { seq: row.seq, hash: row.hash };
      }
    }
  });
});
