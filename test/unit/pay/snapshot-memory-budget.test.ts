/**
 * The pay path's remembered snapshots are bounded by bytes, not only by count (src/api/pay/snapshot-cache.ts,
 * TREASURY_PAY_SNAPSHOT_MEMORY_BYTES): snapshots made as the store makes them (`snapshotFromRows`, which seals the
 * policy and records its size once, ./snapshot-policy.ts), each with a policy at the schema's bounds, are remembered
 * within the budget — the least recently used forgotten first, one larger than the whole budget not remembered (nor
 * the one it replaces served) — and with the default budget too, where the count alone let 10,000 such snapshots
 * hold ~1.5 GiB. Small snapshots are still bounded by the count. Sizes are estimates, deterministic and recorded
 * once per snapshot read.
 */
import assert from 'node:assert/strict';
import { snapshotFromRows, type PaySnapshot } from '../../../src/api/pay/pay-snapshot.js';
import { SNAPSHOT_BASE_BYTES, SnapshotCache, snapshotBytes } from '../../../src/api/pay/snapshot-cache.js';
import { policyBytesOf, sealPolicy } from '../../../src/api/pay/snapshot-policy.js';
import { DEFAULT_PAY_SNAPSHOT_MEMORY_BYTES } from '../../../src/api/config/keep-bounds-config.js';
import { POLICY_LIMITS } from '../../../policy/policy-object-schema.js';

const NOW = new Date('2026-11-20T12:00:00Z');
const GENERATION = 1;

/** A 40-hex-digit address from `i` (distinct per list and index). */
const address = (list: number, i: number) => `0x${list.toString(16)}${i.toString(16).padStart(39, '0')}`;

/** A policy at the schema's bounds (policy/policy-object-schema.ts POLICY_LIMITS), as JSON text. */
const POLICY_AT_BOUNDS = JSON.stringify({
  per_tx_cap_usd: '1',
  daily_cap_usd: '1000000',
  counterparty_allowlist: Array.from({ length: POLICY_LIMITS.maxListLength }, (_, i) => address(1, i)),
  counterparty_blocklist: Array.from({ length: POLICY_LIMITS.maxListLength }, (_, i) => address(2, i)),
  capability_cap_usd: Object.fromEntries(
    Array.from({ length: POLICY_LIMITS.maxCapabilityCaps }, (_, i) => [`capability.${i}`, '1']),
  ),
});
const SMALL_POLICY = JSON.stringify({ per_tx_cap_usd: '1', daily_cap_usd: '10' });

/** The wallet's snapshot as the store reads it: SNAPSHOT_SQL's row, its policy parsed from `policyJson`. */
function readSnapshot(walletId: string, policyJson: string): PaySnapshot {
  const snapshot = snapshotFromRows([
    {
      id: walletId,
      account_id: 'acct_1',
      label: null,
      network: 'eip155:84532',
      address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      public_key: '04',
      wallet_key_ref: 'wk_1',
      key_version: 1,
      policy: JSON.parse(policyJson) as Record<string, unknown>,
      status: 'active',
      created_at: NOW,
      updated_at: NOW,
      revoked_at: null,
      account_key_ref: 'ak_1',
      last_paid_at: null,
      totals: null,
      recent: null,
      audit_head: { seq: 1, hash: 'ab'.repeat(32) },
      previous: null,
    },
  ]);
  assert.ok(snapshot);
  return snapshot;
}

/** Which of `ids` the cache still remembers. */
const remembered = (cache: SnapshotCache, ids: readonly string[]) =>
  ids.filter((id) => cache.snapshot(id, GENERATION, NOW) !== undefined);

describe('pay snapshot memory: bounded by bytes', () => {
  const atBoundsBytes = snapshotBytes(readSnapshot('w_probe', POLICY_AT_BOUNDS));

  it('a policy’s size is recorded when its snapshot is read, the same for the same JSON, near what it holds', () => {
    const a = readSnapshot('w_a', POLICY_AT_BOUNDS);
    const b = readSnapshot('w_b', POLICY_AT_BOUNDS);
    assert.notEqual(a.wallet.policy, b.wallet.policy, 'each read holds its own policy');
    assert.ok(Object.isFrozen(a.wallet.policy), 'sealed as read');
    assert.equal(policyBytesOf(a.wallet.policy), policyBytesOf(b.wallet.policy));
    // Sealed again (a snapshot remembered from this one): the size recorded at the read stands.
    assert.equal(policyBytesOf(sealPolicy(a.wallet.policy)), policyBytesOf(a.wallet.policy));
    // An unsealed copy is estimated by walking it, to the same figure.
    assert.equal(policyBytesOf(JSON.parse(POLICY_AT_BOUNDS)), policyBytesOf(a.wallet.policy));
    // V8 holds a policy at its bounds in ~1.6 bytes per character of its JSON (measured: 96,569 → 156.5 KiB).
    const perChar = policyBytesOf(a.wallet.policy) / POLICY_AT_BOUNDS.length;
    assert.ok(perChar > 1.2 && perChar < 2.5, `estimated ${perChar} bytes per JSON character`);
    assert.equal(atBoundsBytes, SNAPSHOT_BASE_BYTES + policyBytesOf(a.wallet.policy));
    assert.ok(snapshotBytes(readSnapshot('w_s', SMALL_POLICY)) < SNAPSHOT_BASE_BYTES + 512);
  });

  it('large snapshots stay within the budget; the least recently used are forgotten first', () => {
    const budget = 2 * 1024 * 1024;
    const fits = Math.floor(budget / atBoundsBytes);
    assert.ok(fits >= 4 && fits < 40, `${fits} fit`);
    const cache = new SnapshotCache({ maxSnapshotBytes: budget });
    const ids = Array.from({ length: 40 }, (_, i) => `w_${i}`);
    for (const id of ids) {
      cache.rememberSnapshot(id, readSnapshot(id, POLICY_AT_BOUNDS), NOW, GENERATION);
      assert.ok(cache.snapshotMemory.bytes <= budget, `${cache.snapshotMemory.bytes} bytes remembered`);
      // w_0 is used before every new one: it stays while the others take turns.
      assert.ok(cache.snapshot('w_0', GENERATION, NOW), 'the wallet paid all along is still remembered');
    }
    assert.equal(cache.snapshotMemory.count, fits);
    assert.equal(cache.snapshotMemory.bytes, fits * atBoundsBytes);
    assert.deepEqual(remembered(cache, ids), ['w_0', ...ids.slice(ids.length - (fits - 1))]);
  });

  it('with the default budget, thousands of large snapshots are not all remembered', () => {
    const cache = new SnapshotCache();
    // One policy object for all (sealed once): each snapshot is counted at its size, the test's heap stays small.
    const shared = readSnapshot('w_shared', POLICY_AT_BOUNDS);
    const n = 2_000;
    const ids = Array.from({ length: n }, (_, i) => `w_${i}`);
    for (const id of ids) cache.rememberSnapshot(id, { ...shared, wallet: { ...shared.wallet, id } }, NOW, GENERATION);
    const fits = Math.floor(DEFAULT_PAY_SNAPSHOT_MEMORY_BYTES / atBoundsBytes);
    assert.ok(fits < n, `${fits} fit the default budget`);
    assert.ok(cache.snapshotMemory.bytes <= DEFAULT_PAY_SNAPSHOT_MEMORY_BYTES);
    assert.equal(cache.snapshotMemory.count, fits);
    assert.equal(cache.snapshot(ids[0]!, GENERATION, NOW), undefined, 'the oldest is forgotten');
    assert.ok(cache.snapshot(ids.at(-1)!, GENERATION, NOW), 'the newest is remembered');
  });

  it('a snapshot larger than the whole budget is not remembered, and the one it replaced is not served', () => {
    const cache = new SnapshotCache({ maxSnapshotBytes: atBoundsBytes - 1 });
    cache.rememberSnapshot('w_1', readSnapshot('w_1', SMALL_POLICY), NOW, GENERATION);
    assert.ok(cache.snapshot('w_1', GENERATION, NOW));
    cache.rememberSnapshot('w_1', readSnapshot('w_1', POLICY_AT_BOUNDS), NOW, GENERATION);
    assert.equal(cache.snapshot('w_1', GENERATION, NOW), undefined);
    assert.deepEqual(cache.snapshotMemory, { bytes: 0, count: 0 });
  });

  it('control: small snapshots are still bounded by the count (10,000) within the default budget', () => {
    const cache = new SnapshotCache();
    const shared = readSnapshot('w_shared', SMALL_POLICY);
    for (let i = 0; i <= 10_000; i++)
      cache.rememberSnapshot(`w_${i}`, { ...shared, wallet: { ...shared.wallet, id: `w_${i}` } }, NOW, GENERATION);
    assert.equal(cache.snapshotMemory.count, 10_000);
    assert.equal(cache.snapshot('w_0', GENERATION, NOW), undefined);
    assert.ok(cache.snapshot('w_10000', GENERATION, NOW));
  });

  it('refuses a budget that is not a positive whole number', () => {
    for (const bad of [0, -1, 1.5, Number.NaN])
      assert.throws(() => new SnapshotCache({ maxSnapshotBytes: bad }), RangeError, String(bad));
  });
});
