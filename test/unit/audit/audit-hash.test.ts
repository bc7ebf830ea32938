/**
 * An audit row's hash and stored payload text (src/api/audit/audit-hash.ts) against the spelling every row
 * already written was hashed with: SHA-256 over the previous hash, a newline and canonical JSON of the row as
 * base/canonical-json.ts wrote it then (copied here, `earlierCanonicalJson`). Over the hostile-input table (as
 * payload values, nested values and, parsed from JSON, as keys), the payload text equals canonicalJson's and
 * the hash equals the one spelled out here, so chains written before verify, and rows written now verify with
 * the same verifier. The two spellings part only on a `__proto__` key (the earlier one dropped it) and on
 * NaN and ±Infinity (it wrote null): a payload holding either is refused at write.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { canonicalJson, CanonicalJsonError } from '../../../base/canonical-json.js';
import { AuditPayloadError, canonicalPayloadText } from '../../../src/api/audit/audit-hash.js';
import { buildAuditRow, computeAuditHash, GENESIS_HASH } from '../../../src/api/audit/audit-ledger.js';
import { earlierCanonicalJson } from '../../support/earlier-canonical-json.js';
import { holdsProtoKey, hostileJsonValues } from '../../support/hostile-json-values.js';

const values = hostileJsonValues;

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
  const body = earlierCanonicalJson({
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
    let written = 0;
    for (const v of values) {
      for (const payload of payloadsOf(v)) {
        if (holdsProtoKey(payload)) continue;
        written++;
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
        assert.equal(row.payload, earlierCanonicalJson(payload));
        // The verifier's view: the row read back, its payload parsed from the stored text.
        const readBack = { ...reference, payload: JSON.parse(row.payload) as Record<string, unknown> };
        assert.equal(computeAuditHash(readBack), row.hash);
        head = { seq: row.seq, hash: row.hash };
      }
    }
    assert.ok(written > 3 * values.length, `${written} rows written`);
  });

  it('refuses at write a payload whose hash the earlier spelling would have written otherwise', () => {
    const write = (payload: Record<string, unknown>) =>
      buildAuditRow(null, { chainKey: 'w_chain', eventType: 'payment.reserved', actor: 'agent', payload });
    const refusedKey = (err: unknown) => err instanceof AuditPayloadError && err.details.reason === 'proto_key';
    for (const text of [
      '{"__proto__":{"admin":true},"a":1}',
      '{"__proto__":1}',
      '{"a":{"b":[{"__proto__":null}]}}',
      '{"z":[1,{"__proto__":{}}]}',
    ])
      assert.throws(() => write(JSON.parse(text) as Record<string, unknown>), refusedKey, text);
    const nested: Record<string, unknown> = {};
    Object.defineProperty(nested, '__proto__', { value: 'x', enumerable: true });
    assert.throws(() => write({ nested }), refusedKey);
    for (const [payload, path] of [
      [{ a: Infinity }, ['a']],
      [{ b: 1, a: [1, { x: NaN }] }, ['a', 1, 'x']],
      [JSON.parse('{"reason":1e400}') as Record<string, unknown>, ['reason']],
      [{ z: { y: -Infinity } }, ['z', 'y']],
    ] as const)
      assert.throws(
        () => write(payload),
        (err: unknown) => err instanceof CanonicalJsonError && assert.deepEqual(err.details.path, path) === undefined,
      );
    // A key, string or nested text that only looks like one is written as before.
    for (const payload of [
      { note: '{"__proto__":1}', 'x"__proto__': 1, proto: { __proto_: 1 } },
      { list: ['__proto__', ',"__proto__":'] },
    ]) {
      const row = write(payload);
      assert.equal(row.payload, earlierCanonicalJson(payload));
    }
  });
});
