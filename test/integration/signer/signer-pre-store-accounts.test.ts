/**
 * Wallets of accounts the signer's store has no authority for — accounts made before the store kept them
 * (docs/adr/0012-owner-signed-policies.md, "A policy authority per account") — through a real signer process. Such an
 * account is simulated by deleting its `signer_accounts` row, a wallet made before the store by deleting its
 * `signer_wallets` row.
 *
 * Defends: a wallet the store recorded under such an account — made by `create_wallet_key`, or adopted at a payment
 * that proved its key the account's — bound by whoever signs its first policy (any key's `first_signer`, even with
 * `allow_key_destruction`). It is the deployment approver's, as an account whose front named nobody: refused
 * (`policy_signature_invalid`, rule `no_approver_configured`) while no approver is configured, else the approver's
 * signature only. What stays by design: a wallet the store has no record of and that has not paid since is bound to
 * its first signer, and to that key only from then on.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { outcome, ownerAuthority, refusal, signedPolicy, walletOps } from './signer-test-helpers.js';

const CENT = '10000';
/** No lease: every spend reaches the store before release, so a payment of a wallet without a row is adopted. */
const NO_LEASE = { TREASURY_SIGNER_OPEN_SPEND_LEASE_MS: '0' };

/** A signer with its own store and a client on that store, for the enclosing suite. */
function useSigner(env: Record<string, string>) {
  const held: { signer?: TestSigner; db?: pg.Client } = {};
  before(async () => {
    held.signer = await startTestSigner({ policyStore: true, env: { ...NO_LEASE, ...env } });
    held.db = new pg.Client({ connectionString: held.signer.policyStore!.connectionString });
    await held.db.connect();
  });
  after(async () => {
    await held.db?.end();
    await held.signer?.stop();
  });
  const owner = privateKeyToAccount(generatePrivateKey());
  /** An account of `owner`; `older`: its authority forgotten, as an account made before the store. */
  async function account(older: boolean) {
    const signer = held.signer!;
    const made = await signer.client.call('create_account_key', { authority: await ownerAuthority(owner) });
    if (older) {
      const hash = createHash('sha256').update(made.account_key_ref).digest('hex');
      const { rowCount } = await held.db!.query('DELETE FROM signer_accounts WHERE account_key_hash = $1', [hash]);
      assert.equal(rowCount, 1);
    }
    return { ...walletOps(signer, made.account_key_ref), signer };
  }
  /** Deletes a wallet's row (and nothing else: it has no spend, no policy), as a wallet made before the store. */
  const forget = async (address: string) =>
    assert.equal(
      (await held.db!.query('DELETE FROM signer_wallets WHERE address = $1', [address.toLowerCase()])).rowCount,
      1,
    );
  return { owner, account, forget, signer: () => held.signer! };
}

const set = (signer: TestSigner, document: Awaited<ReturnType<typeof signedPolicy>>) =>
  signer.client.call('set_wallet_policy', document);
const authorityOf = async (signer: TestSigner, address: string) =>
  (await signer.client.call('get_wallet_policy', { address })).authority;

describe('wallets of accounts older than the policy store: no first signer (signer socket, own store)', function () {
  this.timeout(120_000);
  const { owner, account, forget, signer } = useSigner({});
  const intruder = privateKeyToAccount(generatePrivateKey());

  it('a new wallet (create_wallet_key) is refused to any key while no approver is configured', async () => {
    const ops = await account(true);
    const w = await ops.wallet();
    const document = await signedPolicy(intruder, w.address, { allow_key_destruction: true } as never);
    const refused = await refusal(set(signer(), document));
    assert.deepEqual([refused.code, refused.details.rule], ['policy_signature_invalid', 'no_approver_configured']);
    // The owner the front names is not on the signer's record either.
    const byOwner = await refusal(set(signer(), await signedPolicy(owner, w.address, { per_tx_cap_usd: '1' })));
    assert.equal(byOwner.code, 'policy_signature_invalid');
    const approver = { kind: 'approver', address: null };
    assert.deepEqual(w.policy_authority, approver, 'create_wallet_key says whose it is');
    assert.deepEqual(await authorityOf(signer(), w.address), approver);
    // Unbound, it pays on the signer's ceilings as before.
    assert.equal(await outcome(ops.sign(w, CENT)), 'signed');
  });

  it('a wallet adopted at its first payment under such an account is refused to any key too', async () => {
    const ops = await account(true);
    const w = await ops.wallet();
    await forget(w.address);
    assert.equal(await authorityOf(signer(), w.address), null, 'no record');
    assert.equal(await outcome(ops.sign(w, CENT)), 'signed');
    const refused = await refusal(set(signer(), await signedPolicy(intruder, w.address, {})));
    assert.deepEqual([refused.code, refused.details.rule], ['policy_signature_invalid', 'no_approver_configured']);
    assert.deepEqual(await authorityOf(signer(), w.address), { kind: 'approver', address: null }, 'adopted');
  });

  it('by design: a wallet the store has no record of, not paid since, is bound to its first signer only', async () => {
    const ops = await account(false);
    const w = await ops.wallet();
    await forget(w.address);
    const first = privateKeyToAccount(generatePrivateKey());
    const kept = await set(signer(), await signedPolicy(first, w.address, { per_tx_cap_usd: '1' }));
    const bound = { kind: 'first_signer', address: first.address };
    assert.deepEqual(kept.authority, bound);
    assert.deepEqual(await authorityOf(signer(), w.address), bound);
    const refused = await refusal(set(signer(), await signedPolicy(intruder, w.address, {}, 2)));
    assert.deepEqual([refused.code, refused.details.rule], ['policy_signature_invalid', 'authority']);
    await set(signer(), await signedPolicy(first, w.address, { per_tx_cap_usd: '0.5' }, 2));
    assert.equal(await outcome(ops.sign(w, '500001')), 'policy_denied');
  });
});

describe('wallets of accounts older than the policy store: the approver (signer socket, own store)', function () {
  this.timeout(120_000);
  const approver = privateKeyToAccount(generatePrivateKey());
  const { account, signer } = useSigner({ TREASURY_SIGNER_POLICY_APPROVER: approver.address });
  const intruder = privateKeyToAccount(generatePrivateKey());

  it("takes the configured approver's signature, and nobody else's", async () => {
    const ops = await account(true);
    const w = await ops.wallet();
    const refused = await refusal(set(signer(), await signedPolicy(intruder, w.address, {})));
    assert.deepEqual([refused.code, refused.details.rule], ['policy_signature_invalid', 'authority']);
    const byApprover = { kind: 'approver', address: approver.address };
    assert.deepEqual(w.policy_authority, byApprover);
    const kept = await set(signer(), await signedPolicy(approver, w.address, { per_tx_cap_usd: '0.5' }));
    assert.deepEqual(kept.authority, byApprover);
    assert.equal(await outcome(ops.sign(w, '500001')), 'policy_denied');
    assert.equal(await outcome(ops.sign(w, CENT)), 'signed');
  });
});
