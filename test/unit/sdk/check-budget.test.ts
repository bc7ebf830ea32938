/**
 * The buyer's price cap in integer micro-USD: equal passes, one raw unit above is refused with both figures,
 * no floating point anywhere (amounts far beyond 2^53 compare exactly), a malformed cap is refused when the
 * buyer is created — not in the middle of a payment.
 */
import assert from 'node:assert/strict';
import {
  checkBudget,
  createX402Buyer,
  InsufficientBudgetError,
  InvalidArgumentError,
  TreasuryClient,
} from '../../../src/sdk/index.js';
import { requirements } from '../x402/x402-fixtures.js';
import { WALLET_ID } from './scripted-http.js';

const refused = (requested: string, cap: string) => (err: unknown) =>
  err instanceof InsufficientBudgetError &&
  err.code === 'insufficient_budget' &&
  err.requested_usd === requested &&
  err.cap_usd === cap;

describe('buyer SDK: checkBudget', () => {
  it('0.010001 against a cap of 0.01 is refused; exactly 0.01 passes', () => {
    assert.throws(() => checkBudget(requirements({ amount: '10001' }), '0.01'), refused('0.010001', '0.01'));
    checkBudget(requirements({ amount: '10000' }), '0.01');
    checkBudget(requirements({ amount: '10000' }), '0.010000');
    checkBudget(requirements({ amount: '9999' }), '0.01');
  });

  it('no cap: anything passes (Treasury policy still applies)', () => {
    checkBudget(requirements({ amount: '1000000000000' }), undefined);
  });

  it('a cap of 0 refuses every priced entry', () => {
    assert.throws(() => checkBudget(requirements({ amount: '1' }), '0'), refused('0.000001', '0'));
  });

  it('exact at magnitudes where doubles are not: 2^60 + 1 units vs a cap of 2^60 units', () => {
    const cap = 2n ** 60n; // micro-USD
    const capUsd = `${cap / 1_000_000n}.${(cap % 1_000_000n).toString().padStart(6, '0')}`;
    checkBudget(requirements({ amount: cap.toString() }), capUsd);
    assert.equal(Number(cap + 1n), Number(cap), 'the same double: a float comparison would let it through');
    assert.throws(() => checkBudget(requirements({ amount: (cap + 1n).toString() }), capUsd), InsufficientBudgetError);
  });

  it('the error carries the entry and the canonical figures', () => {
    const r = requirements({ amount: '1500000' });
    try {
      checkBudget(r, '1.000');
      assert.fail('expected a refusal');
    } catch (err) {
      assert.ok(err instanceof InsufficientBudgetError);
      assert.deepEqual([err.requested_usd, err.cap_usd, err.requirements], ['1.5', '1', r]);
      assert.match(err.message, /1\.5 USD is above the cap of 1 USD/);
    }
  });

  it('a malformed maxPriceUsd is refused by createX402Buyer (no floats, no exponents, at most 6 decimals)', () => {
    const client = new TreasuryClient({ apiUrl: 'http://127.0.0.1:9', token: 'xx_pat_test' });
    for (const bad of ['1e3', '0.0000001', '-1', '0.1 ', '$1', '.5', '1.']) {
      assert.throws(
        () => createX402Buyer({ client, walletId: WALLET_ID, maxPriceUsd: bad }),
        (err: unknown) => err instanceof InvalidArgumentError && err.field === 'options.maxPriceUsd',
        bad,
      );
    }
    assert.throws(
      () => createX402Buyer({ client, walletId: WALLET_ID, maxPriceUsd: 0.01 as unknown as string }),
      InvalidArgumentError,
    );
  });
});
