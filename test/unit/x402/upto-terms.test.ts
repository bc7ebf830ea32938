/**
 * The Koa middleware's `upto` rules that need no chain: which Permit2 payloads answer an upto route (payee,
 * maximum, token, the x402 upto proxy as spender, our facilitator in the witness — `upto_facilitator_mismatch`
 * otherwise), built by the official upto client; and the charge a handler names with Settlement-Overrides
 * (raw, percent, dollars; never above the signed maximum, integer arithmetic only).
 */
import assert from 'node:assert/strict';
import { x402Client } from '@x402/core/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { resolveSettlementAmount } from 'treasury/koa';
import { resolveX402Options } from '../../../src/x402/seller/seller-options.js';
import { buildRouteTerms, matchPayment } from '../../../src/x402/seller/payment-terms.js';
import type { PaymentPayload } from '../../../src/x402/wire-schemas.js';
import { buyer, SELLER } from './x402-fixtures.js';

const FACILITATOR = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const OTHER = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

describe('x402 Koa middleware: upto terms', () => {
  const config = resolveX402Options({
    token: 'xx_pat_testtesttesttesttesttesttesttesttesttest123',
    price: '0.10',
    pay_to: SELLER,
    facilitator_url: 'http://127.0.0.1:1',
    facilitator_address: FACILITATOR,
    schemes: ['upto'],
    api_url: 'http://127.0.0.1:2',
    env: {},
  });
  const terms = buildRouteTerms(config, 'http://127.0.0.1/metered', 100_000n);

  async function pay(change: (r: Record<string, any>) => void = () => undefined): Promise<PaymentPayload> {
    const accepted = structuredClone(terms.accepts[0]!) as Record<string, any>;
    change(accepted);
    const client = new x402Client().register('eip155:84532', new UptoEvmScheme(buyer));
    const payload = await client.createPaymentPayload({
      x402Version: 2,
      resource: terms.resource,
      accepts: [accepted as never],
    });
    // The payment claims the route's terms (as a buyer replaying them would), whatever it signed.
    return { ...(payload as unknown as PaymentPayload), accepted: terms.accepts[0]! } as PaymentPayload;
  }

  it('advertises upto with the facilitator address and Permit2', () => {
    assert.equal(terms.accepts[0]!.scheme, 'upto');
    assert.deepEqual(terms.accepts[0]!.extra, {
      name: 'USDC',
      version: '2',
      facilitatorAddress: FACILITATOR,
      assetTransferMethod: 'permit2',
    });
    assert.equal(terms.accepts[0]!.amount, '100000');
  });

  it('matches what the official upto client signs for the route', async () => {
    const match = matchPayment(await pay(), terms, config);
    assert.equal(match.kind, 'match');
    assert.equal(match.kind === 'match' && match.payer, buyer.address);
    assert.ok(match.kind === 'match' && match.replayKey.includes('permit2:'));
  });

  it('refuses a witness bound to another facilitator, another payee, or another maximum', async () => {
    const reason = async (change: (r: Record<string, any>) => void) => {
      const m = matchPayment(await pay(change), terms, config);
      return m.kind === 'mismatch' ? m.reason : 'match';
    };
    assert.equal(await reason((r) => (r.extra.facilitatorAddress = OTHER)), 'upto_facilitator_mismatch');
    assert.equal(await reason((r) => (r.payTo = OTHER)), 'authorization_recipient_mismatch');
    assert.equal(await reason((r) => (r.amount = '99999')), 'authorization_value_mismatch');
  });

  it('resolves the charge: raw, percent (two decimals, rounded down), dollars; never above the maximum', () => {
    const max = 100_000n;
    assert.deepEqual(resolveSettlementAmount(undefined, max), { kind: 'ok', amount: max });
    assert.deepEqual(resolveSettlementAmount('40000', max), { kind: 'ok', amount: 40_000n });
    assert.deepEqual(resolveSettlementAmount('0', max), { kind: 'ok', amount: 0n });
    assert.deepEqual(resolveSettlementAmount('40%', max), { kind: 'ok', amount: 40_000n });
    assert.deepEqual(resolveSettlementAmount('12.34%', 333n), { kind: 'ok', amount: 41n });
    assert.deepEqual(resolveSettlementAmount('100%', max), { kind: 'ok', amount: max });
    assert.deepEqual(resolveSettlementAmount('$0.04', max), { kind: 'ok', amount: 40_000n });
    for (const bad of [
      '100001',
      '100.01%',
      '$0.100001',
      '$0.2',
      '-1',
      '1e3',
      '0.5',
      '40 %',
      '$',
      '',
      '01',
      '40.123%',
    ]) {
      assert.equal(resolveSettlementAmount(bad, max).kind, 'invalid', bad);
    }
  });
});
