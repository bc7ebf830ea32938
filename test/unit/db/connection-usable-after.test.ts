/**
 * When a PostgreSQL connection goes back to use after an error: statement errors and the service's own
 * errors keep it; network errors, FATAL answers and unknown errors drop it.
 */
import assert from 'node:assert/strict';
import { databaseError } from '../../builders/database-error.js';
import { connectionUsableAfter } from '../../../src/api/db/connection-usable-after.js';
import { AppError } from '../../../src/api/errors/app-error.js';

describe('connectionUsableAfter', () => {
  it('keeps the connection after a statement error or one of ours', () => {
    assert.equal(connectionUsableAfter(databaseError('ERROR', '23505')), true, 'unique violation');
    assert.equal(connectionUsableAfter(new AppError('nonce_already_used')), true);
  });

  it('drops it after a network error, a FATAL answer or anything unknown', () => {
    assert.equal(connectionUsableAfter(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })), false);
    assert.equal(connectionUsableAfter(databaseError('FATAL', '57P01')), false, 'terminated by an administrator');
    assert.equal(
      connectionUsableAfter(new Error('Client has encountered a connection error and is not queryable')),
      false,
    );
    assert.equal(connectionUsableAfter(undefined), false);
  });
});
