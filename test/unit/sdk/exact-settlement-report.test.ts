/**
 * The buyer SDK's settlement report, with a scripted payer (the real stack is test/e2e/exact-settlement.test.ts):
 * retried only while it may succeed later (not deep enough, not seen yet, Treasury unreachable or its chain),
 * a bounded number of times, never rejecting; an `exact` payment's report runs in the background, an `upto`
 * one is awaited, a Solana one (named by its base58 signature) runs in the background too; `xx buy`'s wait for it is bounded.
 */
import assert from 'node:assert/strict';
import { TreasuryApiError, type X402Result } from '../../../src/sdk/index.js';
import type { BuyerPayer } from '../../../src/sdk/buyer-payer.js';
import type { PayReply, Settlement } from '../../../src/sdk/treasury-client-schemas.js';
import { recordSettlement, withSettlementReport } from '../../../src/sdk/x402-payment-outcome.js';
import {
  awaitSettlementReport,
  BUY_SETTLEMENT_WAIT_MS,
  settlementWaitMs,
} from '../../../src/cli/commands/buy/settlement-report.js';
import { sellerTimeoutMs } from '../../../src/cli/commands/buy/seller-timeout.js';

const TX = `0x${'ab'.repeat(32)}`;
const SETTLEMENT = { authorization_id: 'auth_1', scheme: 'exact', transaction: TX } as unknown as Settlement;
const unconfirmed = () => new TreasuryApiError(409, { error_code: 'settlement_unconfirmed' });
const notFound = () =>
  new TreasuryApiError(422, { error_code: 'settlement_not_verified', reason: 'transaction_not_found' });
const mismatch = () =>
  new TreasuryApiError(422, { error_code: 'settlement_not_verified', reason: 'authorization_mismatch' });

/** A payer whose reports fail with `failures` in turn, then succeed; the calls it saw. */
function scriptedPayer(failures: Error[]): { payer: BuyerPayer; calls: string[] } {
  const calls: string[] = [];
  const payer = {
    recordSettlement: (id: string, tx: string) => {
      calls.push(`${id} ${tx}`);
      const failure = failures.shift();
      return failure ? Promise.reject(failure) : Promise.resolve(SETTLEMENT);
    },
  } as unknown as BuyerPayer;
  return { payer, calls };
}

const PAID = { status: 200, headers: new Headers(), body: '{}', paid: true } as X402Result;
const exactPayment = { scheme: 'exact', authorization_id: 'auth_1', authorization: {} } as unknown as PayReply;

describe('exact settlement report (SDK): bounded retries, in the background, never failing the payment', () => {
  it('retries while the settlement is not deep enough or not seen yet, then answers what Treasury recorded', async () => {
    const { payer, calls } = scriptedPayer([unconfirmed(), notFound()]);
    assert.deepEqual(await recordSettlement(payer, 'auth_1', TX, [1, 1, 1]), { settlement: SETTLEMENT });
    assert.equal(calls.length, 3);
  });

  it("retries while Treasury's RPC reads are all taken (429 chain_reads_exceeded, 503 chain_busy) or it is unreachable", async () => {
    const { payer, calls } = scriptedPayer([
      new TreasuryApiError(429, { error_code: 'chain_reads_exceeded' }),
      new TreasuryApiError(503, { error_code: 'chain_busy' }),
      new TreasuryApiError(503, { error_code: 'chain_unavailable' }),
    ]);
    assert.deepEqual(await recordSettlement(payer, 'auth_1', TX, [1, 1, 1]), { settlement: SETTLEMENT });
    assert.equal(calls.length, 4);
  });

  it('gives up after the last pause with the error code, and never retries a refusal', async () => {
    const bounded = scriptedPayer([unconfirmed(), unconfirmed(), unconfirmed(), unconfirmed()]);
    assert.deepEqual(await recordSettlement(bounded.payer, 'auth_1', TX, [1, 1]), {
      settlementError: 'settlement_unconfirmed',
    });
    assert.equal(bounded.calls.length, 3);
    const refused = scriptedPayer([mismatch()]);
    assert.deepEqual(await recordSettlement(refused.payer, 'auth_1', TX, [1, 1]), {
      settlementError: 'settlement_not_verified',
    });
    assert.equal(refused.calls.length, 1);
  });

  it('an exact payment, EVM or Solana, is reported in the background; a receipt naming no transaction is not', async () => {
    const { payer, calls } = scriptedPayer([unconfirmed()]);
    const result = await withSettlementReport(PAID, payer, exactPayment, TX, [1]);
    assert.equal(result.settlement, undefined, 'not awaited');
    assert.deepEqual(await result.settlementReport, { settlement: SETTLEMENT });
    assert.equal(calls.length, 2);
    const solana = { scheme: 'exact', authorization_id: 'auth_2', transaction: 'AQ==' } as unknown as PayReply;
    const signature = '5'.repeat(87);
    const sol = scriptedPayer([notFound()]);
    const reported = await withSettlementReport(PAID, sol.payer, solana, signature, [1]);
    assert.deepEqual(await reported.settlementReport, { settlement: SETTLEMENT });
    assert.deepEqual(sol.calls, [`auth_2 ${signature}`, `auth_2 ${signature}`]);
    const none = scriptedPayer([]);
    assert.deepEqual(await (await withSettlementReport(PAID, none.payer, solana, '', [1])).settlementReport, {});
    assert.equal(none.calls.length, 0);
  });

  it('xx buy waits for the report at most its bound, then says it is pending', async () => {
    const never = { ...PAID, settlementReport: new Promise<never>(() => undefined) };
    const started = Date.now();
    assert.equal((await awaitSettlementReport(never, 50)).settlementError, 'settlement_report_pending');
    assert.ok(Date.now() - started < 5_000);
    const done = { ...PAID, settlementReport: Promise.resolve({ settlement: SETTLEMENT }) };
    assert.equal((await awaitSettlementReport(done, 50)).settlement, SETTLEMENT);
  });

  it('xx buy --settlement-wait: whole seconds 0 to 120, else invalid_argument naming the flag (exit 2)', () => {
    assert.equal(settlementWaitMs(undefined), BUY_SETTLEMENT_WAIT_MS);
    assert.equal(settlementWaitMs('0'), 0);
    assert.equal(settlementWaitMs('120'), 120_000);
    for (const bad of ['121', '-1', '1.5', '', ' 5', '1e2', '0x10', '9999', 'abc']) {
      assert.throws(
        () => settlementWaitMs(bad),
        (err: Error & { exitCode?: number; code?: string; details?: unknown }) =>
          err.code === 'invalid_argument' && err.exitCode === 2,
        bad,
      );
    }
  });

  it('xx buy --timeout: whole seconds 1 to 600 (default 120), else invalid_argument naming the flag (exit 2)', () => {
    assert.equal(sellerTimeoutMs(undefined), 120_000);
    assert.equal(sellerTimeoutMs('1'), 1_000);
    assert.equal(sellerTimeoutMs('600'), 600_000);
    for (const bad of ['0', '601', '-1', '1.5', '', ' 5', '1e2', '9999', 'abc']) {
      assert.throws(
        () => sellerTimeoutMs(bad),
        (err: Error & { exitCode?: number; code?: string; details?: { flag?: string } }) =>
          err.code === 'invalid_argument' && err.exitCode === 2 && err.details?.flag === '--timeout',
        bad,
      );
    }
  });
});
