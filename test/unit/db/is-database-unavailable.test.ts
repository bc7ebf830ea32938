/**
 * Which errors answer 503 `database_unavailable` (PostgreSQL out of reach: refused, restarting, connection
 * dropped, pool waiting too long) and which stay what they are (a statement PostgreSQL refused, our own errors).
 */
import assert from 'node:assert/strict';
import { databaseError } from '../../builders/database-error.js';
import { isDatabaseUnavailable } from '../../../src/api/db/is-database-unavailable.js';
import { AppError } from '../../../src/api/errors/app-error.js';

const networkError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code });

describe('isDatabaseUnavailable', () => {
  it('PostgreSQL ending the session, shutting down, starting up or refusing connections', () => {
    assert.equal(isDatabaseUnavailable(databaseError('FATAL', '57P01')), true, 'terminated by an administrator');
    assert.equal(isDatabaseUnavailable(databaseError('FATAL', '55000')), true, 'database not accepting connections');
    assert.equal(isDatabaseUnavailable(databaseError('FATAL', '53300')), true, 'too many connections');
    assert.equal(isDatabaseUnavailable(databaseError('ERROR', '57P03')), true, 'the server is starting up');
    assert.equal(isDatabaseUnavailable(databaseError('ERROR', '08006')), true, 'connection failure');
  });

  it('the network, node-postgres losing its connection, the pool timing out, and any of these as a cause', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'])
      assert.equal(isDatabaseUnavailable(networkError(code)), true, code);
    assert.equal(
      isDatabaseUnavailable(new AggregateError([networkError('ECONNREFUSED')], 'connect failed')),
      true,
      'both address families refused',
    );
    assert.equal(isDatabaseUnavailable(new Error('Connection terminated unexpectedly')), true);
    assert.equal(
      isDatabaseUnavailable(
        new Error('select "id" from "api_tokens" where "token_hash" = $1 - Connection terminated unexpectedly'),
      ),
      true,
      'as knex words it',
    );
    assert.equal(
      isDatabaseUnavailable(new Error('Client has encountered a connection error and is not queryable')),
      true,
    );
    assert.equal(
      isDatabaseUnavailable(
        Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), {
          name: 'KnexTimeoutError',
        }),
      ),
      true,
    );
    assert.equal(
      isDatabaseUnavailable(
        new Error('the statement holding this write failed', { cause: databaseError('FATAL', '57P01') }),
      ),
      true,
    );
  });

  it('not a statement PostgreSQL refused, not our own errors, not anything else', () => {
    assert.equal(isDatabaseUnavailable(databaseError('ERROR', '23505')), false, 'unique violation');
    assert.equal(isDatabaseUnavailable(databaseError('ERROR', '40P01')), false, 'deadlock');
    assert.equal(isDatabaseUnavailable(databaseError('ERROR', '57014')), false, 'statement cancelled');
    assert.equal(isDatabaseUnavailable(new AppError('wallet_not_found')), false);
    assert.equal(isDatabaseUnavailable(new Error('boom')), false);
    assert.equal(isDatabaseUnavailable(Object.assign(new Error('no such file'), { code: 'ENOENT' })), false);
    assert.equal(isDatabaseUnavailable(undefined), false);
    assert.equal(isDatabaseUnavailable('Connection terminated'), false, 'a string is not an error');
    assert.equal(
      isDatabaseUnavailable(new Error('wallet label "Connection terminated" is taken')),
      false,
      'the words inside another message',
    );
  });

  it('a cause chain that loops ends', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    assert.equal(isDatabaseUnavailable(a), false);
  });
});
