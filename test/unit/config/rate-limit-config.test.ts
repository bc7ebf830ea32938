/** Rate-limit settings as configured: strict defaults, on unless turned off, and refusal of bad values. */
import assert from 'node:assert/strict';
import { loadAppConfig } from '../../../src/api/config/app-config.js';

describe('app config: rate limits', () => {
  it('defaults: on, per 60 s window 30 nonces, 10 sign-ins and 120 catalogue reads per address, 1,200 calls and 100,000 payments per token, 6,000 calls per account, 60 policy writes per account, 60 refused bearers per address and 10 per presented bearer; no trusted proxy', () => {
    const config = loadAppConfig({});
    assert.deepEqual(config.rateLimits, {
      enabled: true,
      windowSeconds: 60,
      nonce: 30,
      init: 10,
      token: 1200,
      account: 6000,
      pay: 100_000,
      pay_account: 100_000,
      policy: 60,
      receipt: 60,
      discovery: 120,
      auth_failure: 60,
      auth_failure_token: 10,
    });
    assert.deepEqual(config.trustedProxies, []);
  });

  it('reads each variable; TREASURY_RATE_LIMITS=off turns them off', () => {
    const config = loadAppConfig({
      TREASURY_RATE_LIMITS: 'off',
      TREASURY_RATE_LIMIT_WINDOW_SECONDS: '10',
      TREASURY_RATE_LIMIT_NONCE: '5',
      TREASURY_RATE_LIMIT_INIT: '2',
      TREASURY_RATE_LIMIT_TOKEN: '50',
      TREASURY_RATE_LIMIT_ACCOUNT: '80',
      TREASURY_RATE_LIMIT_PAY: '500',
      TREASURY_RATE_LIMIT_PAY_ACCOUNT: '600',
      TREASURY_RATE_LIMIT_DISCOVERY: '9',
      TREASURY_RATE_LIMIT_POLICY: '4',
      TREASURY_RATE_LIMIT_RECEIPT: '6',
      TREASURY_RATE_LIMIT_AUTH_FAILURES: '7',
      TREASURY_RATE_LIMIT_AUTH_FAILURES_PER_TOKEN: '3',
      TREASURY_TRUSTED_PROXIES: '10.0.0.0/8',
    });
    assert.deepEqual(config.rateLimits, {
      enabled: false,
      windowSeconds: 10,
      nonce: 5,
      init: 2,
      token: 50,
      account: 80,
      pay: 500,
      pay_account: 600,
      policy: 4,
      receipt: 6,
      discovery: 9,
      auth_failure: 7,
      auth_failure_token: 3,
    });
    assert.equal(config.trustedProxies.length, 1);
  });

  it('refuses zero, negative, fractional and non-numeric limits, naming the variable', () => {
    for (const value of ['0', '-1', '1.5', 'many']) {
      assert.throws(
        () => loadAppConfig({ TREASURY_RATE_LIMIT_NONCE: value }),
        /invalid configuration: TREASURY_RATE_LIMIT_NONCE/,
        value,
      );
    }
    assert.throws(() => loadAppConfig({ TREASURY_RATE_LIMITS: 'no' }), /TREASURY_RATE_LIMITS/);
    assert.throws(() => loadAppConfig({ TREASURY_TRUSTED_PROXIES: 'a.b.c.d' }), /TREASURY_TRUSTED_PROXIES/);
  });
});
