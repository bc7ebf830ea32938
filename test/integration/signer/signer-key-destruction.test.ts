/**
 * `destroy_wallet_key` against a compromised API (docs/security-model.md; signer/key-destruction/): through a real
 * signer process (SoftHSM, or the KMS emulator below; its own PostgreSQL store) and its socket, as anything holding
 * the API's process would. Whoever holds it cannot:
 *  (a) destroy the key of a wallet whose owner-signed policy does not carry `allow_key_destruction: true`
 *      (`key_destruction_not_allowed`, naming the policy's version), EVM or Solana — once the owner signs a newer
 *      version with it, the key is destroyed, answers `key_destroyed`, and a second destroy succeeds;
 *  (b) get around it by naming another wallet's address (one without a signed policy, or a made-up one) for the
 *      protected key (`address_mismatch`), a 0x address for an Ed25519 key or the other way round
 *      (`invariant_violation`), or no address (`address_required`);
 *  (c) get a signature of a key out after its destroy answered: a payment signed while its spend commits (the
 *      commit held back by a row lock), or while the store adopts its wallet, answers `key_destroyed`, and its spend
 *      is given back.
 * A wallet without a signed policy is destroyed as before.
 */
import assert from 'node:assert/strict';
import { address } from '@solana/kit';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { WalletPolicyInput } from '../../../policy/policy-schema.js';
import { DEVNET, PAY_TO, paymentMessage } from '../../builders/solana-payment-message.js';
import { findFreePort, startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import type { TestKeyBackend } from '../../support/kms-test-backend.js';
import { outcome, ownerAuthority, readMetric, refusal, signedPolicy, walletOps } from './signer-test-helpers.js';

const CENT = '10000';
const MADE_UP = '0x1234567890123456789012345678901234567890';

type Wallet = { wallet_key_ref: string; address: string };

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let waited = 0; !(await condition()); waited += 20) {
    assert.ok(waited < 30_000, what);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A signer with its own store (spends recorded before release: no open-spend lease) and its metrics, for a suite. */
function useSigner(keyBackend?: TestKeyBackend) {
  const held: { signer?: TestSigner; db?: pg.Client; port?: number } = {};
  before(async () => {
    held.port = await findFreePort();
    held.signer = await startTestSigner({
      policyStore: true,
      keyBackend,
      env: { TREASURY_SIGNER_METRICS_PORT: String(held.port), TREASURY_SIGNER_OPEN_SPEND_LEASE_MS: '0' },
    });
    held.db = new pg.Client({ connectionString: held.signer.policyStore!.connectionString });
    await held.db.connect();
  });
  after(async () => {
    await held.db?.end();
    await held.signer?.stop();
  });
  const owner = privateKeyToAccount(generatePrivateKey());

  /** A new account of `owner`, and what a front asks of its wallets. */
  async function account() {
    const signer = held.signer!;
    const made = await signer.client.call('create_account_key', { authority: await ownerAuthority(owner) });
    const account = made.account_key_ref;
    const ops = walletOps(signer, account);
    let memo = 0;
    return {
      ...ops,
      solanaWallet: () => signer.client.createWalletKey({ account_key_ref: account, curve: 'ed25519' }),
      async paySolana(w: Wallet) {
        const message = await paymentMessage({
          wallet: address(w.address),
          amount: 10_000n,
          payTo: PAY_TO,
          memo: `payment ${memo++}`.padEnd(32, '.'),
        });
        return signer.client.signSolanaTransaction({
          account_key_ref: account,
          wallet_key_ref: w.wallet_key_ref,
          address: w.address,
          network: DEVNET,
          message: Buffer.from(message).toString('base64'),
          pay_to: PAY_TO,
        });
      },
      policy: async (w: Wallet, policy: WalletPolicyInput, version: number) =>
        signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, policy, version)),
      /** destroy_wallet_key of `w`'s key, naming `named` (default: its own address; null: none). */
      destroy: (w: Wallet, named: string | null = w.address) =>
        signer.client.destroyWalletKey({
          account_key_ref: account,
          wallet_key_ref: w.wallet_key_ref,
          ...(named === null ? {} : { address: named }),
        }),
    };
  }

  const signs = () =>
    held.signer!.keyBackend === 'pkcs11'
      ? readMetric(held.port!, 'treasury_signer_hsm_operation_duration_seconds_count', 'op="sign"')
      : readMetric(held.port!, 'treasury_signer_kms_request_duration_seconds_count', 'op="sign",outcome="ok"');
  /** The wallet's spends in the store (which keeps 0x addresses lower-case, base58 as spelled). */
  const storedSpends = async (w: Wallet) =>
    (
      await held.db!.query<{ n: number }>('SELECT count(*)::int AS n FROM signer_spends WHERE address = $1', [
        w.address.startsWith('0x') ? w.address.toLowerCase() : w.address,
      ])
    ).rows[0]!.n;
  const lockWaiters = async () =>
    (
      await held.db!.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      )
    ).rows[0]!.n;
  /** A connection that holds row locks in one transaction while `run` runs, then rolls back; `run`'s outcome after. */
  async function holding<T>(lock: (client: pg.Client) => Promise<unknown>, run: () => Promise<T>): Promise<T> {
    const holder = new pg.Client({ connectionString: held.signer!.policyStore!.connectionString });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await lock(holder);
      return await run();
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  }
  return { account, signs, storedSpends, lockWaiters, holding, db: () => held.db!, port: () => held.port! };
}

describe('destroy_wallet_key under owner-signed policies (signer socket, own store)', function () {
  this.timeout(180_000);
  const { account, signs, storedSpends, lockWaiters, holding, db, port } = useSigner();

  it('(a) refuses while the signed policy does not allow it, and destroys once a newer version does', async () => {
    const ops = await account();
    const w = await ops.wallet();
    await ops.policy(w, { daily_cap_usd: '1' }, 1);
    const refused = await refusal(ops.destroy(w));
    assert.equal(refused.code, 'key_destruction_not_allowed');
    assert.deepEqual(refused.details, { rule: 'owner_policy', current_version: 1 });
    assert.equal(await outcome(ops.sign(w, CENT)), 'signed', 'the key still signs');

    await ops.policy(w, { daily_cap_usd: '1', allow_key_destruction: true }, 2);
    assert.deepEqual(await ops.destroy(w), { destroyed: true });
    assert.equal(await outcome(ops.sign(w, CENT)), 'key_destroyed');
    assert.deepEqual(await ops.destroy(w), { destroyed: true }, 'destroying again succeeds');
    // A newer policy without the flag: the key is gone already, a destroy still answers as done.
    await ops.policy(w, { daily_cap_usd: '1' }, 3);
    assert.deepEqual(await ops.destroy(w), { destroyed: true });
  });

  it("(b) refuses another wallet's address, a made-up one, or one of the other curve, for a protected key", async () => {
    const ops = await account();
    const guarded = await ops.wallet();
    const open = await ops.wallet();
    const solana = await ops.solanaWallet();
    await ops.policy(guarded, {}, 1);
    for (const named of [open.address, MADE_UP, open.address.toLowerCase()]) {
      const r = await refusal(ops.destroy(guarded, named));
      assert.equal(r.code, 'address_mismatch', named);
      assert.equal(r.details.rule, 'key_of_address');
    }
    const evmForSolana = await refusal(ops.destroy(solana, open.address));
    assert.equal(evmForSolana.code, 'invariant_violation');
    assert.equal(evmForSolana.details.rule, 'address_curve');
    const solanaForEvm = await refusal(ops.destroy(guarded, solana.address));
    assert.equal(solanaForEvm.code, 'invariant_violation');
    assert.equal(solanaForEvm.details.rule, 'address_curve');
    assert.equal(await outcome(ops.sign(guarded, CENT)), 'signed', 'the protected key was not destroyed');
    assert.equal(await outcome(ops.paySolana(solana)), 'signed');
    // The probes count in no ceiling and no policy spend: only the two payments are in the store.
    assert.equal((await storedSpends(guarded)) + (await storedSpends(solana)), 2);
  });

  it('(b) refuses without an address; destroys a wallet without a signed policy as before', async () => {
    const ops = await account();
    const w = await ops.wallet();
    const r = await refusal(ops.destroy(w, null));
    assert.equal(r.code, 'invariant_violation');
    assert.equal(r.details.rule, 'address_required');
    assert.equal(await outcome(ops.sign(w, CENT)), 'signed');
    assert.deepEqual(await ops.destroy(w), { destroyed: true });
    assert.equal(await outcome(ops.sign(w, CENT)), 'key_destroyed');
    // A wallet the store has no record of (made before it kept them) has no signed policy either.
    const older = await ops.wallet();
    await db().query('DELETE FROM signer_wallets WHERE address = $1', [older.address.toLowerCase()]);
    assert.deepEqual(await ops.destroy(older), { destroyed: true });
  });

  it('(a) a Solana wallet: refused under its signed policy, destroyed once the owner allows it', async () => {
    const ops = await account();
    const w = await ops.solanaWallet();
    await ops.policy(w, { daily_cap_usd: '1' }, 1);
    const refused = await refusal(ops.destroy(w));
    assert.equal(refused.code, 'key_destruction_not_allowed');
    assert.deepEqual(refused.details, { rule: 'owner_policy', current_version: 1 });
    assert.equal(await outcome(ops.paySolana(w)), 'signed');
    await ops.policy(w, { daily_cap_usd: '1', allow_key_destruction: true }, 2);
    assert.deepEqual(await ops.destroy(w), { destroyed: true });
    assert.equal(await outcome(ops.paySolana(w)), 'key_destroyed');
    assert.deepEqual(await ops.destroy(w), { destroyed: true });
  });

  it('(c) a payment signed while its spend commits answers key_destroyed once the destroy answered', async () => {
    const ops = await account();
    const w = await ops.wallet();
    await ops.policy(w, { daily_cap_usd: '1', allow_key_destruction: true }, 1);
    // The first payment reads the store; the next is foreseen on the state it left, and signed while it commits.
    assert.equal(await outcome(ops.sign(w, CENT)), 'signed');
    const early = (o: string) => readMetric(port(), 'treasury_signer_early_signatures_total', `outcome="${o}"`);
    const discarded = await early('discarded');
    const lockCounter = (c: pg.Client) =>
      c.query('SELECT 1 FROM signer_spend_counters WHERE address = $1 FOR UPDATE', [w.address.toLowerCase()]);
    const { paying } = await holding(lockCounter, async () => {
      const before = await signs();
      const payment = { paying: outcome(ops.sign(w, CENT)) };
      await until(async () => (await lockWaiters()) >= 1, "the payment's commit waits on the counter");
      await until(async () => (await signs()) > before, 'the signature was made while the spend commits');
      assert.deepEqual(await ops.destroy(w), { destroyed: true });
      return payment;
    });
    assert.equal(await paying, 'key_destroyed');
    assert.equal(await storedSpends(w), 1, 'its spend was given back');
    assert.equal((await early('discarded')) - discarded, 1);
  });

  it('(c) a signature waiting for the store to adopt its wallet answers key_destroyed once the destroy answered', async () => {
    const ops = await account();
    const w = await ops.wallet();
    // A wallet the store has no record of: its first payment records it, after its signature proved the key.
    await db().query('DELETE FROM signer_wallets WHERE address = $1', [w.address.toLowerCase()]);
    const recordFirst = (c: pg.Client) =>
      c.query('INSERT INTO signer_wallets (address) VALUES ($1)', [w.address.toLowerCase()]);
    const { paying } = await holding(recordFirst, async () => {
      const before = await signs();
      const payment = { paying: outcome(ops.sign(w, CENT)) };
      await until(async () => (await lockWaiters()) >= 1, "the wallet's adoption waits on the row");
      assert.equal(await signs(), before + 1, 'the signature was made before the adoption');
      assert.deepEqual(await ops.destroy(w), { destroyed: true });
      return payment;
    });
    assert.equal(await paying, 'key_destroyed');
  });
});

describe('destroy_wallet_key under owner-signed policies on AWS KMS (emulator)', function () {
  this.timeout(180_000);
  const { account } = useSigner('aws-kms');

  it('proves the key through KMS Sign: refuses another address and the policy, destroys once it allows it', async () => {
    const ops = await account();
    const w = await ops.wallet();
    const other = await ops.wallet();
    const solana = await ops.solanaWallet();
    await ops.policy(w, {}, 1);
    await ops.policy(solana, {}, 1);
    assert.equal((await refusal(ops.destroy(w, other.address))).code, 'address_mismatch');
    assert.equal((await refusal(ops.destroy(solana, other.address))).code, 'invariant_violation');
    assert.equal((await refusal(ops.destroy(w))).code, 'key_destruction_not_allowed');
    assert.equal((await refusal(ops.destroy(solana))).code, 'key_destruction_not_allowed');
    await ops.policy(w, { allow_key_destruction: true }, 2);
    await ops.policy(solana, { allow_key_destruction: true }, 2);
    assert.deepEqual(await ops.destroy(w), { destroyed: true });
    assert.deepEqual(await ops.destroy(solana), { destroyed: true });
    assert.equal(await outcome(ops.sign(w, CENT)), 'key_destroyed');
    assert.equal(await outcome(ops.paySolana(solana)), 'key_destroyed');
    assert.deepEqual(await ops.destroy(w), { destroyed: true });
    assert.equal(await outcome(ops.sign(other, CENT)), 'signed');
  });
});
