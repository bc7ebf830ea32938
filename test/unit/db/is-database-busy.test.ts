/**
 * Which errors answer 503 `database_busy` (a statement PostgreSQL cancelled under the API's session limits:
 * a lock waited for too long, a statement ran too long) and which stay what they are.
 */
import assert from 'node:assert/strict';
import { databaseError } from '../../builders/database-error.js';
import { isDatabaseBusy } from '../../../src/api/db/is-database-busy.js';
import { isDatabaseUnavailable } from '../../../src/api/db/is-database-unavailable.js';
import { ReservationBatchAborted } from '../../../src/api/pay/store/reservation-writer.js';

describe('isDatabaseBusy', () => {
  it('a lock wait past lock_timeout and a statement past statement_timeout, also as the cause of a refused write', () => {
    assert.equal(isDatabaseBusy(databaseError('ERROR', '55P03')), true, 'lock_not_available');
    assert.equal(isDatabaseBusy(databaseError('ERROR', '57014')), true, 'query_canceled');
    assert.equal(
      isDatabaseBusy(new ReservationBatchAborted(databaseError('ERROR', '55P03'))),
      true,
      'a shared statement cancelled',
    );
    assert.equal(isDatabaseBusy(new AggregateError([databaseError('ERROR', '57014')], 'x')), true);
  });

  it('not a statement PostgreSQL refused for what it said, nor the database out of reach, nor our own errors', () => {
    for (const code of ['23505', '23514', '40001', '42P01', '22P02'])
      assert.equal(isDatabaseBusy(databaseError('ERROR', code)), false, code);
    const ended = databaseError('FATAL', '57P01');
    assert.equal(isDatabaseBusy(ended), false, 'a session ended is database_unavailable');
    assert.equal(isDatabaseUnavailable(ended), true);
    assert.equal(isDatabaseUnavailable(databaseError('ERROR', '55P03')), false, 'and a lock time-out is not');
    assert.equal(isDatabaseBusy(new Error('lock timeout')), false, 'words are not a code');
    assert.equal(isDatabaseBusy(undefined), false);
  });
});
