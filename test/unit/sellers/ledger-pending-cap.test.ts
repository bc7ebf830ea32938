/**
 * The pending-row cap (src/api/sellers/ledger/ledger-pending-cap.ts) on a fake of its counts
 * (test/support/fake-seller-stores.ts), without PostgreSQL: a seller at its cap may not add a row, a row it
 * already reported is not new, and one seller's backlog does not refuse another's rows; an account's sellers
 * together stay within the account's cap.
 */
import assert from 'node:assert/strict';
import { AppError } from '../../../src/api/errors/app-error.js';
import { LedgerPendingCap } from '../../../src/api/sellers/ledger/ledger-pending-cap.js';
import { FakePendingRowCounts } from '../../support/fake-seller-stores.js';

const tx = (n: number) => '0x' + n.toString(16).padStart(64, '0');
const row = (seller: string, n: number, account = seller) => ({
  seller: { id: seller, account_id: account },
  row: { tx_hash: tx(n), network: 'eip155:84532' },
});

const refusal = (p: Promise<void>) =>
  p.then(
    () => 'admitted',
    (err: unknown) => (err instanceof AppError ? err.code : String(err)),
  );

describe('ledger pending cap (fake counts)', () => {
  it('refuses a new row past the cap, admits a repeat of a reported one and other sellers', async () => {
    const counts = new FakePendingRowCounts();
    const cap = new LedgerPendingCap(counts, 2);
    counts.report('sel_a', tx(1));
    counts.report('sel_a', tx(2));
    counts.report('sel_a', tx(3), 'verified');
    assert.equal(await refusal(cap.admit([row('sel_a', 4)])), 'ledger_pending_limit');
    assert.equal(await refusal(cap.admit([row('sel_a', 1), row('sel_a', 3)])), 'admitted');
    assert.equal(await refusal(cap.admit([row('sel_b', 1), row('sel_b', 2)])), 'admitted');
    assert.equal(await refusal(cap.admit([row('sel_b', 1), row('sel_b', 2), row('sel_b', 3)])), 'ledger_pending_limit');
    assert.equal(await refusal(cap.admit([row('sel_b', 5), row('sel_a', 4)])), 'ledger_pending_limit');
  });

  it("refuses a report that would pass the account's cap over all its sellers, each within its own", async () => {
    const counts = new FakePendingRowCounts();
    const cap = new LedgerPendingCap(counts, 2, 3);
    for (const seller of ['sel_a', 'sel_b']) counts.accountOf.set(seller, 'acc_1');
    counts.report('sel_a', tx(1));
    counts.report('sel_a', tx(2));
    assert.equal(await refusal(cap.admit([row('sel_b', 3, 'acc_1')])), 'admitted');
    assert.equal(
      await refusal(cap.admit([row('sel_b', 3, 'acc_1'), row('sel_b', 4, 'acc_1')])),
      'ledger_pending_limit',
    );
    assert.equal(await refusal(cap.admit([row('sel_c', 3, 'acc_2'), row('sel_c', 4, 'acc_2')])), 'admitted');
  });
});
