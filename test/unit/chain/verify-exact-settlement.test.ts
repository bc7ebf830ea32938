/**
 * verifyExactSettlement (src/api/chain/verify-exact-settlement.ts) and the choice of check by the stored
 * authorization (src/api/pay/verify-reported-settlement.ts): an `exact` settlement is accepted only from a
 * successful transaction in which the payment's token spent this authorization's nonce and then transferred
 * its signed value to its payee; it settles the whole value. A Solana payment is `exact` too, but never held
 * to the EVM check (its own is src/api/chain/verify-solana-settlement.ts): `settlement_not_applicable` there.
 */
import assert from 'node:assert/strict';
import { encodeAbiParameters, encodeEventTopics, erc20Abi, parseAbi, type Hex } from 'viem';
import { verifyExactSettlement } from '../../../src/api/chain/verify-exact-settlement.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import type { MinedTransaction } from '../../../src/api/chain/balance-reader.js';
import type { PaymentAuthorization } from '../../../src/api/pay/payment-authorization.js';
import { settlementScheme, verifyReportedSettlement } from '../../../src/api/pay/verify-reported-settlement.js';

const TOKEN = '0x1111111111111111111111111111111111111111';
const OTHER_TOKEN = '0x4444444444444444444444444444444444444444';
const BUYER: Hex = '0x2222222222222222222222222222222222222222';
const PAYEE: Hex = '0x3333333333333333333333333333333333333333';
const NONCE: Hex = `0x${'ab'.repeat(32)}`;
const OTHER_NONCE: Hex = `0x${'cd'.repeat(32)}`;
const USED = parseAbi(['event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)']);

const used = (nonce: Hex, logIndex: number, address = TOKEN) => ({
  address,
  topics: encodeEventTopics({ abi: USED, eventName: 'AuthorizationUsed', args: { authorizer: BUYER, nonce } }) as Hex[],
  data: '0x' as Hex,
  logIndex,
});
const transfer = (to: Hex, value: bigint, logIndex: number, address = TOKEN) => ({
  address,
  topics: encodeEventTopics({ abi: erc20Abi, eventName: 'Transfer', args: { from: BUYER, to } }) as Hex[],
  data: encodeAbiParameters([{ type: 'uint256' }], [value]),
  logIndex,
});
const mined = (logs: MinedTransaction['logs'], status: 'success' | 'reverted' = 'success'): MinedTransaction => ({
  to: TOKEN,
  input: '0x',
  status,
  logs,
  blockNumber: 1n,
  confirmations: 1,
});
const signed = { from: BUYER, to: PAYEE, value: 10_000n, nonce: NONCE };
const refused = (reason: string) => (err: unknown) =>
  err instanceof AppError && err.code === 'settlement_not_verified' && err.fields.reason === reason;

const exactPayment = {
  scheme: 'exact',
  network: 'eip155:84532',
  asset: TOKEN,
  authorization: { from: BUYER, to: PAYEE, value: '10000', validAfter: '0', validBefore: '9', nonce: NONCE },
} as unknown as PaymentAuthorization;

describe('verifyExactSettlement', () => {
  it('settles the signed value when the token spent this nonce, then transferred it to the payee', () => {
    const tx = mined([transfer(PAYEE, 1n, 0), used(NONCE, 1), transfer(PAYEE, 10_000n, 2)]);
    assert.equal(verifyExactSettlement(tx, TOKEN, signed), 10_000n);
    assert.equal(verifyReportedSettlement(exactPayment, '0xsig', tx), 10_000n);
  });

  it('refuses a reverted transaction, another nonce, a plain transfer, another token, another amount or payee', () => {
    assert.throws(
      () => verifyExactSettlement(mined([used(NONCE, 1), transfer(PAYEE, 10_000n, 2)], 'reverted'), TOKEN, signed),
      refused('reverted'),
    );
    const mismatches = [
      [used(OTHER_NONCE, 1), transfer(PAYEE, 10_000n, 2)],
      [transfer(PAYEE, 10_000n, 2)],
      [used(NONCE, 1, OTHER_TOKEN), transfer(PAYEE, 10_000n, 2, OTHER_TOKEN)],
      [used(NONCE, 1), transfer(PAYEE, 9_999n, 2)],
      [used(NONCE, 1), transfer(BUYER, 10_000n, 2)],
    ];
    for (const logs of mismatches)
      assert.throws(() => verifyExactSettlement(mined(logs), TOKEN, signed), refused('authorization_mismatch'));
  });

  it('a Solana payment is exact, and never held to the EVM check: settlement_not_applicable', () => {
    const solana = {
      scheme: 'exact',
      network: 'solana:devnet',
      solana_transfer: {},
      transaction: '',
    } as unknown as PaymentAuthorization;
    const notApplicable = (err: unknown) => err instanceof AppError && err.code === 'settlement_not_applicable';
    assert.equal(settlementScheme(solana), 'exact');
    assert.throws(() => verifyReportedSettlement(solana, 'sig', mined([])), notApplicable);
    assert.equal(settlementScheme(exactPayment), 'exact');
  });
});
