/**
 * A signer refusal crosses into the API as fields (src/api/signing/signer-gateway.ts): the rule and limit
 * come from the reply's `details`, never from its message — a message that names another rule, or none,
 * changes nothing — and the signer's error stays reachable as the AppError's cause (`walk`).
 */
import assert from 'node:assert/strict';
import { SignerError, type SignerClient } from '../../../signer/protocol/signer-client.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import { SignerGateway } from '../../../src/api/signing/signer-gateway.js';

function gatewayFailingWith(err: Error): SignerGateway {
  const client = { call: () => Promise.reject(err), close: () => undefined } as unknown as SignerClient;
  return new SignerGateway(client, createTreasuryMetrics());
}

async function refusal(err: Error): Promise<AppError> {
  try {
    await gatewayFailingWith(err).call('health', {} as never);
  } catch (thrown) {
    assert.ok(thrown instanceof AppError);
    return thrown;
  }
  assert.fail('the call did not fail');
}

describe('signer gateway: refusals as fields', () => {
  it('invariant_violation: `rule` is details.rule, whatever the message says', async () => {
    const signerError = new SignerError('invariant_violation', 'value_max: prose that names another rule', {
      rule: 'window_max',
    });
    const err = await refusal(signerError);
    assert.equal(err.code, 'signer_refused');
    assert.equal(err.status, 403);
    assert.deepEqual(err.details, { rule: 'window_max' });
    assert.equal(
      err.walk((e): e is SignerError => e instanceof SignerError),
      signerError,
    );
  });

  it('invariant_violation without details: rule null (nothing is recovered from the message)', async () => {
    const err = await refusal(new SignerError('invariant_violation', 'allowed_token: token not allowed'));
    assert.deepEqual(err.details, { rule: null });
  });

  it('the per-signature maximum names its limit and max from details', async () => {
    const err = await refusal(
      new SignerError('invariant_violation', 'over', { rule: 'value_max', limit: 'per_signature', max: '5000000' }),
    );
    assert.deepEqual(err.details, { rule: 'value_max', limit: 'per_signature', max: '5000000' });
  });

  it('limit_exceeded: limit, max, headroom, window and Retry-After from details', async () => {
    const err = await refusal(
      new SignerError('limit_exceeded', 'no numbers here', {
        limit: 'wallet_amount_day',
        max: '100',
        headroom: '7',
        window_seconds: 86_400,
        retry_after_seconds: 60,
      }),
    );
    assert.equal(err.code, 'signer_limit_exceeded');
    assert.deepEqual(err.details, {
      limit: 'wallet_amount_day',
      max: '100',
      headroom: '7',
      window_seconds: 86_400,
      retry_after_seconds: 60,
    });
    assert.deepEqual(err.headers, { 'Retry-After': '60' });
  });

  it('key_destruction_not_allowed: 409 of the same name, its rule and version from details', async () => {
    const err = await refusal(
      new SignerError('key_destruction_not_allowed', 'prose naming version 9', {
        rule: 'owner_policy',
        current_version: 4,
      }),
    );
    assert.equal(err.code, 'key_destruction_not_allowed');
    assert.equal(err.status, 409);
    assert.deepEqual(err.details, { rule: 'owner_policy', current_version: 4, next_version: 5 });
    assert.ok(err.walk((e): e is SignerError => e instanceof SignerError));
  });
});
