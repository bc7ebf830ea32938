/**
 * The payment history's status rule, over a stand-in history store: what Treasury knows of a payment (its
 * row's status, its `upto` settlement, a verified seller ledger row, the clock) becomes the status a buyer
 * reads. The PostgreSQL store and the routes are exercised by test/integration/api/payment-history.test.ts.
 */
import assert from 'node:assert/strict';
import { PaymentHistoryService } from '../../../src/api/wallets/payment-history-service.js';
import type { PaymentRow } from '../../../src/api/wallets/store/wallet-history-store.js';

const NOW = new Date('2026-11-28T12:00:00.000Z');
const nowSeconds = NOW.getTime() / 1000;

function row(overrides: Partial<PaymentRow>): PaymentRow {
  return {
    id: `auth_${'1'.repeat(24)}`,
    wallet_id: `wal_${'2'.repeat(24)}`,
    decision_id: `pd_${'3'.repeat(24)}`,
    kind: 'pay',
    scheme: 'exact',
    network: 'eip155:84532',
    to_address: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
    amount_micro: '1500000',
    valid_before: nowSeconds + 600,
    capability: null,
    resource: null,
    status: 'signed',
    settled_raw: null,
    settlement_tx: null,
    settled_at: null,
    ledger_tx_hash: null,
    created_at: new Date('2026-11-28T11:59:00.000Z'),
    ...overrides,
  };
}

async function statusOf(overrides: Partial<PaymentRow>): Promise<{ status: string; tx_hash_source: string | null }> {
  const page = { page: [row(overrides)], nextCursor: null };
  const history = new PaymentHistoryService(
    { paymentsOfWallet: async () => page, paymentsOfAccount: async () => page },
    () => NOW,
  );
  const [payment] = (await history.forWallet('wal_x', { limit: 10 })).payments;
  return { status: payment!.status, tx_hash_source: payment!.tx_hash_source };
}

describe('payment history: the status a buyer reads', () => {
  it('a signed payment still valid is signed; past its valid_before with no transaction, expired', async () => {
    assert.equal((await statusOf({})).status, 'signed');
    assert.equal((await statusOf({ valid_before: nowSeconds })).status, 'expired');
  });

  it("a signed payment is settled by its own settlement, or by a seller's verified ledger row", async () => {
    assert.deepEqual(await statusOf({ settlement_tx: '0xaa', valid_before: nowSeconds - 1 }), {
      status: 'settled',
      tx_hash_source: 'settlement',
    });
    assert.deepEqual(await statusOf({ ledger_tx_hash: '0xbb ' }), {
      status: 'settled',
      tx_hash_source: 'seller_ledger',
    });
  });

  it('a released payment stays released, and a reserved one is never settled by a ledger row', async () => {
    assert.equal((await statusOf({ status: 'released', ledger_tx_hash: '0xbb' })).status, 'released');
    assert.equal((await statusOf({ status: 'reserved', ledger_tx_hash: '0xbb' })).status, 'reserved');
  });
});
