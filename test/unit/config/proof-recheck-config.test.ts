/**
 * TREASURY_PROOF_RECHECK_SECONDS and TREASURY_PROOF_GRACE_SECONDS (src/api/config/proof-recheck-config.ts): their
 * defaults, their bounds, and a grace shorter than the interval — each refused at start with `config_invalid`, the
 * variable named.
 */
import assert from 'node:assert/strict';
import { assertConfigRefused } from '../../support/config-refusal.js';
import { loadAppConfig } from '../../../src/api/config/app-config.js';

function refused(env: Record<string, string>, variable: string): void {
  assertConfigRefused(() => loadAppConfig(env), 'api', variable);
}

describe('proof re-check configuration', () => {
  it('defaults to a day between re-checks and a week of grace', () => {
    assert.deepEqual(loadAppConfig({}).proofRecheck, { intervalSeconds: 86_400, graceSeconds: 604_800 });
  });

  it('takes values within bounds, a grace equal to the interval included', () => {
    const config = loadAppConfig({ TREASURY_PROOF_RECHECK_SECONDS: '3600', TREASURY_PROOF_GRACE_SECONDS: '3600' });
    assert.deepEqual(config.proofRecheck, { intervalSeconds: 3600, graceSeconds: 3600 });
  });

  it('refuses values out of bounds', () => {
    refused({ TREASURY_PROOF_RECHECK_SECONDS: '59' }, 'TREASURY_PROOF_RECHECK_SECONDS');
    refused({ TREASURY_PROOF_RECHECK_SECONDS: '2592001' }, 'TREASURY_PROOF_RECHECK_SECONDS');
    refused({ TREASURY_PROOF_RECHECK_SECONDS: '1e3x' }, 'TREASURY_PROOF_RECHECK_SECONDS');
    refused({ TREASURY_PROOF_GRACE_SECONDS: '0' }, 'TREASURY_PROOF_GRACE_SECONDS');
    refused({ TREASURY_PROOF_GRACE_SECONDS: '7776001' }, 'TREASURY_PROOF_GRACE_SECONDS');
  });

  it('refuses a grace below the interval', () => {
    refused({ TREASURY_PROOF_GRACE_SECONDS: '3600' }, 'TREASURY_PROOF_GRACE_SECONDS');
    refused(
      { TREASURY_PROOF_RECHECK_SECONDS: '7200', TREASURY_PROOF_GRACE_SECONDS: '7199' },
      'TREASURY_PROOF_GRACE_SECONDS',
    );
  });
});
