/**
 * `destroy_wallet_key` in the signer service (signer/key-destruction/), with an in-memory backend whose destroys can
 * be held and a policy store held in memory behind the real OwnerPolicies: with a store, the key must prove itself
 * the named address's by signing the signer's own probe (never counted in the ceilings), and the wallet's signed
 * policy must allow it; and once a destroy has started, a signature of the key the backend returned (while the destroy
 * ran, while the payment's spend committed, while the store adopted the wallet) answers `key_destroyed` and gives its
 * ceilings and spend back; a refused or failed destroy leaves the key signing.
 */
import assert from 'node:assert/strict';
import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { getAddressDecoder } from '@solana/kit';
import type { KeyBackend } from '../../../signer/backends/key-backend.js';
import { publicKeyToAddress } from '../../../signer/ecdsa/public-key-to-address.js';
import { WalletLimiter } from '../../../signer/limits/wallet-limiter.js';
import { OwnerPolicies } from '../../../signer/owner-policy/owner-policies.js';
import type { OwnerPolicyStore, ReservedSpend, WalletRecord } from '../../../signer/owner-policy/owner-policy-store.js';
import { signerRequestSchema } from '../../../signer/protocol/signer-protocol.js';
import { SignerService } from '../../../signer/signer-service.js';
import { SignerFault } from '../../../signer/signer-error.js';
import {
  TEST_PAYEE,
  testSignerInvariants,
  transferAuthorizationRequest,
} from '../../support/signer-service-fixtures.js';

const PAYEE = TEST_PAYEE;
const ACCOUNT = 'p11:v1:acct:test';

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Wallet keys in memory by reference (their identity), tombstones, destroys that can be held, the digests signed. */
function memoryBackend() {
  const keys = new Map<string, { curve: 'secp256k1' | 'ed25519'; secret: Uint8Array }>();
  const tombstones = new Set<string>();
  const live = (ref: string, curve: 'secp256k1' | 'ed25519') => {
    const key = keys.get(ref);
    if (tombstones.has(ref)) throw new SignerFault('key_destroyed', 'destroyed');
    if (!key) throw new SignerFault('key_not_found', 'no such key');
    if (key.curve !== curve) throw new SignerFault('invariant_violation', 'another curve');
    return key.secret;
  };
  const backend = {
    kind: 'pkcs11' as const,
    digests: [] as Uint8Array[],
    destroys: 0,
    holdDestroy: undefined as Promise<void> | undefined,
    wallet(ref: string, curve: 'secp256k1' | 'ed25519' = 'secp256k1') {
      const secret = curve === 'ed25519' ? ed25519.utils.randomSecretKey() : secp256k1.utils.randomSecretKey();
      keys.set(ref, { curve, secret });
      const address =
        curve === 'ed25519'
          ? getAddressDecoder().decode(ed25519.getPublicKey(secret))
          : publicKeyToAddress(secp256k1.getPublicKey(secret, false));
      return { wallet_key_ref: ref, address };
    },
    health: async () => ({ backend: 'pkcs11' as const }),
    createAccountKey: async () => ACCOUNT,
    createWalletKey: async () => assert.fail('not used'),
    signDigest: async (_account: string, ref: string, digest: Uint8Array) => {
      backend.digests.push(digest);
      return secp256k1.sign(digest, live(ref, 'secp256k1'), { prehash: false });
    },
    signEd25519: async (_account: string, ref: string, message: Uint8Array) =>
      ed25519.sign(message, live(ref, 'ed25519')),
    destroyWalletKey: async (_account: string, ref: string) => {
      if (!keys.has(ref)) throw new SignerFault('key_not_found', 'no such key');
      if (backend.holdDestroy) await backend.holdDestroy;
      tombstones.add(ref);
      backend.destroys++;
    },
    walletKeyId: (ref: string) => ref,
    isDestroyed: (ref: string) => tombstones.has(ref),
    close: async () => undefined,
  };
  return backend;
}

/** The few store calls these paths make: a wallet's record, a spend whose commit the test resolves, adoption. */
function memoryStore() {
  const store = {
    records: new Map<string, WalletRecord>(),
    foreseen: true,
    commit: deferred<ReservedSpend<unknown>>(),
    holdAdoption: undefined as Promise<void> | undefined,
    givenBack: [] as string[],
    wallet: async (address: string) => store.records.get(address),
    reserveSpend: () => ({ foreseen: store.foreseen, outcome: store.commit.promise, waitFor: () => undefined }),
    giveBack: async (id: string) => void store.givenBack.push(id),
    accountAuthority: async () => undefined,
    recordWallet: async () => {
      if (store.holdAdoption) await store.holdAdoption;
    },
    signPolicy(address: string, version: number, policy: Record<string, unknown>) {
      const current = { policy: policy as never, version, policyHash: '0x00', issuedAt: 1, signature: '0x00' };
      store.records.set(address, { authority: { kind: 'owner', address: PAYEE }, current, underAccount: true });
    },
  };
  return store;
}

interface ServiceOptions {
  store?: ReturnType<typeof memoryStore>;
  signaturesPerHour?: bigint;
  /** Told of each payment signed while its spend committed, as the service tells its metric. */
  early?: (outcome: 'released' | 'discarded') => void;
}

function service(options: ServiceOptions = {}) {
  const backend = memoryBackend();
  const wallets = new WalletLimiter([
    {
      name: 'wallet_signatures_hour',
      measure: 'signatures',
      windowSeconds: 3600,
      max: options.signaturesPerHour ?? 100n,
    },
  ]);
  const early: string[] = [];
  const signer = new SignerService({
    backend: backend as unknown as KeyBackend,
    invariants: testSignerInvariants(),
    limits: { wallets },
    ownerPolicies: options.store
      ? new OwnerPolicies({ store: options.store as unknown as OwnerPolicyStore, approver: null })
      : undefined,
    signedEarly: (outcome) => {
      early.push(outcome);
      options.early?.(outcome);
    },
  });
  let nonce = 0;
  const call = (method: string, params: unknown) =>
    signer.handle(signerRequestSchema.parse({ v: 1, id: String(nonce++), method, params }));
  const pay = (w: { wallet_key_ref: string; address: string }) => {
    const wallet = { accountKeyRef: ACCOUNT, walletKeyRef: w.wallet_key_ref, address: w.address };
    return signer.handle(transferAuthorizationRequest(wallet, nonce++, String(nonce++)));
  };
  const destroy = (w: { wallet_key_ref: string; address?: string }) =>
    call('destroy_wallet_key', { account_key_ref: ACCOUNT, ...w });
  return { backend, wallets, early, pay, destroy };
}

const fault = (code: string, rule?: string) => (e: unknown) => {
  assert.ok(e instanceof SignerFault, String(e));
  assert.equal(e.code, code, e.message);
  if (rule) assert.equal(e.details.rule, rule);
  return true;
};

/** 'signed' for a signature, else the refusal's code. */
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'signed',
    (e: SignerFault) => e.code,
  );

describe('destroy_wallet_key in the signer service', () => {
  describe('no signature of a key leaves once its destroy has started', () => {
    it('without a store: a signature returned while the destroy runs answers key_destroyed, its ceilings given back', async () => {
      const { backend, wallets, pay, destroy } = service({ signaturesPerHour: 2n });
      const w = backend.wallet('p11:v1:wal:a');
      const held = deferred();
      backend.holdDestroy = held.promise;
      const destroying = destroy(w);
      assert.equal(await outcome(pay(w)), 'key_destroyed');
      held.resolve();
      assert.deepEqual(await destroying, { destroyed: true });
      assert.equal(await outcome(pay(w)), 'key_destroyed');
      // Neither refused signature is in the wallet's ceilings: two of two are left.
      assert.equal(wallets.take(w.address, 0n).ok, true);
      assert.equal(wallets.take(w.address, 0n).ok, true);
    });

    it('with a store: a payment signed while its spend commits answers key_destroyed once the destroy answered', async () => {
      const store = memoryStore();
      const { backend, early, pay, destroy } = service({ store });
      const w = backend.wallet('p11:v1:wal:b');
      store.signPolicy(w.address, 1, { daily_cap_usd: '1', allow_key_destruction: true });
      const paying = outcome(pay(w));
      // The signature is made at once (foreseen), and waits for its spend's commit.
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(backend.digests.length, 1);
      assert.deepEqual(await destroy(w), { destroyed: true });
      store.commit.resolve({ kind: 'recorded', id: 'spend-1', signed: true });
      assert.equal(await paying, 'key_destroyed');
      assert.deepEqual(store.givenBack, ['spend-1']);
      assert.deepEqual(early, ['discarded']);
    });

    it('with a store: a signature waiting for the wallet to be adopted answers key_destroyed', async () => {
      const store = memoryStore();
      store.foreseen = false;
      const { backend, pay, destroy } = service({ store });
      const w = backend.wallet('p11:v1:wal:c');
      const adoption = deferred();
      store.holdAdoption = adoption.promise;
      store.commit.resolve({ kind: 'unrecorded' });
      const paying = outcome(pay(w));
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(await destroy(w), { destroyed: true });
      adoption.resolve();
      assert.equal(await paying, 'key_destroyed');
    });

    it("a destroy answers after every signature that passed the service's check before it began", async () => {
      const store = memoryStore();
      const order: string[] = [];
      let destroying: Promise<unknown> | undefined;
      // The destroy is asked the moment the payment's signature passed its last check (as its metric is told).
      const { backend, pay, destroy } = service({
        store,
        early: () => (destroying = destroy(w).then(() => order.push('destroy'))),
      });
      const w = backend.wallet('p11:v1:wal:d');
      store.signPolicy(w.address, 1, { allow_key_destruction: true });
      const paying = pay(w).then(() => order.push('payment'));
      store.commit.resolve({ kind: 'recorded', id: 'spend-2', signed: true });
      await paying;
      await destroying;
      assert.deepEqual(order, ['payment', 'destroy']);
    });

    it('a destroy the backend refuses, or the policy refuses, leaves the key signing', async () => {
      const store = memoryStore();
      store.foreseen = false;
      store.commit.resolve({ kind: 'recorded', id: 'spend-3', signed: false });
      const { backend, pay, destroy } = service({ store });
      const w = backend.wallet('p11:v1:wal:e');
      store.signPolicy(w.address, 4, { daily_cap_usd: '1' });
      await assert.rejects(destroy(w), fault('key_destruction_not_allowed', 'owner_policy'));
      assert.equal(await outcome(pay(w)), 'signed');
      const bare = service();
      const x = bare.backend.wallet('p11:v1:wal:f');
      await assert.rejects(bare.destroy({ wallet_key_ref: 'p11:v1:wal:unknown' }), fault('key_not_found'));
      assert.equal(await outcome(bare.pay(x)), 'signed');
    });
  });

  describe('with a store: the key proves itself the address named, and the signed policy decides', () => {
    it('refuses without an address, and destroys a wallet without a signed policy', async () => {
      const store = memoryStore();
      const { backend, destroy, pay } = service({ store });
      const w = backend.wallet('p11:v1:wal:g');
      store.commit.resolve({ kind: 'recorded', id: 'spend-5', signed: false });
      await assert.rejects(
        destroy({ wallet_key_ref: w.wallet_key_ref }),
        fault('invariant_violation', 'address_required'),
      );
      assert.deepEqual(await destroy(w), { destroyed: true });
      assert.equal(backend.destroys, 1);
      assert.equal(await outcome(pay(w)), 'key_destroyed');
      // Again: the probe finds the tombstone, nothing is asked of the backend's destroy.
      assert.deepEqual(await destroy(w), { destroyed: true });
      assert.equal(backend.destroys, 1);
    });

    it("refuses a policy without allow_key_destruction (naming its version), and destroys once the owner's allows it", async () => {
      const store = memoryStore();
      const { backend, destroy } = service({ store });
      const w = backend.wallet('p11:v1:wal:h');
      store.signPolicy(w.address, 7, { per_tx_cap_usd: '5' });
      await assert.rejects(destroy(w), (e: unknown) => {
        assert.ok(e instanceof SignerFault && e.code === 'key_destruction_not_allowed');
        assert.deepEqual(e.details, { rule: 'owner_policy', current_version: 7 });
        return true;
      });
      store.signPolicy(w.address, 8, { per_tx_cap_usd: '5', allow_key_destruction: true });
      assert.deepEqual(await destroy(w), { destroyed: true });
      assert.equal(backend.destroys, 1);
    });

    it('refuses another wallet’s address or a key of the other curve, and never counts the probe', async () => {
      const store = memoryStore();
      const { backend, destroy, pay } = service({ store, signaturesPerHour: 1n });
      const protectedWallet = backend.wallet('p11:v1:wal:i');
      const unprotected = backend.wallet('p11:v1:wal:j');
      const solana = backend.wallet('p11:v1:ed25519:k', 'ed25519');
      store.signPolicy(protectedWallet.address, 1, {});
      store.signPolicy(solana.address, 1, {});
      const named = { wallet_key_ref: protectedWallet.wallet_key_ref, address: unprotected.address };
      await assert.rejects(destroy(named), fault('address_mismatch', 'key_of_address'));
      const madeUp = { wallet_key_ref: protectedWallet.wallet_key_ref, address: '0x' + '12'.repeat(20) };
      await assert.rejects(destroy(madeUp), fault('address_mismatch', 'key_of_address'));
      const evmForSolana = { wallet_key_ref: solana.wallet_key_ref, address: unprotected.address };
      await assert.rejects(destroy(evmForSolana), fault('invariant_violation', 'address_curve'));
      const solanaForEvm = { wallet_key_ref: protectedWallet.wallet_key_ref, address: solana.address };
      await assert.rejects(destroy(solanaForEvm), fault('invariant_violation', 'address_curve'));
      await assert.rejects(destroy(solana), fault('key_destruction_not_allowed', 'owner_policy'));
      assert.equal(backend.destroys, 0);
      // Each probe was a digest of the signer's own, never the same twice; none took the wallet's one signature.
      assert.equal(new Set(backend.digests.map((d) => Buffer.from(d).toString('hex'))).size, backend.digests.length);
      store.foreseen = false;
      store.commit.resolve({ kind: 'recorded', id: 'spend-4', signed: true });
      assert.equal(await outcome(pay(protectedWallet)), 'signed');
    });
  });
});
