/**
 * The pay admission's settings (src/api/config/pay-admission-config.ts): their defaults (below the signer's default
 * queue of 1,024), their bounds, and a tenant's share larger than the whole — each refused at start with
 * `config_invalid`, the variable named.
 */
import assert from 'node:assert/strict';
import { assertConfigRefused } from '../../support/config-refusal.js';
import { loadAppConfig } from '../../../src/api/config/app-config.js';

function refused(env: Record<string, string>, variable: string): void {
  assertConfigRefused(() => loadAppConfig(env), 'api', variable);
}

describe('pay admission configuration', () => {
  it('defaults to 256 payments at work, 64 of one tenant, 256 of its waiting, 4,096 waiting in all, 10 s of wait, 64 other signer calls, 32 chain reads', () => {
    assert.deepEqual(loadAppConfig({}).payAdmission, {
      inFlight: 256,
      inFlightPerAccount: 64,
      queuePerAccount: 256,
      queue: 4_096,
      queueWaitSeconds: 10,
      signerOtherInFlight: 64,
      chainReadsInFlight: 32,
    });
  });

  it('takes values within bounds, a share equal to the whole and no waiting at all included', () => {
    const config = loadAppConfig({
      TREASURY_PAY_IN_FLIGHT: '8',
      TREASURY_PAY_IN_FLIGHT_PER_ACCOUNT: '8',
      TREASURY_PAY_QUEUE_PER_ACCOUNT: '0',
      TREASURY_PAY_QUEUE: '0',
      TREASURY_PAY_QUEUE_WAIT_SECONDS: '300',
      TREASURY_SIGNER_OTHER_IN_FLIGHT: '1',
      TREASURY_CHAIN_READS_IN_FLIGHT: '10000',
    });
    assert.deepEqual(config.payAdmission, {
      inFlight: 8,
      inFlightPerAccount: 8,
      queuePerAccount: 0,
      queue: 0,
      queueWaitSeconds: 300,
      signerOtherInFlight: 1,
      chainReadsInFlight: 10_000,
    });
  });

  it('refuses values out of bounds', () => {
    refused({ TREASURY_PAY_IN_FLIGHT: '0' }, 'TREASURY_PAY_IN_FLIGHT');
    refused({ TREASURY_CHAIN_READS_IN_FLIGHT: '0' }, 'TREASURY_CHAIN_READS_IN_FLIGHT');
    refused({ TREASURY_CHAIN_READS_IN_FLIGHT: '10001' }, 'TREASURY_CHAIN_READS_IN_FLIGHT');
    refused({ TREASURY_PAY_IN_FLIGHT: '100001' }, 'TREASURY_PAY_IN_FLIGHT');
    refused({ TREASURY_PAY_IN_FLIGHT_PER_ACCOUNT: '0' }, 'TREASURY_PAY_IN_FLIGHT_PER_ACCOUNT');
    refused({ TREASURY_PAY_QUEUE_PER_ACCOUNT: '-1' }, 'TREASURY_PAY_QUEUE_PER_ACCOUNT');
    refused({ TREASURY_PAY_QUEUE: '1000001' }, 'TREASURY_PAY_QUEUE');
    refused({ TREASURY_PAY_QUEUE_WAIT_SECONDS: '0' }, 'TREASURY_PAY_QUEUE_WAIT_SECONDS');
    refused({ TREASURY_PAY_QUEUE_WAIT_SECONDS: '2.5' }, 'TREASURY_PAY_QUEUE_WAIT_SECONDS');
    refused({ TREASURY_SIGNER_OTHER_IN_FLIGHT: '0' }, 'TREASURY_SIGNER_OTHER_IN_FLIGHT');
  });

  it("refuses a tenant's share larger than the whole", () => {
    refused(
      { TREASURY_PAY_IN_FLIGHT: '16', TREASURY_PAY_IN_FLIGHT_PER_ACCOUNT: '17' },
      'TREASURY_PAY_IN_FLIGHT_PER_ACCOUNT',
    );
    refused({ TREASURY_PAY_IN_FLIGHT: '32' }, 'TREASURY_PAY_IN_FLIGHT_PER_ACCOUNT');
  });
});
