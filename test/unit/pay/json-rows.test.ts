/**
 * The JSON documents the pay path's multi-row statements send (one per table, read by jsonb_to_recordset):
 * every value exactly as JSON says it, a Date as its ISO string, a jsonb column's JSON text embedded as
 * JSON (an object, not a string) and any other jsonb value serialised, null for null and undefined.
 */
import assert from 'node:assert/strict';
import { jsonRows, recordsetColumns } from '../../../src/api/pay/store/json-rows.js';

describe('jsonRows', () => {
  const columns = ['id', 'amount', 'payload', 'note', 'at'];
  const types = ['text', 'bigint', 'jsonb', 'text', 'timestamptz'];

  it('writes one object per row, keyed by column, with jsonb values embedded as JSON', () => {
    const at = new Date('2026-11-23T10:00:00.123Z');
    const text = jsonRows(columns, types, [
      ['a', '12345678901234567890', '{"k":[1,2,{"x":null}]}', 'quote " backslash \\ newline \n unicode ü€😀', at],
      ['b', 7, '"just a string"', null, at],
    ]);
    assert.deepEqual(JSON.parse(text), [
      {
        id: 'a',
        amount: '12345678901234567890',
        payload: { k: [1, 2, { x: null }] },
        note: 'quote " backslash \\ newline \n unicode ü€😀',
        at: '2026-11-23T10:00:00.123Z',
      },
      { id: 'b', amount: 7, payload: 'just a string', note: null, at: '2026-11-23T10:00:00.123Z' },
    ]);
  });

  it('serialises a jsonb value given as an object (the pay path hands over the payment, not its text)', () => {
    const payload = { signature: '0xab', nested: { list: [1, 'two', null], quote: '"q"' } };
    assert.deepEqual(JSON.parse(jsonRows(columns, types, [['d', 1, payload, null, null]])), [
      { id: 'd', amount: 1, payload, note: null, at: null },
    ]);
  });

  it('writes null for a missing value, an empty array for no rows', () => {
    assert.deepEqual(JSON.parse(jsonRows(columns, types, [['c']])), [
      { id: 'c', amount: null, payload: null, note: null, at: null },
    ]);
    assert.equal(jsonRows(columns, types, []), '[]');
  });

  it('names each column with its type for the recordset', () => {
    assert.equal(recordsetColumns(columns, types), 'id text, amount bigint, payload jsonb, note text, at timestamptz');
  });
});
