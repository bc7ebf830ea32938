/**
 * The wallet service's own rules, over the in-memory store (test/support/fake-wallet-store.ts) and a stand-in
 * signer: a wallet past the account's bound is refused before the signer makes a key; another account's
 * wallet is not found and a revoked one is gone, and neither refusal writes anything; a key whose destruction
 * failed is destroyed by a later retry. Under an owner-signed policy (docs/adr/0012-owner-signed-policies.md) a
 * rotation or revocation is refused before anything is written unless the policy the signer holds — the API's
 * copy counts only when it hashes to it — carries `allow_key_destruction: true`; every destruction names the
 * address of its key; one the signer still refuses leaves the key retired (warned, counted) for a later try. The
 * PostgreSQL store is exercised by test/integration/api/wallet-lifecycle.test.ts, tenant-bounds.test.ts and
 * owner-signed-key-destruction.test.ts.
 */
import assert from 'node:assert/strict';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { policyDocumentHash } from '../../../policy/signed-policy.js';
import { ChainRegistry } from '../../../src/shared/chain-registry.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import { keyDestructionNotAllowed, NO_POLICY_STORE } from '../../../src/api/signing/owner-policy-errors.js';
import { WalletService } from '../../../src/api/wallets/wallet-service.js';
import { FakeWalletStore } from '../../support/fake-wallet-store.js';
import { captureLog } from '../../support/log-capture.js';

const ACCOUNT = 'acct_a';
const OTHER = 'acct_b';

function setup(maxPerAccount = 5) {
  const store = new FakeWalletStore();
  store.accountKeys.set(ACCOUNT, 'akey_a');
  const calls: string[] = [];
  /** Each destroy_wallet_key the signer carried out, with its params. */
  const destroyed: Array<Record<string, unknown>> = [];
  /** The signed document the signer holds per address (version and policy hash). */
  const held = new Map<string, { version: number; policy_hash: string }>();
  let keys = 0;
  let destroyFails: AppError | undefined;
  let noPolicyStore = false;
  const signer = {
    call: async (method: string, params: Record<string, unknown>) => {
      calls.push(method);
      if (method === 'get_wallet_policy') {
        if (noPolicyStore)
          throw new AppError('signer_unavailable', {
            fields: { reason: 'policy_store_unavailable', rule: NO_POLICY_STORE },
          });
        const current = held.get(params.address as string);
        return { address: params.address, authority: null, current: current ? { ...current, issued_at: 1 } : null };
      }
      if (method === 'destroy_wallet_key') {
        if (destroyFails) throw destroyFails;
        destroyed.push(params);
        return { destroyed: true };
      }
      keys++;
      return {
        address: `0x${keys.toString(16).padStart(40, '0')}`,
        public_key: `0x04${keys}`,
        wallet_key_ref: `wkey_${keys}`,
      };
    },
  };
  const chains = ChainRegistry.fromConfig(undefined);
  const metrics = createTreasuryMetrics();
  const captured = captureLog('warn');
  const wallets = new WalletService({
    store,
    signer: signer as never,
    accounts: { get: async (id: string) => ({ account_key_ref: `akey_${id}` }) as never },
    chains,
    metrics,
    log: captured.log,
    defaultChain: chains.chains[0]!.name,
    balances: { usdcBalance: async () => assert.fail('abandon_balance reads no balance') },
    bounds: { maxPerAgent: 2, maxPerAccount, agentDailyCapUsd: '10.00', agentPerTxCapUsd: '1.00' },
  });
  /** The owner signs `policy` at `version`: the signer holds it, and the API stores its copy (`stored`, if other). */
  const sign = (wallet: { id: string; address: string }, policy: object, version: number, stored = policy) => {
    held.set(wallet.address, { version, policy_hash: policyDocumentHash(walletPolicySchema.parse(policy)) });
    const row = store.wallets.get(wallet.id)!;
    store.wallets.set(wallet.id, { ...row, policy: { ...stored }, policy_version: String(version) });
  };
  return {
    store,
    wallets,
    calls,
    destroyed,
    sign,
    metrics,
    captured,
    failDestroy: (fails: boolean | AppError) =>
      (destroyFails = fails === true ? new AppError('signer_unavailable') : fails || undefined),
    withoutPolicyStore: () => (noPolicyStore = true),
  };
}

const code = (expected: string) => (err: unknown) => err instanceof AppError && err.code === expected;

describe('wallet service (over the in-memory store)', () => {
  it("refuses a wallet past the account's bound before the signer makes a key", async () => {
    const { wallets, calls, store } = setup(1);
    await wallets.create(ACCOUNT, {}, 'actor');
    await assert.rejects(wallets.create(ACCOUNT, {}, 'actor'), code('wallet_limit_reached'));
    assert.deepEqual(calls, ['create_wallet_key'], 'one key made, for the first wallet only');
    assert.equal(store.wallets.size, 1);
  });

  it("answers another account's wallet as missing and a revoked one as gone, writing nothing", async () => {
    const { wallets, store } = setup();
    const wallet = await wallets.create(ACCOUNT, {}, 'actor');
    await assert.rejects(
      wallets.setPolicy(OTHER, wallet.id, { per_tx_cap_usd: '1.00' }, 'x'),
      code('wallet_not_found'),
    );
    await assert.rejects(wallets.revoke(OTHER, wallet.id, 'x', true), code('wallet_not_found'));
    await wallets.revoke(ACCOUNT, wallet.id, 'actor', true);
    await assert.rejects(wallets.getActive(ACCOUNT, wallet.id), code('wallet_revoked'));
    await assert.rejects(wallets.rotate(ACCOUNT, wallet.id, 'actor', true), code('wallet_revoked'));
    assert.deepEqual(
      store.audit.map((a) => a.eventType),
      ['wallet.created', 'wallet.revoked'],
    );
    assert.deepEqual(store.wallets.get(wallet.id)!.policy, {});
  });

  it('destroys later a retired key whose destruction failed', async () => {
    const { wallets, store, failDestroy } = setup();
    const wallet = await wallets.create(ACCOUNT, {}, 'actor');
    failDestroy(true);
    const rotated = await wallets.rotate(ACCOUNT, wallet.id, 'actor', true);
    assert.equal(rotated.key_version, 2);
    assert.notEqual(rotated.address, wallet.address);
    assert.equal((await store.retiredKeys()).length, 1, 'the old key waits, retired');
    assert.equal(await wallets.destroyRetiredKeys(), 0, 'the signer still fails');
    failDestroy(false);
    assert.equal(await wallets.destroyRetiredKeys(), 1);
    assert.equal(await wallets.destroyRetiredKeys(), 0, 'nothing left to do');
  });

  it('refuses to rotate or revoke a wallet whose owner-signed policy does not allow key destruction, writing nothing', async () => {
    const { wallets, store, calls, sign } = setup();
    const wallet = await wallets.create(ACCOUNT, {}, 'actor');
    sign(wallet, { per_tx_cap_usd: '1' }, 3);
    for (const retire of [
      () => wallets.revoke(ACCOUNT, wallet.id, 'actor', true),
      () => wallets.rotate(ACCOUNT, wallet.id, 'actor', true),
    ]) {
      await assert.rejects(retire(), (err: unknown) => {
        assert.ok(err instanceof AppError && err.code === 'key_destruction_not_allowed', String(err));
        assert.equal(err.status, 409);
        assert.deepEqual(err.fields, { rule: 'owner_policy', current_version: 3, next_version: 4 });
        return true;
      });
    }
    assert.deepEqual(
      calls,
      ['create_wallet_key', 'get_wallet_policy', 'get_wallet_policy'],
      'no key made or destroyed',
    );
    assert.deepEqual(
      store.audit.map((a) => a.eventType),
      ['wallet.created'],
    );
    const row = store.wallets.get(wallet.id)!;
    assert.deepEqual([row.status, row.key_version, row.address], ['active', 1, wallet.address]);
    assert.equal((await store.retiredKeys()).length, 0);
  });

  it("believes the API's copy of allow_key_destruction only when it hashes to the document the signer holds", async () => {
    const { wallets, store, destroyed, sign } = setup();
    const wallet = await wallets.create(ACCOUNT, {}, 'actor');
    // The API's copy rewritten to carry the flag: the signer's document (version 1) does not.
    sign(wallet, { per_tx_cap_usd: '1' }, 1, { per_tx_cap_usd: '1', allow_key_destruction: true });
    await assert.rejects(wallets.revoke(ACCOUNT, wallet.id, 'actor', true), code('key_destruction_not_allowed'));
    assert.equal(store.wallets.get(wallet.id)!.status, 'active');
    // The owner signs version 2 with the flag: the copy is that document.
    sign(wallet, { per_tx_cap_usd: '1', allow_key_destruction: true }, 2);
    const revoked = await wallets.revoke(ACCOUNT, wallet.id, 'actor', true);
    assert.equal(revoked.status, 'revoked');
    assert.deepEqual(destroyed, [
      { account_key_ref: 'akey_acct_a', wallet_key_ref: 'wkey_1', address: wallet.address },
    ]);
  });

  it('names the old address when a rotation destroys its key; goes on when the signer keeps no policy store', async () => {
    const { wallets, calls, destroyed, withoutPolicyStore } = setup();
    const wallet = await wallets.create(ACCOUNT, {}, 'actor');
    withoutPolicyStore();
    const rotated = await wallets.rotate(ACCOUNT, wallet.id, 'actor', true);
    assert.notEqual(rotated.address, wallet.address);
    assert.deepEqual(destroyed, [
      { account_key_ref: 'akey_acct_a', wallet_key_ref: 'wkey_1', address: wallet.address },
    ]);
    await wallets.revoke(ACCOUNT, wallet.id, 'actor', true);
    assert.deepEqual(destroyed[1], {
      account_key_ref: 'akey_acct_a',
      wallet_key_ref: 'wkey_2',
      address: rotated.address,
    });
    assert.equal(calls.filter((c) => c === 'get_wallet_policy').length, 2, 'asked, and answered no_policy_store');
  });

  it('keeps a key retired when the signer still refuses its destruction (a newer policy landed meanwhile), then destroys it once allowed', async () => {
    const { wallets, store, destroyed, sign, failDestroy, metrics, captured } = setup();
    const wallet = await wallets.create(ACCOUNT, {}, 'actor');
    sign(wallet, { allow_key_destruction: true }, 1);
    failDestroy(keyDestructionNotAllowed(2));
    const rotated = await wallets.rotate(ACCOUNT, wallet.id, 'actor', true);
    assert.equal(rotated.key_version, 2, 'the rotation stands');
    assert.deepEqual(
      (await store.retiredKeys()).map((k) => [k.version, k.wallet_key_ref, k.address]),
      [[1, 'wkey_1', wallet.address]],
    );
    assert.equal(await wallets.destroyRetiredKeys(), 0, 'still refused');
    const warned = captured.lines.map((l) => JSON.parse(l)).filter((l) => l.code === 'key_destruction_not_allowed');
    assert.equal(warned.length, 2);
    assert.deepEqual(
      [warned[0].level, warned[0].wallet_id, warned[0].key_version, warned[0].current_version],
      [40, wallet.id, 1, 2],
    );
    const counted = (await metrics.walletOperations.get()).values.find(
      (v) => v.labels.operation === 'destroy_key' && v.labels.outcome === 'key_destruction_not_allowed',
    );
    assert.equal(counted?.value, 2);
    failDestroy(false);
    assert.equal(await wallets.destroyRetiredKeys(), 1);
    assert.deepEqual(destroyed, [{ account_key_ref: 'akey_a', wallet_key_ref: 'wkey_1', address: wallet.address }]);
    assert.equal((await store.retiredKeys()).length, 0);
  });
});
