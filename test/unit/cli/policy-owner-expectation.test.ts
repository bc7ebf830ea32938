/**
 * `xx wallet policy verify --expect-version N [--expect-hash 0x…]` (src/cli/commands/account/policy-receipt-check.ts):
 * the flags are read with bounded schemas (a version 1..2^48 in digits only, a hash of exactly 0x and 64 lower-case
 * hex digits, a hash only with a version) and refused as `invalid_argument` (exit 2) naming the flag; the comparison of
 * what the signer holds with the document the owner names says in_force, withheld or mismatch.
 */
import assert from 'node:assert/strict';
import {
  expectationStatus,
  ownerExpectationFromFlags,
} from '../../../src/cli/commands/account/policy-receipt-check.js';
import { CliError } from '../../../src/cli/core/cli-error.js';
import { MAX_POLICY_VERSION } from '../../../policy/signed-policy.js';

const HASH = `0x${'cd'.repeat(32)}`;
const OTHER = `0x${'ee'.repeat(32)}`;

function refusedFlag(flags: { expectVersion?: string; expectHash?: string }): string {
  try {
    ownerExpectationFromFlags(flags);
  } catch (err) {
    assert.ok(err instanceof CliError);
    assert.equal(err.code, 'invalid_argument');
    assert.equal(err.exitCode, 2);
    return String((err.details as { flag: string }).flag);
  }
  assert.fail(`accepted ${JSON.stringify(flags)}`);
}

describe('xx wallet policy verify: the document the owner names', () => {
  it('reads bounded flags, and nothing without them', () => {
    assert.equal(ownerExpectationFromFlags({}), undefined);
    assert.deepEqual(ownerExpectationFromFlags({ expectVersion: '2' }), { version: 2, policy_hash: null });
    assert.deepEqual(ownerExpectationFromFlags({ expectVersion: '7', expectHash: HASH }), {
      version: 7,
      policy_hash: HASH,
    });
    assert.deepEqual(ownerExpectationFromFlags({ expectVersion: String(MAX_POLICY_VERSION) }), {
      version: MAX_POLICY_VERSION,
      policy_hash: null,
    });
  });

  it('refuses values out of bounds, naming the flag', () => {
    for (const v of ['0', '-1', '1.5', '01', '1e3', ' 2', '0x10', '', String(MAX_POLICY_VERSION + 1), '9'.repeat(40)])
      assert.equal(refusedFlag({ expectVersion: v }), '--expect-version', v);
    for (const h of [
      HASH.toUpperCase().replace('0X', '0x'),
      HASH.slice(0, -2),
      `${HASH}00`,
      'cd'.repeat(32),
      `0x${'zz'.repeat(32)}`,
    ])
      assert.equal(refusedFlag({ expectVersion: '2', expectHash: h }), '--expect-hash', h);
    assert.equal(refusedFlag({ expectHash: HASH }), '--expect-hash');
  });

  it('compares what the signer holds with the named document', () => {
    const held = { version: 3, policy_hash: HASH };
    assert.equal(expectationStatus(held, { version: 3, policy_hash: HASH }), 'in_force');
    assert.equal(expectationStatus(held, { version: 3, policy_hash: null }), 'in_force');
    assert.equal(expectationStatus(held, { version: 3, policy_hash: OTHER }), 'mismatch');
    assert.equal(expectationStatus(held, { version: 2, policy_hash: null }), 'mismatch');
    assert.equal(expectationStatus(held, { version: 4, policy_hash: null }), 'withheld');
    assert.equal(
      expectationStatus({ version: null, policy_hash: null }, { version: 1, policy_hash: HASH }),
      'withheld',
    );
  });
});
