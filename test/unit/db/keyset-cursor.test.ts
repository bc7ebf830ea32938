import assert from 'node:assert/strict';
import { decodeKeysetCursor, encodeKeysetCursor } from '../../../src/api/db/keyset-cursor.js';
import { AppError } from '../../../src/api/errors/app-error.js';

const WALLET_ID = /^wal_[0-9a-f]{24}$/;
const id = `wal_${'0a'.repeat(12)}`;

describe('keyset page cursors', () => {
  it('name the position they were made from, to the millisecond, in URL-safe characters', () => {
    const at = new Date('2026-11-25T09:41:07.123Z');
    const cursor = encodeKeysetCursor({ at, id });
    assert.match(cursor, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeKeysetCursor(cursor, WALLET_ID), { at, id });
  });

  it('refuse what they did not make, with invalid_request', () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64url');
    for (const cursor of [
      '',
      'x',
      b64('2026-11-25T09:41:07.123Z'),
      b64(`2026-11-25T09:41:07.123Z|led_${'0a'.repeat(12)}`),
      b64(`not a time|${id}`),
      b64(`2026-11-25T09:41:07.123Z|${id}|extra`),
      b64(`|${id}`),
      // Times PostgreSQL's timestamptz cannot hold (JavaScript's dates reach year ±275,760): an error of the query, before.
      b64(`-100000-01-01T00:00:00.000Z|${id}`),
      b64(`+200000-01-01T00:00:00.000Z|${id}`),
      // Times this service never writes: before 1970, or not in its own spelling (no milliseconds, an offset, a date alone).
      b64(`1969-12-31T23:59:59.999Z|${id}`),
      b64(`2026-11-25T09:41:07Z|${id}`),
      b64(`2026-11-25T10:41:07.123+01:00|${id}`),
      b64(`2026-11-25|${id}`),
    ]) {
      assert.throws(
        () => decodeKeysetCursor(cursor, WALLET_ID),
        (err: unknown) => err instanceof AppError && err.code === 'invalid_request',
        cursor,
      );
    }
  });

  it('take the earliest and the latest time they may name', () => {
    for (const at of [new Date(0), new Date('9999-12-31T23:59:59.999Z')]) {
      assert.deepEqual(decodeKeysetCursor(encodeKeysetCursor({ at, id }), WALLET_ID), { at, id });
    }
  });
});
