/**
 * Destroying the key of a wallet under an owner-signed policy (docs/adr/0012-owner-signed-policies.md), through
 * HTTP, the real signer (with its own policy store) and PostgreSQL: the signer destroys a key only when the
 * wallet's signed policy carries `allow_key_destruction: true`, so the API refuses a rotation or revocation up
 * front (409 `key_destruction_not_allowed`, nothing changed, the wallet still pays) until the owner signs a
 * policy with it. A compromised API — its stored policy rewritten to carry the flag, or a key it retired in its
 * own database — gets no key destroyed: the key survives, retired, until the owner allows it, and the retry
 * (`destroyRetiredKeys`) then destroys it. A wallet without a signed policy rotates and revokes as before, every
 * destruction naming the address of its key; a Solana wallet follows the same rule.
 */
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { SignerError } from '../../../signer/protocol/signer-client.js';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { policyTypedData } from '../../../policy/signed-policy.js';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import type { SignerGateway } from '../../../src/api/signing/signer-gateway.js';
import { paymentRequirements, SELLER_ADDRESS } from '../../builders/payment-requirements.js';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInBody, signInWithTreasuryPat } from '../../support/sign-in.js';

const USDC_SEPOLIA = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
/** No RPC for these wallets' network here: a rotation or revocation abandons the balance it cannot read. */
const ABANDON = { abandon_balance: true };
/** What the owner signs: $1 a payment, the seller only. */
const SIGNED = { per_tx_cap_usd: '1', counterparty_allowlist: [SELLER_ADDRESS] };
const ALLOWED = { ...SIGNED, allow_key_destruction: true };

interface SignerCall {
  method: string;
  params: Record<string, unknown>;
}

/**
 * Wraps the API's own signer gateway: every call is recorded, and `before` runs ahead of each (with the
 * gateway's own call, to act as someone else would meanwhile). `restore` puts the gateway back.
 */
function watchSigner(t: TestTreasury, before?: (call: SignerCall, original: SignerGateway['call']) => Promise<void>) {
  const gateway = t.app.services.signer;
  const original = gateway.call.bind(gateway) as SignerGateway['call'];
  const calls: SignerCall[] = [];
  gateway.call = (async (method: string, params: Record<string, unknown>) => {
    calls.push({ method, params });
    await before?.({ method, params }, original);
    return original(method as never, params as never);
  }) as SignerGateway['call'];
  return {
    calls,
    destroyed: () => calls.filter((c) => c.method === 'destroy_wallet_key').map((c) => c.params),
    restore: () => Reflect.deleteProperty(gateway, 'call'),
  };
}

/** The owner's EIP-712 signature of `policy` at `version` for the wallet, as PUT …/policy/signed takes it. */
async function signedBody(
  owner: PrivateKeyAccount,
  wallet: { address: string },
  policy: Record<string, unknown>,
  version: number,
) {
  const issuedAt = Math.floor(Date.now() / 1000);
  const parsed = walletPolicySchema.parse(policy);
  const signature = await owner.signTypedData(
    policyTypedData({ wallet: wallet.address, policy: parsed, version, issuedAt }),
  );
  return { policy, version, issued_at: issuedAt, signature };
}

describe('owner-signed key destruction (HTTP, signer policy store, PostgreSQL)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let owner: PrivateKeyAccount;
  let pat: string;

  before(async () => {
    t = await startTestTreasury();
    owner = privateKeyToAccount(generatePrivateKey());
    ({ pat } = await signInWithTreasuryPat(t, await signInBody(t, undefined, owner)));
  });
  after(async () => {
    await t?.stop();
  });

  async function newWallet(): Promise<{ id: string; address: string }> {
    const res = await t.request('POST', '/v1/wallets', { token: pat, body: { policy: { per_tx_cap_usd: '1' } } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body;
  }

  async function putSigned(wallet: { id: string; address: string }, policy: Record<string, unknown>, version: number) {
    const res = await t.request('PUT', `/v1/wallets/${wallet.id}/policy/signed`, {
      token: pat,
      body: await signedBody(owner, wallet, policy, version),
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  }

  /** The owner's document handed to the signer directly (the API refuses any policy change of a revoked wallet). */
  async function signAtSigner(address: string, policy: Record<string, unknown>, version: number) {
    const body = await signedBody(owner, { address }, policy, version);
    await t.app.services.signer.call('set_wallet_policy', {
      address,
      ...body,
      policy: walletPolicySchema.parse(policy),
    });
  }

  const retire = (walletId: string, operation: 'rotate' | 'revoke') =>
    t.request('POST', `/v1/wallets/${walletId}/${operation}`, { token: pat, body: ABANDON });

  const pay = (walletId: string) =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token: pat,
      body: {
        payment_requirements: paymentRequirements({ amount: '100000', payTo: SELLER_ADDRESS, maxTimeoutSeconds: 300 }),
      },
    });

  /** A transfer authorization to the seller signed with the key `keyRef` directly at the signer (the API bypassed). */
  async function signWithKey(walletId: string, keyRef: string, address: string) {
    const wallet = await t.db.knex('wallets').where({ id: walletId }).first();
    const account = await t.db.knex('treasury_accounts').where({ id: wallet.account_id }).first();
    const now = Math.floor(Date.now() / 1000);
    return t.signer.client.signTransferAuthorization({
      account_key_ref: account.account_key_ref,
      wallet_key_ref: keyRef,
      address,
      domain: { name: 'USDC', version: '2', chainId: 84532, verifyingContract: USDC_SEPOLIA },
      message: {
        from: address,
        to: SELLER_ADDRESS,
        value: '10000',
        validAfter: String(now - 60),
        validBefore: String(now + 300),
        nonce: `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}`,
      },
    });
  }

  const keyDestroyed = (err: unknown) => err instanceof SignerError && err.code === 'key_destroyed';

  async function keysOf(walletId: string) {
    return t.db.knex('wallet_keys').where({ wallet_id: walletId }).orderBy('version');
  }

  /** treasury_wallet_operations_total of key destructions with `outcome`, as /metrics shows it. */
  async function destroyKeyOutcomes(outcome: string): Promise<number> {
    const text = (await t.request('GET', '/metrics')).body as string;
    const line = text
      .split('\n')
      .find(
        (l) =>
          l.startsWith('treasury_wallet_operations_total{') &&
          l.includes('operation="destroy_key"') &&
          l.includes(`outcome="${outcome}"`),
      );
    return line ? Number(line.split(' ').pop()) : 0;
  }

  it('refuses revoke and rotate of a wallet whose signed policy lacks allow_key_destruction (409), changing nothing', async () => {
    const wallet = await newWallet();
    await putSigned(wallet, SIGNED, 1);
    const before = await t.db.knex('wallets').where({ id: wallet.id }).first();
    const watched = watchSigner(t);
    try {
      for (const operation of ['revoke', 'rotate'] as const) {
        const refused = await retire(wallet.id, operation);
        assert.equal(refused.status, 409, `${operation}: ${JSON.stringify(refused.body)}`);
        assert.equal(refused.body.error_code, 'key_destruction_not_allowed');
        assert.deepEqual(
          [refused.body.rule, refused.body.current_version, refused.body.next_version],
          ['owner_policy', 1, 2],
        );
        assert.match(refused.body.user_message, /allow_key_destruction: true/);
      }
    } finally {
      watched.restore();
    }
    assert.deepEqual(watched.destroyed(), [], 'no key was destroyed');
    assert.equal(
      watched.calls.filter((c) => c.method === 'create_wallet_key').length,
      0,
      'no key was made for the rotation',
    );
    const after = await t.db.knex('wallets').where({ id: wallet.id }).first();
    assert.deepEqual(after, before, 'the wallet row is unchanged');
    const keys = await keysOf(wallet.id);
    assert.deepEqual(
      keys.map((k: { retired_at: Date | null }) => k.retired_at),
      [null],
    );
    const events = await t.db.knex('audit_events').where({ chain_key: wallet.id }).orderBy('seq');
    assert.deepEqual(
      events.map((e: { event_type: string }) => e.event_type),
      ['wallet.created', 'policy.signed'],
    );
    assert.equal((await pay(wallet.id)).status, 200, 'the wallet still pays');
    await signWithKey(wallet.id, before.wallet_key_ref, wallet.address);
  });

  it('revokes once the owner signs a newer policy with allow_key_destruction: true; the signer refuses the old key after', async () => {
    const wallet = await newWallet();
    await putSigned(wallet, SIGNED, 1);
    assert.equal((await retire(wallet.id, 'revoke')).status, 409);
    const allowed = await putSigned(wallet, ALLOWED, 2);
    assert.equal(allowed.policy.allow_key_destruction, true);
    const keyRef = (await t.db.knex('wallets').where({ id: wallet.id }).first()).wallet_key_ref as string;
    const watched = watchSigner(t);
    const revoked = await retire(wallet.id, 'revoke').finally(() => watched.restore());
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    assert.equal(revoked.body.status, 'revoked');
    assert.equal(watched.destroyed()[0]?.address, wallet.address, 'the destruction names the wallet address');
    const [key] = await keysOf(wallet.id);
    assert.ok(key.destroyed_at, 'the key is destroyed');
    await assert.rejects(signWithKey(wallet.id, keyRef, wallet.address), keyDestroyed);
    assert.equal((await pay(wallet.id)).body.error_code, 'wallet_revoked');
  });

  it('rotates once allowed: the old key destroyed (named by the old address), the new address under no signed policy', async () => {
    const wallet = await newWallet();
    await putSigned(wallet, SIGNED, 1);
    assert.equal((await retire(wallet.id, 'rotate')).status, 409);
    await putSigned(wallet, ALLOWED, 2);
    const keyRef = (await t.db.knex('wallets').where({ id: wallet.id }).first()).wallet_key_ref as string;
    const watched = watchSigner(t);
    const rotated = await retire(wallet.id, 'rotate').finally(() => watched.restore());
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    assert.notEqual(rotated.body.address, wallet.address);
    assert.equal(watched.destroyed()[0]?.address, wallet.address, 'the destruction names the old address');
    assert.ok((await keysOf(wallet.id))[0].destroyed_at, 'the old key is destroyed');
    await assert.rejects(signWithKey(wallet.id, keyRef, wallet.address), keyDestroyed);
    // The signed document named the old address: the new one has none yet (the policy stays as the API's own).
    assert.equal(rotated.body.policy_state, 'ceilings_only');
    assert.deepEqual(rotated.body.policy, ALLOWED);
    const read = await t.request('GET', `/v1/wallets/${wallet.id}/policy`, { token: pat });
    assert.deepEqual([read.body.owner_policy.state, read.body.owner_policy.next_version], ['ceilings_only', 1]);
    const held = await t.app.services.signer.call('get_wallet_policy', { address: wallet.address });
    assert.equal(held.current?.version, 2, "the signer keeps the old address's document");
  });

  it('a compromised API gets no key destroyed: its rewritten copy of the policy is not believed, a key it retires itself survives until the owner allows it', async () => {
    const wallet = await newWallet();
    await putSigned(wallet, SIGNED, 1);
    const keyRef = (await t.db.knex('wallets').where({ id: wallet.id }).first()).wallet_key_ref as string;
    // The API's database says the owner signed the flag (a later version, even): it does not hash to the signer's.
    await t.db
      .knex('wallets')
      .where({ id: wallet.id })
      .update({ policy: JSON.stringify(ALLOWED), policy_version: 7 });
    t.app.services.pay.forgetWallet(wallet.id);
    const refused = await retire(wallet.id, 'revoke');
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.deepEqual([refused.body.error_code, refused.body.current_version], ['key_destruction_not_allowed', 1]);

    // The database rewritten further: the wallet revoked and its key retired, for the retry to destroy.
    await t.db.knex('wallets').where({ id: wallet.id }).update({ status: 'revoked', revoked_at: new Date() });
    await t.db.knex('wallet_keys').where({ wallet_id: wallet.id }).update({ retired_at: new Date() });
    const refusedBefore = await destroyKeyOutcomes('key_destruction_not_allowed');
    await t.app.services.wallets.destroyRetiredKeys();
    const [kept] = await keysOf(wallet.id);
    assert.deepEqual([kept.destroyed_at, kept.wallet_key_ref], [null, keyRef], 'the key stays, retired');
    assert.equal(await destroyKeyOutcomes('key_destruction_not_allowed'), refusedBefore + 1);
    await signWithKey(wallet.id, keyRef, wallet.address);

    // The owner lets it go (to the signer directly: the API takes no policy for a revoked wallet); the retry destroys it.
    await signAtSigner(wallet.address, ALLOWED, 2);
    await t.app.services.wallets.destroyRetiredKeys();
    const [gone] = await keysOf(wallet.id);
    assert.ok(gone.destroyed_at, 'destroyed once allowed');
    await assert.rejects(signWithKey(wallet.id, keyRef, wallet.address), keyDestroyed);
  });

  it('keeps the old key retired when the owner withdraws the flag while a rotation is in flight, and destroys it once allowed again', async () => {
    const wallet = await newWallet();
    await putSigned(wallet, ALLOWED, 1);
    const keyRef = (await t.db.knex('wallets').where({ id: wallet.id }).first()).wallet_key_ref as string;
    // The owner's version 2 without the flag reaches the signer after the check, before the destruction.
    const watched = watchSigner(t, async ({ method }, original) => {
      if (method !== 'destroy_wallet_key') return;
      const body = await signedBody(owner, wallet, SIGNED, 2);
      await original('set_wallet_policy', {
        address: wallet.address,
        ...body,
        policy: walletPolicySchema.parse(SIGNED),
      });
    });
    const refusedBefore = await destroyKeyOutcomes('key_destruction_not_allowed');
    const rotated = await retire(wallet.id, 'rotate').finally(() => watched.restore());
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    const [old] = await keysOf(wallet.id);
    assert.ok(old.retired_at, 'the old key is retired');
    assert.deepEqual([old.destroyed_at, old.wallet_key_ref], [null, keyRef], 'and kept');
    assert.equal(await destroyKeyOutcomes('key_destruction_not_allowed'), refusedBefore + 1);
    await signWithKey(wallet.id, keyRef, wallet.address);

    await t.app.services.wallets.destroyRetiredKeys();
    assert.equal((await keysOf(wallet.id))[0].destroyed_at, null, 'the retry is refused too');
    await signAtSigner(wallet.address, ALLOWED, 3);
    await t.app.services.wallets.destroyRetiredKeys();
    assert.ok((await keysOf(wallet.id))[0].destroyed_at, 'destroyed once allowed again');
    await assert.rejects(signWithKey(wallet.id, keyRef, wallet.address), keyDestroyed);
  });

  it('rotates and revokes a wallet with no signed policy as before, each destruction naming its address', async () => {
    const wallet = await newWallet();
    const watched = watchSigner(t);
    try {
      const rotated = await retire(wallet.id, 'rotate');
      assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
      const revoked = await retire(wallet.id, 'revoke');
      assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
      assert.deepEqual(
        watched.destroyed().map((p) => p.address),
        [wallet.address, rotated.body.address],
      );
    } finally {
      watched.restore();
    }
    const keys = await keysOf(wallet.id);
    assert.ok(
      keys.every((k: { destroyed_at: Date | null }) => k.destroyed_at),
      'both keys destroyed',
    );
  });
});

describe('key destruction with a signer that keeps no policy store', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  before(async () => {
    t = await startTestTreasury({ policyStore: false });
  });
  after(async () => {
    await t?.stop();
  });

  it('rotates and revokes without asking for a signed policy; each destruction still names its address', async () => {
    const token = await mintAgentKey(t, 'no-store-destroy');
    const made = await t.request('POST', '/v1/wallets', { token, body: {} });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const watched = watchSigner(t);
    try {
      const rotated = await t.request('POST', `/v1/wallets/${made.body.id}/rotate`, { token, body: ABANDON });
      assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
      const revoked = await t.request('POST', `/v1/wallets/${made.body.id}/revoke`, { token, body: ABANDON });
      assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
      assert.deepEqual(
        watched.destroyed().map((p) => p.address),
        [made.body.address, rotated.body.address],
      );
    } finally {
      watched.restore();
    }
    const keys = await t.db.knex('wallet_keys').where({ wallet_id: made.body.id });
    assert.ok(keys.every((k: { destroyed_at: Date | null }) => k.destroyed_at));
  });
});

describe('owner-signed key destruction of a Solana wallet (HTTP, signer policy store, offline Solana chain)', function () {
  this.timeout(180_000);
  let solana: LocalSolana;
  let t: TestTreasury;
  let owner: PrivateKeyAccount;
  let pat: string;

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    t = await startTestTreasury({
      extraEnv: { TREASURY_SOLANA_RPC_URL: solana.rpcUrl, TREASURY_RPC_TIMEOUT_MS: '20000' },
    });
    owner = privateKeyToAccount(generatePrivateKey());
    ({ pat } = await signInWithTreasuryPat(t, await signInBody(t, undefined, owner)));
  });
  after(async () => {
    await t?.stop();
    await solana?.stop();
  });

  it('refuses to revoke until the owner signs allow_key_destruction, then rotates and destroys the Ed25519 key', async () => {
    const made = await t.request('POST', '/v1/wallets', { token: pat, body: { chain: 'solana-devnet', policy: {} } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const wallet = made.body as { id: string; address: string };
    const payTo: Address = (await generateKeyPairSigner()).address;
    const put = async (policy: Record<string, unknown>, version: number) => {
      const res = await t.request('PUT', `/v1/wallets/${wallet.id}/policy/signed`, {
        token: pat,
        body: await signedBody(owner, wallet, policy, version),
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    };
    await put({ per_tx_cap_usd: '1', counterparty_allowlist: [payTo] }, 1);
    for (const operation of ['revoke', 'rotate']) {
      const refused = await t.request('POST', `/v1/wallets/${wallet.id}/${operation}`, { token: pat, body: {} });
      assert.equal(refused.status, 409, `${operation}: ${JSON.stringify(refused.body)}`);
      assert.equal(refused.body.error_code, 'key_destruction_not_allowed');
    }
    const unchanged = await t.db.knex('wallets').where({ id: wallet.id }).first();
    assert.deepEqual([unchanged.status, unchanged.key_version, unchanged.address], ['active', 1, wallet.address]);

    await put({ per_tx_cap_usd: '1', counterparty_allowlist: [payTo], allow_key_destruction: true }, 2);
    const watched = watchSigner(t);
    const rotated = await t.request('POST', `/v1/wallets/${wallet.id}/rotate`, { token: pat, body: {} });
    watched.restore();
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    assert.equal(watched.destroyed()[0]?.address, wallet.address, 'the base58 address of the old key');
    const [old] = await t.db.knex('wallet_keys').where({ wallet_id: wallet.id }).orderBy('version');
    assert.ok(old.destroyed_at, 'the old Ed25519 key is destroyed');
  });
});
