/**
 * A compromised API against the signer, on Solana wallets (docs/adr/0012-owner-signed-policies.md): the same cases
 * as ./signer-owner-policies.test.ts, through a real signer process (SoftHSM, its own PostgreSQL store) with real
 * x402 `exact` transaction messages. Whoever holds the API's socket cannot:
 *  (a) make the signer accept a Solana wallet's policy not signed by its authority (another EVM key, another
 *      Solana key, a statement signed for another wallet);
 *  (b) make it accept an older (or the same) signed policy again;
 *  (c) get a Solana payment signed that the signed policy refuses — per payment, each window, velocity, the
 *      counterparty lists (base58 payees, compared exactly), cooling-off — nor one that names no payee, nor more
 *      than a window holds by sending 64 at once through two signer processes;
 *  (d) exceed a window after the signer is killed with SIGKILL and started again;
 *  (e) set the policy of a Solana wallet of another account's authority.
 * Owners who signed in with Ethereum sign a Solana wallet's policy as EIP-712, owners who signed in with Solana as
 * the Ed25519 statement; the wallet is named by its base58 address either way. A wallet the store has no record of
 * (made before it kept them, Solana or EVM) is recorded under its account's authority at its first payment.
 */
import assert from 'node:assert/strict';
import { ed25519 } from '@noble/curves/ed25519.js';
import { address, getAddressDecoder, type Address } from '@solana/kit';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { WalletPolicyInput } from '../../../policy/policy-schema.js';
import type { SignerError } from '../../../signer/protocol/signer-client.js';
import { DEVNET, PAY_TO, paymentMessage } from '../../builders/solana-payment-message.js';
import { newSolanaSigner } from '../../support/sign-in.js';
import type { TestSigner } from '../../support/signer-harness.js';
import {
  ownerAuthority,
  refusal,
  signedPolicy,
  siwsAuthority,
  statementSigned,
  useStoredSigner,
  walletOps,
} from './signer-test-helpers.js';

const usd = (dollars: number) => BigInt(Math.round(dollars * 1_000_000));
const randomAddress = () => getAddressDecoder().decode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
const OTHER_PAYEE = randomAddress();

type SolanaWallet = { wallet_key_ref: string; address: string };

/** Solana wallets of one account of `signer`, and x402 `exact` payments from them (a fresh memo each). */
function solanaOps(signer: TestSigner, account: string) {
  let n = 0;
  return {
    account,
    async wallet(): Promise<SolanaWallet & { policy_authority: unknown }> {
      const w = await signer.client.createWalletKey({ account_key_ref: account, curve: 'ed25519' });
      assert.ok('curve' in w && w.curve === 'ed25519');
      return w;
    },
    async pay(w: SolanaWallet, amount: bigint, payTo: Address | null = PAY_TO) {
      const message = await paymentMessage({
        wallet: address(w.address),
        amount,
        payTo: payTo ?? PAY_TO,
        memo: `payment ${n++}`.padEnd(32, '.'),
      });
      return signer.client.signSolanaTransaction({
        account_key_ref: account,
        wallet_key_ref: w.wallet_key_ref,
        address: w.address,
        network: DEVNET,
        message: Buffer.from(message).toString('base64'),
        ...(payTo === null ? {} : { pay_to: payTo }),
      });
    },
  };
}

describe('owner-signed policies of Solana wallets against a compromised API (signer socket, own store)', function () {
  this.timeout(120_000);
  let signer: TestSigner;
  const stored = useStoredSigner('treasury-solana-owner-policies-', (started) => (signer = started));
  const owner = privateKeyToAccount(generatePrivateKey());
  const intruder = privateKeyToAccount(generatePrivateKey());
  const solanaOwner = newSolanaSigner();
  const solanaIntruder = newSolanaSigner();

  async function ownedAccount(by: PrivateKeyAccount = owner) {
    const made = await signer.client.call('create_account_key', { authority: await ownerAuthority(by) });
    return solanaOps(signer, made.account_key_ref);
  }

  async function denied(call: Promise<unknown>, rule: string) {
    const r = await refusal(call);
    assert.equal(r.code, 'policy_denied', `${rule}: ${JSON.stringify(r)}`);
    assert.ok(
      r.details.violations.some((v: { rule: string }) => v.rule === rule),
      `${rule} in ${JSON.stringify(r.details)}`,
    );
  }

  it('records a Solana wallet under its account’s authority, and reads its policy back by its base58 address', async () => {
    const ops = await ownedAccount();
    const w = await ops.wallet();
    assert.deepEqual(w.policy_authority, { kind: 'owner', address: owner.address });
    const before = await signer.client.call('get_wallet_policy', { address: w.address });
    assert.deepEqual(before, {
      address: w.address,
      authority: { kind: 'owner', address: owner.address },
      current: null,
    });
    const set = await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, {}, 1));
    assert.equal(set.address, w.address, 'base58 kept as spelled');
    const read = await signer.client.call('get_wallet_policy', { address: w.address });
    assert.equal(read.current?.version, 1);
    assert.equal(read.current?.policy_hash, set.policy_hash);
  });

  it('(a) refuses a policy its authority did not sign; (b) refuses an older or equal version', async () => {
    const ops = await ownedAccount();
    const w = await ops.wallet();
    const other = await ops.wallet();
    for (const forged of [
      await signedPolicy(intruder, w.address, {}, 1),
      statementSigned(solanaIntruder, w.address, {}, 1),
      // The owner's signature over another wallet's document.
      { ...(await signedPolicy(owner, other.address, {}, 1)), address: w.address },
    ]) {
      const r = await refusal(signer.client.call('set_wallet_policy', forged));
      assert.equal(r.code, 'policy_signature_invalid');
    }
    await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, { per_tx_cap_usd: '1' }, 1));
    await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, { per_tx_cap_usd: '1' }, 2));
    for (const version of [1, 2]) {
      const stale = await refusal(
        signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, { per_tx_cap_usd: '9' }, version)),
      );
      assert.equal(stale.code, 'policy_version_stale');
    }
    await denied(ops.pay(w, usd(1.01)), 'per_tx_cap_usd');
  });

  it('(c) refuses Solana payments the signed policy forbids, rule by rule, and signs those it allows', async () => {
    const ops = await ownedAccount();
    const cases: Array<
      [WalletPolicyInput, (w: SolanaWallet) => Promise<unknown>, (w: SolanaWallet) => Promise<unknown>, string]
    > = [
      [{ per_tx_cap_usd: '1' }, (w) => ops.pay(w, usd(1)), (w) => ops.pay(w, usd(1.01)), 'per_tx_cap_usd'],
      [{ daily_cap_usd: '1' }, (w) => ops.pay(w, usd(0.6)), (w) => ops.pay(w, usd(0.6)), 'daily_cap_usd'],
      [{ weekly_cap_usd: '1' }, (w) => ops.pay(w, usd(0.6)), (w) => ops.pay(w, usd(0.6)), 'weekly_cap_usd'],
      [{ monthly_cap_usd: '1' }, (w) => ops.pay(w, usd(0.6)), (w) => ops.pay(w, usd(0.6)), 'monthly_cap_usd'],
      [
        { velocity_cap: { max_count: 1, window_seconds: 3600 } },
        (w) => ops.pay(w, 1n),
        (w) => ops.pay(w, 1n),
        'velocity_cap',
      ],
      [
        { counterparty_allowlist: [PAY_TO] },
        (w) => ops.pay(w, 1n),
        (w) => ops.pay(w, 1n, OTHER_PAYEE),
        'counterparty_allowlist',
      ],
      [
        { counterparty_blocklist: [OTHER_PAYEE] },
        (w) => ops.pay(w, 1n),
        (w) => ops.pay(w, 1n, OTHER_PAYEE),
        'counterparty_blocklist',
      ],
      [{ cooling_off: 3600 }, (w) => ops.pay(w, 1n), (w) => ops.pay(w, 1n), 'cooling_off'],
    ];
    for (const [policy, allowed, refused, rule] of cases) {
      const w = await ops.wallet();
      await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, policy, 1));
      await allowed(w);
      await denied(refused(w), rule);
    }
  });

  it('records each Solana spend in its own store under the wallet and payee as spelled (base58 is case-sensitive)', async () => {
    const ops = await ownedAccount();
    const w = await ops.wallet();
    await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, { daily_cap_usd: '5' }, 1));
    await ops.pay(w, usd(0.25));
    await ops.pay(w, usd(0.5), OTHER_PAYEE);
    const client = new pg.Client(stored.store().connectionString);
    await client.connect();
    try {
      const { rows } = await client.query<{ address: string; payee: string; amount: string }>(
        'SELECT address, payee, amount::text FROM signer_spends WHERE address = $1 ORDER BY id',
        [w.address],
      );
      assert.deepEqual(rows, [
        { address: w.address, payee: PAY_TO, amount: '250000' },
        { address: w.address, payee: OTHER_PAYEE, amount: '500000' },
      ]);
    } finally {
      await client.end();
    }
  });

  it('(c) refuses a Solana payment that names no payee (pay_to): its counterparty rules could not be checked', async () => {
    const ops = await ownedAccount();
    const w = await ops.wallet();
    await signer.client.call(
      'set_wallet_policy',
      await signedPolicy(owner, w.address, { counterparty_blocklist: [PAY_TO] }, 1),
    );
    const r = await refusal(ops.pay(w, 1n, null));
    assert.equal(r.code, 'invariant_violation');
    assert.equal(r.details.rule, 'pay_to_required');
  });

  it('(c) spends before the first signed policy still count once it is signed', async () => {
    const ops = await ownedAccount();
    const w = await ops.wallet();
    await ops.pay(w, usd(0.6));
    await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, { daily_cap_usd: '1' }, 1));
    await denied(ops.pay(w, usd(0.6)), 'daily_cap_usd');
  });

  it('(d) keeps a Solana wallet’s windows across a kill -9 and a restart', async () => {
    const ops = await ownedAccount();
    const w = await ops.wallet();
    await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, { daily_cap_usd: '1' }, 1));
    await ops.pay(w, usd(0.6));
    await stored.restart(true);
    const after = solanaOps(signer, ops.account);
    await denied(after.pay(w, usd(0.6)), 'daily_cap_usd');
    await after.pay(w, usd(0.4));
    await denied(after.pay(w, 1n), 'daily_cap_usd');
  });

  it('(c) 64 Solana payments at once through two signer processes sharing the store stop exactly at the cap', async () => {
    const ops = await ownedAccount();
    const w = await ops.wallet();
    await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, { daily_cap_usd: '1' }, 1));
    const second = await stored.another();
    try {
      // Every message made first, so that the 64 requests reach the two signers together.
      const messages = await Promise.all(
        Array.from({ length: 64 }, (_, i) =>
          paymentMessage({ wallet: address(w.address), amount: usd(0.1), memo: `race ${i}`.padEnd(32, '.') }),
        ),
      );
      const outcomes = await Promise.allSettled(
        messages.map((m, i) =>
          (i % 2 === 0 ? signer : second).client.signSolanaTransaction({
            account_key_ref: ops.account,
            wallet_key_ref: w.wallet_key_ref,
            address: w.address,
            network: DEVNET,
            message: Buffer.from(m).toString('base64'),
            pay_to: PAY_TO,
          }),
        ),
      );
      const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [(o.reason as SignerError).code] : []));
      assert.equal(64 - refused.length, 10, 'ten payments of 0.10 fill a 1.00 day, whichever signer signed them');
      assert.deepEqual([...new Set(refused)], ['policy_denied']);
    } finally {
      await second.stop();
    }
  });

  it('(e) refuses a policy for a Solana wallet of another account, signed by that other account’s owner', async () => {
    const mine = await ownedAccount(owner);
    await ownedAccount(intruder);
    const w = await mine.wallet();
    const r = await refusal(signer.client.call('set_wallet_policy', await signedPolicy(intruder, w.address, {}, 1)));
    assert.equal(r.code, 'policy_signature_invalid');
    assert.equal(r.details.rule, 'authority');
  });

  it('a Solana owner (SIWS) signs a Solana wallet’s policy as the Ed25519 statement; EIP-712 does not stand for them', async () => {
    const made = await signer.client.call('create_account_key', { authority: siwsAuthority(solanaOwner) });
    const ops = solanaOps(signer, made.account_key_ref);
    const w = await ops.wallet();
    assert.deepEqual(w.policy_authority, { kind: 'owner', address: solanaOwner.address });
    const evmSigned = await refusal(
      signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, {}, 1)),
    );
    assert.equal(evmSigned.code, 'policy_signature_invalid');
    await signer.client.call('set_wallet_policy', statementSigned(solanaOwner, w.address, { per_tx_cap_usd: '1' }, 1));
    await ops.pay(w, usd(1));
    await denied(ops.pay(w, usd(2)), 'per_tx_cap_usd');
  });

  it("records a wallet made before the store kept records under its account's authority at its first payment", async () => {
    const made = await ownedAccount();
    const wallets = [await made.wallet(), await walletOps(signer, made.account).wallet()];
    // As a store made before it recorded wallets: no row for either, and a signer process that never saw them.
    const client = new pg.Client(stored.store().connectionString);
    await client.connect();
    try {
      await client.query('DELETE FROM signer_wallets WHERE address = ANY($1)', [
        wallets.map((w) => (w.address.startsWith('0x') ? w.address.toLowerCase() : w.address)),
      ]);
    } finally {
      await client.end();
    }
    await stored.restart(false);
    const ops = solanaOps(signer, made.account);
    const evm = walletOps(signer, made.account);
    const payOnce = [(w: SolanaWallet) => ops.pay(w, 1n), (w: SolanaWallet) => evm.sign(w, '1')];
    for (const [i, w] of wallets.entries()) {
      const before = await signer.client.call('get_wallet_policy', { address: w.address });
      assert.equal(before.authority, null, 'no record');
      await payOnce[i]!(w);
      const after = await signer.client.call('get_wallet_policy', { address: w.address });
      assert.deepEqual(after.authority, { kind: 'owner', address: owner.address });
      // Bound to the account's owner: another key cannot sign its first policy (no trust on first use left).
      const r = await refusal(signer.client.call('set_wallet_policy', await signedPolicy(intruder, w.address, {}, 1)));
      assert.deepEqual([r.code, r.details.rule], ['policy_signature_invalid', 'authority']);
      await signer.client.call('set_wallet_policy', await signedPolicy(owner, w.address, { per_tx_cap_usd: '1' }, 1));
    }
  });
});
