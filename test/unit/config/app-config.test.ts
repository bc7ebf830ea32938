/**
 * The API's database session limits as configured: defaults a payment path can live with, 0 to leave the
 * server's setting, and a clear refusal of values that are not whole milliseconds in range; and how long an idle
 * pooled connection stays open.
 */
import assert from 'node:assert/strict';
import { loadAppConfig } from '../../../src/api/config/app-config.js';

describe('app config: database session limits', () => {
  it('defaults: a lock waited for at most 5 s, a statement at most 10 s, a transaction left idle ended after 60 s', () => {
    assert.deepEqual(loadAppConfig({}).dbSessionLimits, {
      statementTimeoutMs: 10_000,
      lockTimeoutMs: 5_000,
      idleInTransactionTimeoutMs: 60_000,
    });
  });

  it('reads each variable; 0 leaves the server its own setting', () => {
    const config = loadAppConfig({
      TREASURY_DB_LOCK_TIMEOUT_MS: '250',
      TREASURY_DB_STATEMENT_TIMEOUT_MS: '0',
      TREASURY_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '120000',
    });
    assert.deepEqual(config.dbSessionLimits, {
      statementTimeoutMs: 0,
      lockTimeoutMs: 250,
      idleInTransactionTimeoutMs: 120_000,
    });
  });

  it('refuses negative, fractional, oversized and non-numeric values, naming the variable', () => {
    for (const value of ['-1', '1.5', '600001', 'ten', '1e9']) {
      assert.throws(
        () => loadAppConfig({ TREASURY_DB_LOCK_TIMEOUT_MS: value }),
        /invalid configuration: TREASURY_DB_LOCK_TIMEOUT_MS/,
        value,
      );
    }
  });
});

describe('app config: idle pooled connections', () => {
  it('stay open five minutes by default, as configured otherwise, from 1 s to a day', () => {
    assert.equal(loadAppConfig({}).dbPoolIdleMs, 300_000);
    assert.equal(loadAppConfig({ TREASURY_DB_POOL_IDLE_MS: '1000' }).dbPoolIdleMs, 1_000);
    for (const value of ['0', '999', '86400001', '2.5', 'soon']) {
      assert.throws(
        () => loadAppConfig({ TREASURY_DB_POOL_IDLE_MS: value }),
        /invalid configuration: TREASURY_DB_POOL_IDLE_MS/,
        value,
      );
    }
  });
});

describe('app config: the Solana blockhash reuse', () => {
  it('is two seconds by default, as configured otherwise, from 0 (a read per payment) to 20 s', () => {
    assert.equal(loadAppConfig({}).solanaBlockhashMaxAgeMs, 2_000);
    assert.equal(loadAppConfig({ TREASURY_SOLANA_BLOCKHASH_MAX_AGE_MS: '0' }).solanaBlockhashMaxAgeMs, 0);
    assert.equal(loadAppConfig({ TREASURY_SOLANA_BLOCKHASH_MAX_AGE_MS: '20000' }).solanaBlockhashMaxAgeMs, 20_000);
    for (const value of ['-1', '20001', '1.5', 'often']) {
      assert.throws(
        () => loadAppConfig({ TREASURY_SOLANA_BLOCKHASH_MAX_AGE_MS: value }),
        /invalid configuration: TREASURY_SOLANA_BLOCKHASH_MAX_AGE_MS/,
        value,
      );
    }
  });
});
