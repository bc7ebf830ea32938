/**
 * A payment signed while its spend commits (signer/signer-service.ts `signWhileCommitting`, foreseen by
 * signer/owner-policy/spend-foresight.ts), through real signer processes, SoftHSM and their PostgreSQL store: the
 * signature is made early only when this process's remembered state allows the spend, and it leaves only once the
 * spend committed — a commit that refuses (another process spent meanwhile) or fails discards it; on one process
 * a payment the owner's policy refuses never reaches the HSM, however many race; the signer's own ceilings still
 * refuse and give the spend back.
 */
import assert from 'node:assert/strict';
import { findFreePort } from '../../support/signer-harness.js';
import { outcome, readMetric } from './signer-test-helpers.js';
import { useTwoSignersOnOneStore } from './two-signers-one-store.js';

const CENT = '10000';
const EARLY = 'treasury_signer_early_signatures_total';
const HSM_SIGNS = ['treasury_signer_hsm_operation_duration_seconds_count', 'op="sign"'] as const;

describe('a payment signed while its spend commits', function () {
  this.timeout(180_000);
  let port = 0;
  before(async () => {
    port = await findFreePort();
  });
  const { db, signedWallet, storedCount } = useTwoSignersOnOneStore({
    prefix: 'treasury-sign-early',
    // Generous ceilings but 30 signatures a minute per wallet: the ceilings' own refusal is reachable.
    env: { TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE: '30' },
    firstEnv: () => ({ TREASURY_SIGNER_METRICS_PORT: String(port) }),
  });

  const metrics = async () => ({
    released: await readMetric(port, EARLY, 'outcome="released"'),
    discarded: await readMetric(port, EARLY, 'outcome="discarded"'),
    hsmSigns: await readMetric(port, ...HSM_SIGNS),
  });
  const moved = (a: Awaited<ReturnType<typeof metrics>>, b: Awaited<ReturnType<typeof metrics>>) => ({
    released: b.released - a.released,
    discarded: b.discarded - a.discarded,
    hsmSigns: b.hsmSigns - a.hsmSigns,
  });
  it('on one process, 24 payments racing past a cap: the cap holds and no refused payment reaches the HSM', async () => {
    const { ops, wallet } = await signedWallet({ daily_cap_usd: '0.15' });
    // The first payment reads the store; the state its commit leaves is what the next ones are foreseen on.
    assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'signed');
    const before = await metrics();
    const results = await Promise.all(Array.from({ length: 24 }, () => outcome(ops[0]!.sign(wallet, CENT))));
    const delta = moved(before, await metrics());
    assert.equal(results.filter((r) => r === 'signed').length, 14);
    assert.equal(results.filter((r) => r === 'policy_denied').length, 10);
    assert.equal(await storedCount(wallet.address), 15);
    assert.equal(delta.hsmSigns, 14, 'the HSM signed exactly the payments that left');
    assert.equal(delta.discarded, 0);
    assert.ok(delta.released >= 1, `signed while committing: ${delta.released}`);
  });

  it('a payment foreseen on a state another process moved is refused by its commit, and its signature discarded', async () => {
    const { ops, wallet } = await signedWallet({ daily_cap_usd: '0.05' });
    for (let i = 0; i < 2; i++) assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'signed');
    // The other process fills the cap: this one still remembers two cents spent.
    for (let i = 0; i < 3; i++) assert.equal(await outcome(ops[1]!.sign(wallet, CENT)), 'signed');
    const before = await metrics();
    assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'policy_denied');
    const delta = moved(before, await metrics());
    assert.deepEqual(delta, { released: 0, discarded: 1, hsmSigns: 1 });
    assert.equal(await storedCount(wallet.address), 5);
  });

  it('a commit that fails discards the signature made meanwhile: the store is unavailable, nothing leaves', async () => {
    const { ops, wallet } = await signedWallet({ daily_cap_usd: '1' });
    for (let i = 0; i < 2; i++) assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'signed');
    const fn = `refuse_${wallet.address.slice(2, 10).toLowerCase()}`;
    await db.query(
      `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`,
    );
    await db.query(`CREATE TRIGGER ${fn} BEFORE INSERT ON signer_spends FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
    const before = await metrics();
    try {
      assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'policy_store_unavailable');
    } finally {
      await db.query(`DROP TRIGGER ${fn} ON signer_spends`);
      await db.query(`DROP FUNCTION ${fn}()`);
    }
    const delta = moved(before, await metrics());
    assert.deepEqual(delta, { released: 0, discarded: 1, hsmSigns: 1 });
    assert.equal(await storedCount(wallet.address), 2);
    // The store back, the wallet pays again.
    assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'signed');
  });

  it("the signer's own ceilings still refuse a payment foreseen allowed, before the HSM, and its spend is given back", async () => {
    const { ops, wallet } = await signedWallet({ daily_cap_usd: '1' });
    const before = await metrics();
    const results: string[] = [];
    for (let i = 0; i < 32; i++) results.push(await outcome(ops[0]!.sign(wallet, CENT)));
    const delta = moved(before, await metrics());
    assert.deepEqual(results.slice(28), ['signed', 'signed', 'limit_exceeded', 'limit_exceeded']);
    assert.equal(results.filter((r) => r === 'signed').length, 30);
    assert.equal(delta.hsmSigns, 30);
    assert.equal(delta.discarded, 0);
    assert.ok(delta.released >= 20, `signed while committing: ${delta.released}`);
    assert.equal(await storedCount(wallet.address), 30);
  });
});
