/**
 * A compromised API against the signer (docs/adr/0012-owner-signed-policies.md): the test talks to a real
 * signer process (SoftHSM, its own PostgreSQL store under its own role) through its socket, as anything that
 * holds the API's process would, and tries to get what the owner did not sign. It cannot:
 *  (a) make the signer accept a policy not signed by the wallet's authority (another key, a forged owner
 *      sign-in, no approver configured);
 *  (b) make it accept an older (or the same) signed policy again, or one whose version skips ahead (a far
 *      version, once kept, would leave the owner none above it), or one signed more than a day ago or before
 *      the one it holds (a document held back and applied late);
 *  (c) get a payment signed that the signed policy refuses — per payment, each window, velocity, the
 *      counterparty lists, cooling-off — Permit2 `upto` maxima included;
 *  (d) exceed a window after the signer is killed with SIGKILL and started again;
 *  (e) set the policy of a wallet of another account's authority.
 * And the honest path signs: within the policy, the spend is counted; an EIP-2612 permit is no payment.
 */
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { WalletPolicyInput } from '../../../policy/policy-schema.js';
import { policyTypedData } from '../../../policy/signed-policy.js';
import { SignerError } from '../../../signer/protocol/signer-client.js';
import type { TestSigner } from '../../support/signer-harness.js';
import { ownerAuthority, PAYEE, refusal, signedPolicy, useStoredSigner, walletOps } from './signer-test-helpers.js';

const OTHER_PAYEE = '0x1111111111111111111111111111111111111111';
const usd = (dollars: number) => String(Math.round(dollars * 1_000_000));

/** One account of `signer` under `owner`'s authority, with its wallets and what a front would ask of them. */
async function ownedAccount(signer: TestSigner, owner: PrivateKeyAccount) {
  const made = await signer.client.call('create_account_key', { authority: await ownerAuthority(owner) });
  assert.deepEqual(made.authority, { kind: 'owner', address: owner.address });
  return accountOps(signer, made.account_key_ref);
}

/** A set_wallet_policy document as `signedPolicy` makes it, but signed as of `issuedAt` (unix seconds). */
async function datedPolicy(
  by: PrivateKeyAccount,
  wallet: string,
  policy: WalletPolicyInput,
  version: number,
  issuedAt: number,
) {
  const signature = await by.signTypedData(policyTypedData({ wallet, policy: policy as never, version, issuedAt }));
  return { address: wallet, policy: policy as never, version, issued_at: issuedAt, signature };
}

function accountOps(signer: TestSigner, account: string) {
  const ops = walletOps(signer, account);
  return { account, wallet: ops.wallet, pay: ops.sign, upto: ops.permit };
}

describe('owner-signed policies against a compromised API (signer socket, own store)', function () {
  this.timeout(120_000);
  let signer: TestSigner;
  const stored = useStoredSigner('treasury-owner-policies-', (started) => (signer = started));
  const owner = privateKeyToAccount(generatePrivateKey());
  const intruder = privateKeyToAccount(generatePrivateKey());

  it('records the owner as authority from a sign-in that verifies, and refuses a forged one', async () => {
    const ops = await ownedAccount(signer, owner);
    const w = await ops.wallet();
    assert.deepEqual(w.policy_authority, { kind: 'owner', address: owner.address });
    const forged = (await ownerAuthority(intruder)).sign_in;
    const r = await refusal(
      signer.client.call('create_account_key', {
        authority: { kind: 'owner', address: owner.address, sign_in: forged },
      }),
    );
    assert.equal(r.code, 'policy_signature_invalid');
    assert.equal(r.details.rule, 'authority_proof');
  });

  it('(a) refuses a policy the authority did not sign; (b) refuses an older or equal version', async () => {
    const ops = await ownedAccount(signer, owner);
    const w = await ops.wallet();
    const byIntruder = await refusal(
      signer.client.call('set_wallet_policy', await signedPolicy(intruder, w.address, {}, 1)),
    );
    assert.equal(byIntruder.code, 'policy_signature_invalid');
    // A signature over another policy than the one sent.
    const doc = await signedPolicy(owner, w.address, { per_tx_cap_usd: '1' }, 1);
    const swapped = await refusal(
      signer.client.call('set_wallet_policy', { ...doc, policy: { per_tx_cap_usd: '1000' } as never }),
    );
    assert.equal(swapped.code, 'policy_signature_invalid');

    await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, { per_tx_cap_usd: '1' }, 1));
    const v2 = await signer.client.call(
      'set_wallet_policy',
      await signedPolicy(owner, w.address, { per_tx_cap_usd: '1' }, 2),
    );
    assert.equal(v2.version, 2);
    assert.deepEqual(v2.authority, { kind: 'owner', address: owner.address });
    for (const version of [1, 2]) {
      const stale = await refusal(
        signer.client.call(
          'set_wallet_policy',
          await signedPolicy(owner, w.address, { per_tx_cap_usd: '1000' }, version),
        ),
      );
      assert.equal(stale.code, 'policy_version_stale');
      assert.equal(stale.details.current_version, 2);
    }
    const read = await signer.client.call('get_wallet_policy', { address: w.address });
    assert.equal(read.current?.version, 2);
  });

  it('(b) refuses a version that skips ahead — 2**48 would freeze the policy — and takes each next version in turn', async () => {
    const ops = await ownedAccount(signer, owner);
    const w = await ops.wallet();
    const set = (version: number) => signedPolicy(owner, w.address, { per_tx_cap_usd: '1' }, version);
    const far = await refusal(signer.client.call('set_wallet_policy', await set(2 ** 48)));
    assert.deepEqual([far.code, far.details], ['policy_version_stale', { rule: 'version_gap' }]);
    assert.equal((await signer.client.call('set_wallet_policy', await set(1))).version, 1);
    const gap = await refusal(signer.client.call('set_wallet_policy', await set(3)));
    assert.deepEqual([gap.code, gap.details], ['policy_version_stale', { rule: 'version_gap', current_version: 1 }]);
    assert.equal((await signer.client.call('set_wallet_policy', await set(2))).version, 2);
    const read = await signer.client.call('get_wallet_policy', { address: w.address });
    assert.equal(read.current?.version, 2);
  });

  it('(b) refuses a document signed more than a day ago, or before the one it holds', async () => {
    const ops = await ownedAccount(signer, owner);
    const w = await ops.wallet();
    const now = Math.floor(Date.now() / 1000);
    const expired = await refusal(
      signer.client.call('set_wallet_policy', await datedPolicy(owner, w.address, {}, 1, now - 30 * 86_400)),
    );
    assert.deepEqual([expired.code, expired.details], ['policy_signature_invalid', { rule: 'issued_at_expired' }]);
    const recent = await datedPolicy(owner, w.address, { per_tx_cap_usd: '1' }, 1, now - 60);
    assert.equal((await signer.client.call('set_wallet_policy', recent)).version, 1);
    // Signed before the document the signer holds: held back while the later one was applied.
    const older = await refusal(
      signer.client.call('set_wallet_policy', await datedPolicy(owner, w.address, {}, 2, now - 120)),
    );
    assert.deepEqual([older.code, older.details], ['policy_signature_invalid', { rule: 'issued_at_before_current' }]);
    const read = await signer.client.call('get_wallet_policy', { address: w.address });
    assert.deepEqual([read.current?.version, read.current?.issued_at], [1, now - 60]);
    assert.equal(
      (await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, {}, 2))).version,
      2,
    );
  });

  it('(c) refuses payments the signed policy forbids, rule by rule, and counts what it signs', async () => {
    const ops = await ownedAccount(signer, owner);
    const denied = async (w: { wallet_key_ref: string; address: string }, call: Promise<unknown>, rule: string) => {
      const r = await refusal(call);
      assert.equal(r.code, 'policy_denied', rule);
      assert.ok(
        r.details.violations.some((v: { rule: string }) => v.rule === rule),
        `${rule} in ${JSON.stringify(r.details)}`,
      );
    };
    const cases: Array<[WalletPolicyInput, (w: any) => Promise<unknown>, (w: any) => Promise<unknown>, string]> = [
      [{ per_tx_cap_usd: '1' }, (w) => ops.pay(w, usd(1)), (w) => ops.pay(w, usd(1.01)), 'per_tx_cap_usd'],
      [{ daily_cap_usd: '1' }, (w) => ops.pay(w, usd(0.6)), (w) => ops.pay(w, usd(0.6)), 'daily_cap_usd'],
      [{ weekly_cap_usd: '1' }, (w) => ops.pay(w, usd(0.6)), (w) => ops.pay(w, usd(0.6)), 'weekly_cap_usd'],
      [{ monthly_cap_usd: '1' }, (w) => ops.pay(w, usd(0.6)), (w) => ops.pay(w, usd(0.6)), 'monthly_cap_usd'],
      [
        { velocity_cap: { max_count: 1, window_seconds: 3600 } },
        (w) => ops.pay(w, '1'),
        (w) => ops.pay(w, '1'),
        'velocity_cap',
      ],
      [
        { counterparty_allowlist: [PAYEE] },
        (w) => ops.pay(w, '1'),
        (w) => ops.pay(w, '1', OTHER_PAYEE),
        'counterparty_allowlist',
      ],
      [
        { counterparty_blocklist: [OTHER_PAYEE] },
        (w) => ops.pay(w, '1'),
        (w) => ops.pay(w, '1', OTHER_PAYEE),
        'counterparty_blocklist',
      ],
      [{ cooling_off: 3600 }, (w) => ops.pay(w, '1'), (w) => ops.pay(w, '1'), 'cooling_off'],
      // An upto authorization counts its signed maximum.
      [{ daily_cap_usd: '1' }, (w) => ops.upto(w, usd(0.6)), (w) => ops.upto(w, usd(0.6)), 'daily_cap_usd'],
    ];
    for (const [policy, allowed, refused, rule] of cases) {
      const w = await ops.wallet();
      await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, policy, 1));
      await allowed(w);
      await denied(w, refused(w), rule);
    }
  });

  it('(c) a wallet without a signed policy signs under the ceilings only; its spends still count once one is signed', async () => {
    const ops = await ownedAccount(signer, owner);
    const w = await ops.wallet();
    await ops.pay(w, usd(0.6));
    await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, { daily_cap_usd: '1' }, 1));
    const r = await refusal(ops.pay(w, usd(0.6)));
    assert.equal(r.code, 'policy_denied');
  });

  it('(d) keeps the windows across a kill -9 and a restart', async () => {
    const ops = await ownedAccount(signer, owner);
    const w = await ops.wallet();
    await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, { daily_cap_usd: '1' }, 1));
    await ops.pay(w, usd(0.6));
    await stored.restart(true);
    const after = accountOps(signer, ops.account);
    const r = await refusal(after.pay(w, usd(0.6)));
    assert.equal(r.code, 'policy_denied', 'the spend before the kill still counts');
    await after.pay(w, usd(0.4));
    assert.equal((await refusal(after.pay(w, '1'))).code, 'policy_denied', 'the day is full');
  });

  it('(c) concurrent payments on one wallet, through two signer processes sharing the store, stop exactly at the cap', async () => {
    const ops = await ownedAccount(signer, owner);
    const w = await ops.wallet();
    await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, { daily_cap_usd: '1' }, 1));
    const second = await stored.another();
    try {
      const other = accountOps(second, ops.account);
      const outcomes = await Promise.allSettled(
        Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? ops : other).pay(w, usd(0.1))),
      );
      const signedCount = outcomes.filter((o) => o.status === 'fulfilled').length;
      const refusedCodes = outcomes.flatMap((o) => (o.status === 'rejected' ? [(o.reason as SignerError).code] : []));
      assert.equal(signedCount, 10, 'ten payments of 0.10 fill a 1.00 day, whichever signer signed them');
      assert.deepEqual([...new Set(refusedCodes)], ['policy_denied']);
    } finally {
      await second.stop();
    }
  });

  it('(e) refuses a policy for a wallet of another account, signed by that other account’s owner', async () => {
    const mine = await ownedAccount(signer, owner);
    const theirs = await ownedAccount(signer, intruder);
    const w = await mine.wallet();
    void theirs;
    const r = await refusal(signer.client.call('set_wallet_policy', await signedPolicy(intruder, w.address, {}, 1)));
    assert.equal(r.code, 'policy_signature_invalid');
    assert.equal(r.details.rule, 'authority');
  });

  it('an account made with no owner is the approver’s; with no approver configured no policy can be set', async () => {
    const made = await signer.client.call('create_account_key', {});
    assert.deepEqual(made.authority, { kind: 'approver', address: null });
    const w = await signer.client.createWalletKey({ account_key_ref: made.account_key_ref });
    const r = await refusal(signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, {}, 1)));
    assert.equal(r.code, 'policy_signature_invalid');
    assert.equal(r.details.rule, 'no_approver_configured');
  });
});
