/**
 * The Ed25519 half of the KeyBackend contract (./key-backend-contract.ts runs it for every backend):
 * create (a reference naming its curve, a 32-byte public key on the curve), signatures verified both by
 * @noble/curves and by Node's own crypto.verify against the returned public key, message bounds, wrong
 * account pairings, curve mismatches in both directions, destroy → key_destroyed, tombstones that outlive
 * a restart, hostile references.
 */
import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import type { KeyBackend } from '../../../signer/backends/key-backend.js';
import { keyRefSchema } from '../../../signer/protocol/signer-protocol.js';
import { SignerFault } from '../../../signer/signer-error.js';
import type { ContractSubject } from './key-backend-contract.js';

const isFault = (code: string) => (e: unknown) => e instanceof SignerFault && e.code === code;
/** DER SubjectPublicKeyInfo header of an Ed25519 key (RFC 8410): 12 bytes, then the 32-byte key. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

function randomMessage(length: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(length));
}

/** Verifies with Node's crypto (OpenSSL), independently of @noble/curves. */
function nodeVerifies(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
  return verify(null, message, key, signature);
}

async function signVerified(backend: KeyBackend, account: string, wallet: Wallet, message: Uint8Array) {
  const signature = await backend.signEd25519(account, wallet.walletKeyRef, message);
  assert.equal(signature.length, 64);
  assert.ok(ed25519.verify(signature, message, wallet.publicKey), 'verified by @noble/curves');
  assert.ok(nodeVerifies(wallet.publicKey, message, signature), 'verified by node:crypto');
  return signature;
}

interface Wallet {
  walletKeyRef: string;
  publicKey: Uint8Array;
}

export function describeEd25519Contract(subject: () => ContractSubject): void {
  describe('Ed25519 wallet keys', function () {
    let account: string;
    let wallet: Wallet;
    const backend = () => subject().backend;

    before(async () => {
      account = await backend().createAccountKey();
      wallet = await backend().createWalletKey(account, 'ed25519');
    });

    it('creates Ed25519 keys: a reference naming its curve, a 32-byte public key on the curve, one key per wallet', async () => {
      const created = await backend().createWalletKey(account, 'ed25519');
      assert.equal(created.curve, 'ed25519');
      assert.ok(keyRefSchema.safeParse(created.walletKeyRef).success, created.walletKeyRef);
      assert.match(created.walletKeyRef, /:ed25519:/);
      assert.equal(created.publicKey.length, 32);
      ed25519.Point.fromBytes(created.publicKey).assertValidity();
      assert.notEqual(created.walletKeyRef, wallet.walletKeyRef);
      assert.notDeepEqual(created.publicKey, wallet.publicKey);
      const evm = await backend().createWalletKey(account);
      assert.equal(evm.curve, 'secp256k1');
      assert.doesNotMatch(evm.walletKeyRef, /:ed25519:/);
    });

    it('signs messages of 1 to 4,096 bytes with RFC 8032 Ed25519, verified by @noble/curves and node:crypto', async () => {
      const lengths = [1, 32, 64, 200, 1232, 4096, ...Array.from({ length: 24 }, (_, i) => 100 + i * 47)];
      await Promise.all(lengths.map((n) => signVerified(backend(), account, wallet, randomMessage(n))));
      // A signature is over these bytes: it does not verify for another message or another key.
      const message = randomMessage(300);
      const signature = await signVerified(backend(), account, wallet, message);
      const other = await backend().createWalletKey(account, 'ed25519');
      assert.equal(ed25519.verify(signature, randomMessage(300), wallet.publicKey), false);
      assert.equal(nodeVerifies(other.publicKey, message, signature), false);
    });

    it('refuses an empty or oversized message with invalid_request', async () => {
      for (const length of [0, 4097, 70_000]) {
        await assert.rejects(
          backend().signEd25519(account, wallet.walletKeyRef, new Uint8Array(length)),
          isFault('invalid_request'),
        );
      }
    });

    it('refuses a wallet key paired with another account, destroying nothing', async () => {
      const other = await backend().createAccountKey();
      await assert.rejects(
        backend().signEd25519(other, wallet.walletKeyRef, randomMessage(64)),
        isFault('key_not_found'),
      );
      await assert.rejects(backend().destroyWalletKey(other, wallet.walletKeyRef), isFault('key_not_found'));
      await assert.rejects(
        backend().signEd25519(wallet.walletKeyRef, wallet.walletKeyRef, randomMessage(64)),
        isFault('key_not_found'),
      );
      await assert.rejects(backend().createWalletKey(wallet.walletKeyRef, 'ed25519'), isFault('key_not_found'));
      await signVerified(backend(), account, wallet, randomMessage(64));
    });

    it('refuses a key of the other curve with invariant_violation: signDigest on Ed25519, signEd25519 on secp256k1', async () => {
      const evm = await backend().createWalletKey(account);
      await assert.rejects(
        backend().signDigest(account, wallet.walletKeyRef, new Uint8Array(32).fill(7)),
        isFault('invariant_violation'),
      );
      await assert.rejects(
        backend().signEd25519(account, evm.walletKeyRef, randomMessage(64)),
        isFault('invariant_violation'),
      );
      // Both keys still sign with their own method.
      await signVerified(backend(), account, wallet, randomMessage(64));
      assert.equal((await backend().signDigest(account, evm.walletKeyRef, new Uint8Array(32).fill(7))).length, 64);
    });

    it('refuses hostile and re-spelled references with a stable code', async () => {
      const refs = [
        `${wallet.walletKeyRef}x`,
        wallet.walletKeyRef.toUpperCase(),
        wallet.walletKeyRef.slice(0, -2),
        subject().foreignRefs.wallet.replace(':wal:', ':ed25519:'),
        'p11:v1:ed25519:AAAAAAAAAAAAAAAAAAAAAA',
        'kms:v1:ed25519:1234abcd-12ab-34cd-56ef-1234567890ab',
      ];
      for (const ref of refs) {
        for (const attempt of [
          () => backend().signEd25519(account, ref, randomMessage(64)),
          () => backend().destroyWalletKey(account, ref),
        ]) {
          await assert.rejects(
            attempt(),
            (e: unknown) => e instanceof SignerFault && ['key_not_found', 'invalid_request'].includes(e.code),
            ref,
          );
        }
      }
      await signVerified(backend(), account, wallet, randomMessage(64));
    });

    it('a reference re-spelled as a secp256k1 one is not the Ed25519 key: refused, and destroys nothing', async () => {
      const respelled = wallet.walletKeyRef.replace(':ed25519:', ':wal:');
      await assert.rejects(
        backend().signEd25519(account, respelled, randomMessage(64)),
        isFault('invariant_violation'),
      );
      // Nothing signs it (PKCS#11 cannot unwrap it; KMS refuses ECDSA on an Ed25519 key).
      await assert.rejects(backend().signDigest(account, respelled, new Uint8Array(32)), isFault('key_not_found'));
      await assert.rejects(backend().destroyWalletKey(account, respelled), isFault('key_not_found'));
      await signVerified(backend(), account, wallet, randomMessage(64));
    });

    it('destroys: the reference is refused with key_destroyed by both signing methods, destroying again succeeds, and after a restart too', async () => {
      const doomed = await backend().createWalletKey(account, 'ed25519');
      const kept = await backend().createWalletKey(account, 'ed25519');
      await signVerified(backend(), account, doomed, randomMessage(64));
      await backend().destroyWalletKey(account, doomed.walletKeyRef);
      await assert.rejects(
        backend().signEd25519(account, doomed.walletKeyRef, randomMessage(64)),
        isFault('key_destroyed'),
      );
      await assert.rejects(
        backend().signDigest(account, doomed.walletKeyRef, new Uint8Array(32)),
        isFault('key_destroyed'),
      );
      await backend().destroyWalletKey(account, doomed.walletKeyRef);
      const reopened = await subject().reopen();
      await assert.rejects(
        reopened.signEd25519(account, doomed.walletKeyRef, randomMessage(64)),
        isFault('key_destroyed'),
      );
      await reopened.destroyWalletKey(account, doomed.walletKeyRef);
      await assert.rejects(
        reopened.signEd25519(account, doomed.walletKeyRef, randomMessage(64)),
        isFault('key_destroyed'),
      );
      // Keys made before the restart still sign.
      await signVerified(reopened, account, kept, randomMessage(64));
      await signVerified(reopened, account, wallet, randomMessage(64));
    });
  });
}
