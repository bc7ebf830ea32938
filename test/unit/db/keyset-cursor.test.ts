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
    ]) {
      assert.throws(
        () => decodeKeysetCursor(cursor, WALLET_ID),
        (err: unknown) => err instanceof AppError && err.code === 'invalid_request',
        cursor,
      );
    }
  });
});
