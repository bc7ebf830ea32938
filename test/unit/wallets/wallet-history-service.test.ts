/**
 * The wallet audit's bounded wait (src/api/wallets/wallet-history-service.ts): a request whose verification
 * from the chain's first row did not get its turn within the wait answers `not_checked` with the chain's length
 * (the state the schema already has) and is not verified later for nobody; the verification that held the
 * worker still answers `verified`, and asking again verifies the chain.
 */
import assert from 'node:assert/strict';
import { WalletHistoryService } from '../../../src/api/wallets/wallet-history-service.js';
import type { WalletHistoryStore } from '../../../src/api/wallets/store/wallet-history-store.js';

describe('wallet history service: the audit waits a bounded time for its turn', () => {
  it('answers not_checked past the wait, verified once its turn comes', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const passes: string[] = [];
    const store: Pick<WalletHistoryStore, 'newestDecisions' | 'newestAuditEvents' | 'verifyChain'> = {
      newestDecisions: async () => ({ denials: [], allowed: [] }),
      newestAuditEvents: async () => [
        { seq: '3', event_type: 'x', actor: 'a', created_at: new Date(0), prev_hash: 'p', hash: 'h' },
      ],
      verifyChain: async (walletId) => {
        passes.push(walletId);
        if (walletId === 'wal_held') await gate;
        return { verification: { chains: 1, rows: 3, ok: true }, head: { seq: 3, hash: 'h' } };
      },
    };
    const history = new WalletHistoryService(store as WalletHistoryStore, { maxWaitMs: 20 });
    const held = history.audit('wal_held', 1, 'acc_one');
    const waited = await history.audit('wal_other', 1, 'acc_two');
    assert.deepEqual(waited.verification, { state: 'not_checked', rows: 3 });
    release();
    assert.deepEqual((await held).verification, { state: 'verified', rows: 3 });
    assert.deepEqual(passes, ['wal_held'], 'the request that gave up was not verified later');
    assert.deepEqual((await history.audit('wal_other', 1, 'acc_two')).verification, { state: 'verified', rows: 3 });
  });
});
