/**
 * The API's database session limits as configured: defaults a payment path can live with, 0 to leave the
 * server's setting, and a clear refusal of values that are not whole milliseconds in range; how long an idle
 * pooled connection stays open; how long a Solana blockhash is reused; where /metrics is served.
 */
import assert from 'node:assert/strict';
import { loadAppConfig } from '../../../src/api/config/app-config.js';

/** Each of `values` for `variable` is refused at load, with the variable named. */
function refusesEach(variable: string, values: readonly string[]): void {
  for (const value of values) {
    assert.throws(
      () => loadAppConfig({ [variable]: value }),
      (err: unknown) => err instanceof Error && err.message.includes(`invalid configuration: ${variable}`),
      value,
    );
  }
}

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
    refusesEach('TREASURY_DB_LOCK_TIMEOUT_MS', ['-1', '1.5', '600001', 'ten', '1e9']);
  });
});

describe('app config: idle pooled connections', () => {
  it('stay open five minutes by default, as configured otherwise, from 1 s to a day', () => {
    assert.equal(loadAppConfig({}).dbPoolIdleMs, 300_000);
    assert.equal(loadAppConfig({ TREASURY_DB_POOL_IDLE_MS: '1000' }).dbPoolIdleMs, 1_000);
    refusesEach('TREASURY_DB_POOL_IDLE_MS', ['0', '999', '86400001', '2.5', 'soon']);
  });
});

describe('app config: the Solana blockhash reuse', () => {
  it('is two seconds by default, as configured otherwise, from 0 (a read per payment) to 20 s', () => {
    assert.equal(loadAppConfig({}).solanaBlockhashMaxAgeMs, 2_000);
    assert.equal(loadAppConfig({ TREASURY_SOLANA_BLOCKHASH_MAX_AGE_MS: '0' }).solanaBlockhashMaxAgeMs, 0);
    assert.equal(loadAppConfig({ TREASURY_SOLANA_BLOCKHASH_MAX_AGE_MS: '20000' }).solanaBlockhashMaxAgeMs, 20_000);
    refusesEach('TREASURY_SOLANA_BLOCKHASH_MAX_AGE_MS', ['-1', '20001', '1.5', 'often']);
  });
});

describe('app config: the metrics listener', () => {
  it("is none by default (/metrics on the API's listener); TREASURY_METRICS_PORT gives one, on 127.0.0.1 unless told", () => {
    assert.equal(loadAppConfig({}).metricsListener, undefined);
    assert.deepEqual(loadAppConfig({ TREASURY_METRICS_PORT: '9464' }).metricsListener, {
      host: '127.0.0.1',
      port: 9464,
    });
    const config = loadAppConfig({ TREASURY_METRICS_PORT: '9464', TREASURY_METRICS_HOST: '0.0.0.0' });
    assert.deepEqual(config.metricsListener, { host: '0.0.0.0', port: 9464 });
    refusesEach('TREASURY_METRICS_PORT', ['0', '65536', 'nine']);
  });

  it('refuses a port together with TREASURY_METRICS_ON_PUBLIC_LISTENER=1 (they say opposite things)', () => {
    assert.throws(
      () => loadAppConfig({ TREASURY_METRICS_PORT: '9464', TREASURY_METRICS_ON_PUBLIC_LISTENER: '1' }),
      (err: unknown) =>
        err instanceof Error && err.message.includes('invalid configuration: TREASURY_METRICS_ON_PUBLIC_LISTENER'),
    );
  });
});
