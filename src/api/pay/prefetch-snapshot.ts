/**
 * A wallet's snapshot read before its first payment asks for it: right after the wallet is created (its
 * row committed), so that the first payment decides on a remembered snapshot (./snapshot-cache.ts) as every
 * later one does, instead of reading it in its own request. The read is the payment's own (one prepared
 * statement, ./store/pay-statements.ts SNAPSHOT_SQL), taken in the wallet's turn after its queued writes
 * settled — exactly where a payment that found nothing remembered would take it.
 *
 * Defends: a prefetch overwriting what a payment already left remembered (it reads only when nothing is
 * remembered, in the wallet's turn, and remembers only under the writer's generation it started with); a
 * prefetch outliving a change of the wallet made through this process (its policy signed, say, before its
 * read came back: every change forgets the wallet — ./pay-service.ts — and a read begun before any forget is
 * not remembered); and a prefetch of a wallet that is gone or revoked (nothing is remembered; the payment
 * reads and answers 404/410).
 * Does not defend: anything a remembered snapshot does not — it is a guess like any other, and the write's
 * audit row at head + 1 fails if the wallet changed meanwhile through another process (docs/adr/0006); with
 * the signer's policy store, the signature made on such a stale guess is counted there although it never
 * leaves (a wallet whose policy is signed through another replica before its first payment here gives up one
 * payment's worth of its signed day: refused sooner, never allowed more). A prefetch that fails leaves
 * nothing remembered, and the first payment reads as it did before.
 */
import { enterWalletTurn, walletLockKey, writesSettled } from '../db/wallet-transaction.js';
import type { PayDeps } from './pay-deps.js';

/** Reads and remembers `walletId`'s snapshot unless one is remembered already; whether it remembered one. */
export async function prefetchSnapshot(
  deps: Pick<PayDeps, 'snapshots' | 'writes' | 'memory' | 'clock' | 'metrics'>,
  walletId: string,
): Promise<boolean> {
  const lockKey = walletLockKey(walletId).toString();
  const turn = enterWalletTurn(walletId);
  if (turn.ready) await turn.ready;
  try {
    await writesSettled(walletId);
    const now = deps.clock();
    const generation = deps.writes.generationOf(lockKey);
    if (deps.memory.snapshot(walletId, generation, now)) return false;
    const forgets = deps.memory.forgetCount;
    const snapshot = await deps.snapshots.read(walletId, now, undefined, 'pay');
    // A wallet changed (or a write failed) while it was read: what was read may predate it; the payment reads.
    const changedMeanwhile = deps.memory.forgetCount !== forgets || deps.writes.generationOf(lockKey) !== generation;
    if (!snapshot || snapshot.wallet.status !== 'active' || changedMeanwhile) return false;
    deps.memory.rememberSnapshot(walletId, snapshot, now, generation);
    deps.metrics.paySnapshots.inc({ source: 'prefetched' });
    return true;
  } finally {
    turn.leave();
  }
}
