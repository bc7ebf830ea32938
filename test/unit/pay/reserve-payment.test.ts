/**
 * The pay wing's orchestration (src/api/pay/reserve-payment.ts and the ways it reserves) on fakes of its two
 * stores (test/support/fake-pay-stores.ts), without PostgreSQL: what the process remembers between a
 * wallet's payments, a shared statement's failure decided again alone, a write whose answer was lost
 * released, a signer failure written unsigned and released, and what a release leaves remembered.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { parseUsd } from '../../../policy/money.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import type { PayDeps } from '../../../src/api/pay/pay-deps.js';
import type { PaySnapshot } from '../../../src/api/pay/pay-snapshot.js';
import type { CallContext, Reservation, SpendPlan } from '../../../src/api/pay/pay-types.js';
import { releaseEventually } from '../../../src/api/pay/release-eventually.js';
import { reservePayment } from '../../../src/api/pay/reserve-payment.js';
import { SnapshotCache } from '../../../src/api/pay/snapshot-cache.js';
import { ChainRegistry } from '../../../src/shared/chain-registry.js';
import { FakePaySnapshotStore, FakePayWriteStore } from '../../support/fake-pay-stores.js';
import { EMPTY, NOW, TO } from '../policy/policy-fixtures.js';

const chains = ChainRegistry.fromConfig(undefined);
const SEPOLIA = chains.resolve('eip155:84532')!;

function wing(options: { policy?: Record<string, unknown>; signer?: () => Promise<{ signature: string }> } = {}) {
  const snapshots = new FakePaySnapshotStore();
  const writes = new FakePayWriteStore();
  let n = 0;
  const snapshot: PaySnapshot = {
    wallet: {
      id: 'w_1',
      account_id: 'acct_1',
      label: null,
      network: 'eip155:84532',
      address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      public_key: '04',
      wallet_key_ref: 'wk_1',
      key_version: 1,
      policy: options.policy ?? {},
      status: 'active',
      created_at: NOW,
      updated_at: NOW,
      revoked_at: null,
      account_key_ref: 'ak_1',
    },
    state: EMPTY,
    recent: null,
    auditHead: { seq: 3, hash: 'cd'.repeat(32) },
    previous: null,
  };
  snapshots.wallets.set('w_1', snapshot);
  const metrics = createTreasuryMetrics();
  const deps: PayDeps = {
    snapshots,
    writes,
    memory: new SnapshotCache(),
    signer: {
      call: (options.signer ?? (async () => ({ signature: `0x${'ab'.repeat(65)}` }))) as PayDeps['signer']['call'],
    },
    chains,
    metrics,
    clock: () => NOW,
    mint: {
      id: (prefix) => `${prefix}${++n}`,
      window: () => ({ validAfter: '1', validBefore: '4000000000', nonce: `0x${String(++n).padStart(64, '0')}` }),
    },
    dashboardUrl: 'https://dashboard.example',
    faults: {},
  };
  return { deps, snapshots, writes, metrics };
}

const ctx: CallContext = {
  accountId: 'acct_1',
  walletId: 'w_1',
  actor: 'tok_1',
  idempotencyKey: undefined,
  request: {},
};
const plan = (usd: string): SpendPlan => ({
  kind: 'pay',
  scheme: 'exact',
  chain: SEPOLIA,
  domain: { name: 'USDC', version: '2' },
  to: TO,
  amountMicro: parseUsd(usd),
  capability: undefined,
  resource: undefined,
  validForSeconds: 60,
});
const pay = (deps: PayDeps, usd: string) => reservePayment(deps, ctx, plan(usd), null, () => undefined);
const counter = async (
  metrics: ReturnType<typeof createTreasuryMetrics>,
  name: string,
  labels: Record<string, string>,
) =>
  (await metrics.registry.getSingleMetric(name)!.get()).values.find((v) =>
    Object.entries(labels).every(([k, l]) => v.labels[k] === l),
  )?.value ?? 0;

/** What PostgreSQL answers a shared statement it refused as a whole (nothing of it written). */
function serializationFailure(): pg.DatabaseError {
  const refusal = new pg.DatabaseError('could not serialize access', 0, 'error');
  refusal.severity = 'ERROR';
  refusal.code = '40001';
  return refusal;
}

describe('pay wing: reserving on fake stores', () => {
  it("a wallet's next payment decides on the snapshot its last write leaves, without reading: the cap counts the first", async () => {
    const { deps, snapshots, writes } = wing({ policy: { daily_cap_usd: '2' } });
    const first = await pay(deps, '1.5');
    assert.equal(first.kind, 'signed', 'signed in its place, written with its signature');
    const second = await pay(deps, '1');
    assert.equal(second.kind, 'denied');
    assert.equal(snapshots.reads, 1);
    assert.deepEqual(
      writes.committed.map((w) => [w.audit.seq, w.authorization?.status ?? 'denial']),
      [
        [4, 'signed'],
        [5, 'denial'],
      ],
    );
    assert.equal(writes.committed[1]!.audit.prev_hash, writes.committed[0]!.audit.hash);
  });

  it('a write its shared statement refused is decided again alone, on a fresh read; nothing remembered from before is used', async () => {
    const { deps, snapshots, writes, metrics } = wing();
    await pay(deps, '1');
    writes.refuseNext = serializationFailure();
    const outcome = await pay(deps, '1');
    assert.equal(outcome.kind, 'reserved', 'reserved alone, to be signed and recorded');
    assert.equal(writes.alone.length, 1);
    assert.equal(snapshots.reads, 2);
    assert.equal(writes.released.length, 0, 'PostgreSQL answered: nothing of it was written');
    assert.equal(await counter(metrics, 'treasury_pay_conflict_retries_total', { kind: 'pay' }), 1);
  });

  it('a write whose connection dropped may have committed: it is released, and the payment decided again alone', async () => {
    const { deps, writes } = wing();
    writes.refuseNext = Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
    const outcome = await pay(deps, '1');
    assert.equal(outcome.kind, 'reserved');
    assert.deepEqual(
      writes.released.map((r) => r.reason),
      ['write_unacknowledged'],
    );
    assert.notEqual(
      writes.released[0]!.reservation.authorizationId,
      (outcome as { payment: { authorization_id: string } }).payment.authorization_id,
    );
  });

  it("a reservation decided alone and remembered, then given back (the signer failed): the wallet's next payment reads again", async () => {
    const { deps, snapshots, writes } = wing();
    await pay(deps, '1');
    writes.refuseNext = serializationFailure();
    const reserved = await pay(deps, '1');
    assert.equal(reserved.kind, 'reserved', 'decided alone, remembered, to be signed by the caller');
    assert.equal(snapshots.reads, 2);
    // The caller's signer call failed: the release's audit row moves the wallet's chain past what is remembered.
    await releaseEventually(deps, ctx, reserved as Reservation, 'signer_failed');
    assert.equal(writes.released.length, 1);
    await pay(deps, '1');
    assert.equal(snapshots.reads, 3, 'decided on a fresh read, not on the memory the release left stale');
  });

  it("a signer failure fills the place with the reservation unsigned, releases it and answers the signer's error", async () => {
    const { deps, writes } = wing({ signer: async () => Promise.reject(new AppError('signer_unavailable')) });
    await assert.rejects(
      pay(deps, '1'),
      (err: unknown) => err instanceof AppError && err.code === 'signer_unavailable',
    );
    assert.deepEqual(
      writes.committed.map((w) => w.authorization?.status),
      ['reserved'],
    );
    assert.deepEqual(
      writes.released.map((r) => [r.reason, r.reservation.authorizationId]),
      [['signer_failed', writes.committed[0]!.authorization!.id]],
    );
  });
});
