/**
 * Which mode a ledger row is, from where its transfer went (src/api/sellers/ledger/recipient-mode.ts): the
 * collection wallet (platform_mor) and the proven pay-to addresses (direct) are both tried, the reported mode
 * first and each only when the seller has one; a match decides, else the reason of the mode whose address the
 * transaction paid, else recipient_mismatch. Through the verifier on anvil: test/integration/api/ledger-recipient-mode.test.ts.
 */
import assert from 'node:assert/strict';
import type { LedgerTransferVerdict } from '../../../src/api/chain/verify-ledger-transfer.js';
import { candidatesOf, decisive, type PayoutMode } from '../../../src/api/sellers/ledger/recipient-mode.js';

const C = '0xc0000000000000000000000000000000000000c0';
const P = '0xa0000000000000000000000000000000000000a0';

describe('ledger recipient mode', () => {
  it('tries both modes, the reported one first, each only with an address', () => {
    assert.deepEqual(
      candidatesOf({ collection: [C], payTo: [P] }, 'platform_mor').map((c) => c.mode),
      ['platform_mor', 'direct'],
    );
    assert.deepEqual(
      candidatesOf({ collection: [C], payTo: [P] }, 'direct').map((c) => c.mode),
      ['direct', 'platform_mor'],
    );
    assert.deepEqual(candidatesOf({ collection: [C], payTo: [] }, 'direct'), [
      { mode: 'platform_mor', recipients: [C] },
    ]);
    assert.deepEqual(candidatesOf({ collection: [], payTo: [] }, 'platform_mor'), []);
  });

  it('a match decides; else the mode whose address was paid names the reason; else recipient_mismatch', () => {
    const verified: LedgerTransferVerdict = { kind: 'verified', logIndexes: [1], confirmations: 3 };
    const rejected = (reason: 'recipient_mismatch' | 'payer_mismatch' | 'self_payment'): LedgerTransferVerdict => ({
      kind: 'rejected',
      reason,
      confirmations: 3,
    });
    const of = (...verdicts: Array<[PayoutMode, LedgerTransferVerdict]>) =>
      decisive(verdicts.map(([mode, verdict]) => ({ mode, verdict })));
    assert.equal(of(['platform_mor', rejected('recipient_mismatch')], ['direct', verified]).mode, 'direct');
    assert.equal(of(['direct', verified], ['platform_mor', verified]).mode, 'direct', 'the reported mode first');
    assert.deepEqual(of(['platform_mor', rejected('recipient_mismatch')], ['direct', rejected('self_payment')]), {
      mode: 'direct',
      verdict: rejected('self_payment'),
    });
    assert.equal(
      of(['platform_mor', rejected('recipient_mismatch')], ['direct', rejected('recipient_mismatch')]).verdict.kind,
      'rejected',
    );
    const pending: LedgerTransferVerdict = { kind: 'pending', reason: 'awaiting_confirmations', confirmations: 0 };
    assert.equal(of(['direct', pending], ['platform_mor', pending]).verdict.kind, 'pending');
    assert.throws(() => of(), RangeError);
  });
});
