/**
 * The base error shape every process shares (base/base-error.ts): code, details as fields, the cause
 * chain, and `walk()` — and that the API's, the signer's and the shipped packages' errors have it.
 */
import assert from 'node:assert/strict';
import { BaseError } from '../../../base/base-error.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { SignerFault } from '../../../signer/signer-error.js';
import { SignerError } from '../../../signer/protocol/signer-client.js';
import { CliError } from '../../../src/cli/core/cli-error.js';
import { InvalidArgumentError, TreasurySdkError } from '../../../src/sdk/sdk-errors.js';
import { X402DecodeError } from '../../../src/x402/x402-decode-error.js';
import { X402ConfigError } from '../../../src/x402/seller/x402-config-error.js';

class RuleError extends BaseError<'rule_broken', { rule: string }> {
  override readonly name = 'RuleError';
}

describe('BaseError', () => {
  it('carries code, shortMessage, details and cause as fields', () => {
    const root = new Error('socket closed');
    const err = new RuleError('rule_broken', {
      message: 'value too large',
      details: { rule: 'value_max' },
      cause: root,
    });
    assert.equal(err.code, 'rule_broken');
    assert.equal(err.message, 'value too large');
    assert.equal(err.shortMessage, 'value too large');
    assert.deepEqual(err.details, { rule: 'value_max' });
    assert.equal(err.cause, root);
    assert.equal(err.name, 'RuleError');
    assert.ok(err instanceof Error && err instanceof BaseError);
  });

  it('defaults: the code as message, {} as details, no cause property', () => {
    const err = new BaseError('plain');
    assert.equal(err.message, 'plain');
    assert.deepEqual(err.details, {});
    assert.ok(!('cause' in err));
  });

  it('walk() finds the first cause of a kind along the chain, or the deepest cause without a predicate', () => {
    const root = new TypeError('fetch failed');
    const refusal = new RuleError('rule_broken', { details: { rule: 'window_max' }, cause: root });
    const outer = new BaseError('outer', { cause: new BaseError('middle', { cause: refusal }) });
    const found = outer.walk((e): e is RuleError => e instanceof RuleError);
    assert.equal(found, refusal);
    assert.equal(found?.details.rule, 'window_max');
    assert.equal(
      outer.walk((e) => e instanceof RangeError),
      undefined,
    );
    assert.equal(outer.walk(), root);
    assert.equal(
      outer.walk((e) => e === outer),
      outer,
      'the error itself is the first link',
    );
  });

  it('walk() ends on a cycle', () => {
    const a = new BaseError('a');
    const b = new BaseError('b', { cause: a });
    Object.defineProperty(a, 'cause', { value: b });
    assert.equal(
      a.walk((e) => e instanceof RangeError),
      undefined,
    );
  });

  it('is the shape of the API, signer, SDK, CLI and x402 errors', () => {
    const signerFault = new SignerFault('invariant_violation', 'value_max: too much', { rule: 'value_max' });
    const signerError = new SignerError('invariant_violation', 'any message', { rule: 'value_max' });
    const app = new AppError('signer_refused', { fields: { rule: 'value_max' }, cause: signerError });
    for (const err of [
      signerFault,
      signerError,
      app,
      new CliError({ code: 'x', userMessage: 'y' }),
      new InvalidArgumentError('amount', 'bad'),
      new X402DecodeError('invalid_json', 'bad'),
      new X402ConfigError(['p']),
    ]) {
      assert.ok(err instanceof BaseError, err.name);
      assert.equal(typeof err.code, 'string');
      assert.equal(typeof err.details, 'object');
    }
    assert.deepEqual(app.details, { rule: 'value_max' });
    assert.equal(app.fields, app.details);
    assert.equal(app.status, 403);
    assert.equal(app.walk((e): e is SignerError => e instanceof SignerError)?.details.rule, 'value_max');
    assert.deepEqual(new InvalidArgumentError('amount', 'bad').details, { field: 'amount' });
    assert.equal(new TreasurySdkError('c', 'm').name, 'TreasurySdkError');
    assert.equal(new X402DecodeError('invalid_json', 'bad').code, 'invalid_json');
  });

  it('CliError keeps its --json shape: details printed only when given', () => {
    assert.deepEqual(new CliError({ code: 'x', userMessage: 'y' }).toJSON(), { error_code: 'x', user_message: 'y' });
    assert.deepEqual(new CliError({ code: 'x', userMessage: 'y', details: { flag: '--max' } }).toJSON(), {
      error_code: 'x',
      user_message: 'y',
      details: { flag: '--max' },
    });
  });
});
