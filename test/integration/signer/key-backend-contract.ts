/**
 * One contract for every KeyBackend (signer/backends/key-backend.ts), run against PKCS#11 on SoftHSM and
 * against AWS KMS on the emulator (ops/kms-emulator/) through the real SDK: create, 1,000 signatures all
 * low-S and recovered by viem (through the shared ../../../signer/ecdsa/finalize-signature.ts), wrong
 * pairings, rotate, revoke, tombstones that outlive a restart, hostile references, concurrent signing,
 * a closed backend, Ed25519 keys (./key-backend-ed25519-contract.ts), and — where the backend has a transport to fault — throttling bursts (every signature
 * made or refused with a stable code, no digest signed twice), an unreachable backend answering fast,
 * a stalled request ending at the deadline, and a create whose answer was lost.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, recoverAddress } from 'viem';
import type { KeyBackend } from '../../../signer/backends/key-backend.js';
import { finalizeSignature } from '../../../signer/ecdsa/finalize-signature.js';
import { publicKeyToAddress } from '../../../signer/ecdsa/public-key-to-address.js';
import { keyRefSchema, SIGNER_ERROR_CODES } from '../../../signer/protocol/signer-protocol.js';
import { SignerFault } from '../../../signer/signer-error.js';
import { describeEd25519Contract } from './key-backend-ed25519-contract.js';
import { startSentinel } from '../../support/timer-order.js';

const HALF_N = secp256k1.Point.CURVE().n >> 1n;
const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
) as Record<string, unknown[]>;

/** Faults injected into the backend's transport (the KMS emulator); absent for an in-process HSM. */
export interface ContractFaults {
  /** The backend's per-operation deadline (ms). */
  deadlineMs: number;
  /** Answer ThrottlingException past `perSecond` Sign calls (a token bucket with `burst`). */
  throttleSign(perSecond: number, burst: number): void;
  unreachable(): void;
  stallSign(): void;
  /** Carry the next CreateKey out but lose its answer. */
  loseNextCreateAnswer(): void;
  reset(): void;
  /**
   * Digests the transport signed more than once with the wallet key `walletKeyRef` (each fault test signs
   * with a key of its own: a late request of an earlier test, one that timed out and was sent again, is
   * signed with that test's key and counts there, not here).
   */
  digestsSignedTwice(walletKeyRef: string): number;
  /**
   * Sign attempts that failed with no clean refusal (a timeout, a lost connection, a 5xx): KMS may have
   * signed those, and the backend sends them again within the deadline.
   */
  signAttemptsMaybeSigned(): number;
  createKeysReceived(): number;
  throttlesSeen(): number;
}

export interface ContractSubject {
  backend: KeyBackend;
  /** The code this backend answers when it cannot reach its keys. */
  unavailableCode: 'hsm_unavailable' | 'backend_unavailable';
  /** Well-formed references of another backend (must be refused, never used). */
  foreignRefs: { account: string; wallet: string };
  /** Close this backend and open it again on the same key store (a restart); returns the new one. */
  reopen(): Promise<KeyBackend>;
  /** A backend made to fault through its transport, with these hooks; or undefined. */
  openFaulty?(options: {
    signRatePerSecond: number;
    deadlineMs: number;
  }): Promise<{ backend: KeyBackend; faults: ContractFaults }>;
  close(): Promise<void>;
}

const isFault =
  (...codes: string[]) =>
  (e: unknown) =>
    e instanceof SignerFault && codes.includes(e.code);
const randomDigest = () => secp256k1.utils.randomSecretKey();

/** Signs through the backend and the shared finalisation, as the signer service does. */
async function signFor(
  backend: KeyBackend,
  account: string,
  wallet: { walletKeyRef: string; address: string },
  digest: Uint8Array,
) {
  return finalizeSignature(digest, await backend.signDigest(account, wallet.walletKeyRef, digest), wallet.address);
}

export function describeKeyBackendContract(name: string, open: () => Promise<ContractSubject>): void {
  describe(`KeyBackend contract: ${name}`, function () {
    this.timeout(180_000);
    let subject: ContractSubject;
    let account: string;
    let wallet: { walletKeyRef: string; address: string; publicKey: Uint8Array };

    before(async () => {
      subject = await open();
      account = await subject.backend.createAccountKey();
      const created = await subject.backend.createWalletKey(account);
      wallet = { ...created, address: publicKeyToAddress(created.publicKey) };
    });
    after(async () => subject?.close());

    it('creates account and wallet keys: opaque references matching keyRefSchema, an uncompressed secp256k1 public key, one key per wallet', async () => {
      const backend = subject.backend;
      assert.equal((await backend.health()).backend, backend.kind);
      for (const ref of [account, wallet.walletKeyRef]) assert.ok(keyRefSchema.safeParse(ref).success, ref);
      assert.equal(wallet.publicKey.length, 65);
      assert.equal(wallet.publicKey[0], 0x04);
      secp256k1.Point.fromBytes(wallet.publicKey).assertValidity();
      const second = await backend.createWalletKey(account);
      assert.notEqual(second.walletKeyRef, wallet.walletKeyRef);
      assert.notDeepEqual(second.publicKey, wallet.publicKey);
      assert.notEqual(await backend.createAccountKey(), account);
    });

    it('signs 1,000 digests: every signature low-S and recovered by viem to the wallet address', async () => {
      const digests = Array.from({ length: 1000 }, randomDigest);
      let highBefore = 0;
      for (let i = 0; i < digests.length; i += 25) {
        await Promise.all(
          digests.slice(i, i + 25).map(async (digest) => {
            const raw = await subject.backend.signDigest(account, wallet.walletKeyRef, digest);
            assert.equal(raw.length, 64);
            if (secp256k1.Signature.fromBytes(raw, 'compact').s > HALF_N) highBefore++;
            const sig = finalizeSignature(digest, raw, wallet.address);
            assert.ok(BigInt(sig.s) <= HALF_N);
            assert.equal(await recoverAddress({ hash: bytesToHex(digest), signature: sig.signature }), wallet.address);
          }),
        );
      }
      // The backend returns raw signatures; normalising is the shared routine's job (SoftHSM and KMS both return high-S about half the time).
      assert.ok(highBefore > 350 && highBefore < 650, `${highBefore} of 1,000 raw signatures were high-S`);
    });

    it('signs concurrently across wallets: 200 signatures in flight at once, each for its own wallet', async () => {
      const wallets = await Promise.all(
        Array.from({ length: 4 }, async () => {
          const w = await subject.backend.createWalletKey(account);
          return { ...w, address: publicKeyToAddress(w.publicKey) };
        }),
      );
      const results = await Promise.all(
        Array.from({ length: 200 }, async (_, i) => {
          const w = wallets[i % wallets.length]!;
          const digest = randomDigest();
          const sig = await signFor(subject.backend, account, w, digest);
          return (await recoverAddress({ hash: bytesToHex(digest), signature: sig.signature })) === w.address;
        }),
      );
      assert.equal(results.filter(Boolean).length, 200);
    });

    it('refuses a digest that is not 32 bytes, and a wallet key paired with another account', async () => {
      for (const length of [0, 31, 33, 64]) {
        await assert.rejects(
          subject.backend.signDigest(account, wallet.walletKeyRef, new Uint8Array(length)),
          isFault('invalid_request'),
        );
      }
      const other = await subject.backend.createAccountKey();
      await assert.rejects(
        subject.backend.signDigest(other, wallet.walletKeyRef, randomDigest()),
        isFault('key_not_found'),
      );
      await assert.rejects(subject.backend.destroyWalletKey(other, wallet.walletKeyRef), isFault('key_not_found'));
      // The refusals destroyed nothing: the wallet still signs under its own account.
      await signFor(subject.backend, account, wallet, randomDigest());
      // Account and wallet references are not interchangeable.
      await assert.rejects(
        subject.backend.signDigest(wallet.walletKeyRef, wallet.walletKeyRef, randomDigest()),
        isFault('key_not_found'),
      );
      await assert.rejects(subject.backend.signDigest(account, account, randomDigest()), isFault('key_not_found'));
      await assert.rejects(subject.backend.createWalletKey(wallet.walletKeyRef), isFault('key_not_found'));
    });

    it('refuses hostile and foreign references with a stable code, never signing or crashing', async () => {
      const strings = [...(hostile.any ?? []), ...(hostile.identifier ?? []), ...(hostile.bytes32_hex ?? [])].filter(
        (v): v is string => typeof v === 'string',
      );
      const refs = [
        ...strings,
        subject.foreignRefs.account,
        subject.foreignRefs.wallet,
        `${wallet.walletKeyRef}x`,
        wallet.walletKeyRef.toUpperCase(),
        ` ${wallet.walletKeyRef}`,
      ];
      for (const ref of refs) {
        for (const attempt of [
          () => subject.backend.signDigest(account, ref, randomDigest()),
          () => subject.backend.signDigest(ref, wallet.walletKeyRef, randomDigest()),
          () => subject.backend.createWalletKey(ref),
          () => subject.backend.destroyWalletKey(account, ref),
        ]) {
          await assert.rejects(
            attempt(),
            (e: unknown) =>
              e instanceof SignerFault &&
              (SIGNER_ERROR_CODES as readonly string[]).includes(e.code) &&
              ['key_not_found', 'invalid_request'].includes(e.code),
            JSON.stringify(ref).slice(0, 80),
          );
        }
      }
      await signFor(subject.backend, account, wallet, randomDigest());
    });

    it('rotates: a new key for the account signs, the old one is destroyed and refused with key_destroyed; destroying again succeeds', async () => {
      const old = await subject.backend.createWalletKey(account);
      const oldWallet = { ...old, address: publicKeyToAddress(old.publicKey) };
      await signFor(subject.backend, account, oldWallet, randomDigest());
      const next = await subject.backend.createWalletKey(account);
      await subject.backend.destroyWalletKey(account, old.walletKeyRef);
      await assert.rejects(
        subject.backend.signDigest(account, old.walletKeyRef, randomDigest()),
        isFault('key_destroyed'),
      );
      await subject.backend.destroyWalletKey(account, old.walletKeyRef);
      await signFor(subject.backend, account, { ...next, address: publicKeyToAddress(next.publicKey) }, randomDigest());
    });

    it('revokes for good: a destroyed reference is refused with key_destroyed after a restart too, and in every field', async () => {
      const doomed = await subject.backend.createWalletKey(account);
      await subject.backend.destroyWalletKey(account, doomed.walletKeyRef);
      const backend = await subject.reopen();
      await assert.rejects(backend.signDigest(account, doomed.walletKeyRef, randomDigest()), isFault('key_destroyed'));
      await backend.destroyWalletKey(account, doomed.walletKeyRef);
      await assert.rejects(backend.signDigest(account, doomed.walletKeyRef, randomDigest()), isFault('key_destroyed'));
      // Keys created before the restart still sign.
      await signFor(backend, account, wallet, randomDigest());
    });

    it(`a closed backend answers ${'`*_unavailable`'}, and closing twice is harmless`, async () => {
      const backend = await subject.reopen();
      await backend.close();
      await backend.close();
      await assert.rejects(
        backend.signDigest(account, wallet.walletKeyRef, randomDigest()),
        isFault(subject.unavailableCode),
      );
      await assert.rejects(backend.health(), isFault(subject.unavailableCode));
      await subject.reopen();
    });

    describeEd25519Contract(() => subject);

    describe('faults through the transport', function () {
      let faulty: { backend: KeyBackend; faults: ContractFaults } | undefined;
      let faultWallet: { walletKeyRef: string; address: string };
      let faultAccount: string;
      before(async function () {
        if (!subject.openFaulty) this.skip();
      });
      beforeEach(async function () {
        if (!subject.openFaulty) this.skip();
      });
      afterEach(async () => {
        faulty?.faults.reset();
        await faulty?.backend.close();
        faulty = undefined;
      });
      // The keys a fault test signs with are made by the subject's own backend: making them is not under
      // test here, and on a loaded machine a create through the faulty backend's short deadline timed out.
      const openFaulty = async (signRatePerSecond: number, deadlineMs = 1500) => {
        faulty = await subject.openFaulty!({ signRatePerSecond, deadlineMs });
        faultAccount = await subject.backend.createAccountKey();
        const w = await subject.backend.createWalletKey(faultAccount);
        faultWallet = { walletKeyRef: w.walletKeyRef, address: publicKeyToAddress(w.publicKey) };
        return faulty;
      };
      /**
       * No digest signed twice, but for Sign attempts that failed without a clean refusal and were sent again
       * (by design: KMS may have signed the one that failed). On a quiet machine there are none, and this is
       * exactly zero; under load an attempt times out or its kept-alive connection drops, which is not a
       * throttled request carried out.
       */
      const assertNoneSignedTwice = (faults: ContractFaults) => {
        const twice = faults.digestsSignedTwice(faultWallet.walletKeyRef);
        assert.ok(
          twice <= faults.signAttemptsMaybeSigned(),
          `${twice} digests signed twice, ${faults.signAttemptsMaybeSigned()} attempts may have signed`,
        );
      };
      /** Signs a fresh digest with the faulty backend's wallet, refused with backend_unavailable; when it was asked. */
      const refusedUnavailable = async (backend: NonNullable<typeof faulty>['backend']): Promise<number> => {
        const started = Date.now();
        await assert.rejects(
          backend.signDigest(faultAccount, faultWallet.walletKeyRef, randomDigest()),
          isFault('backend_unavailable'),
        );
        return started;
      };

      it('a throttling burst: every signature is made or refused with backend_unavailable, none signed twice, throttles met and retried', async () => {
        // 60 at once against 10/s (a burst of 5) with a 3 s deadline: at most 5 + 10 × 3 = 35 can be signed.
        const { backend, faults } = await openFaulty(0, 3000);
        faults.throttleSign(10, 5);
        const outcomes = await Promise.all(
          Array.from({ length: 60 }, async () => {
            const digest = randomDigest();
            try {
              const sig = await signFor(backend, faultAccount, faultWallet, digest);
              assert.ok(BigInt(sig.s) <= HALF_N);
              return 'signed';
            } catch (err) {
              assert.ok(err instanceof SignerFault && err.code === 'backend_unavailable', String(err));
              return err.code;
            }
          }),
        );
        // Some are signed (at least the burst), the rest refused with the stable code.
        const signed = outcomes.filter((o) => o === 'signed').length;
        assert.ok(signed >= 5 && signed < 60, `${signed} of 60 signed within the deadline at 10/s`);
        assert.ok(faults.throttlesSeen() > 0, 'the burst met throttling');
        assertNoneSignedTwice(faults);
      });

      it('the backend keeps to its own sign rate below the quota: no throttle met, every signature made', async () => {
        // KMS allows 25/s with a burst of 20: 40 sent at once would meet throttling 20 times, 40 paced at 20/s
        // none — even when load bunches their arrival by up to a second (a burst of 5 was met under load:
        // paced on sending, they reached the KMS emulator in this same process in clumps).
        const { backend, faults } = await openFaulty(20, 15_000);
        faults.throttleSign(25, 20);
        const started = Date.now();
        const outcomes = await Promise.allSettled(
          Array.from({ length: 40 }, () => signFor(backend, faultAccount, faultWallet, randomDigest())),
        );
        assert.deepEqual(
          outcomes.filter((o) => o.status === 'rejected'),
          [],
        );
        assert.equal(faults.throttlesSeen(), 0);
        assert.ok(Date.now() - started >= 1500, 'paced at 20/s');
        assertNoneSignedTwice(faults);
      });

      it('an unreachable backend answers backend_unavailable fast, and health says so', async () => {
        // Fast means not waiting on the deadline: a long one (15 s), so that what load adds never blurs the two.
        const { backend, faults } = await openFaulty(0, 15_000);
        faults.unreachable();
        const started = await refusedUnavailable(backend);
        await assert.rejects(backend.health(), isFault('backend_unavailable'));
        assert.ok(
          Date.now() - started < faults.deadlineMs / 2,
          `answered in ${Date.now() - started} ms (the deadline is ${faults.deadlineMs} ms)`,
        );
        faults.reset();
        await signFor(backend, faultAccount, faultWallet, randomDigest());
      });

      it('a stalled request ends with backend_unavailable at the deadline', async () => {
        const { backend, faults } = await openFaulty(0);
        faults.stallSign();
        // Not before the deadline (timers never fire early), and before a sentinel at twice the deadline: every
        // timer of the call (each attempt's abort, at most half the deadline; each back-off) expires by the
        // deadline, and timers of one event loop run in order, however late a loaded machine runs them
        // (test/support/timer-order.ts; the KMS emulator answers from this same process).
        const sentinel = startSentinel(faults.deadlineMs * 2);
        const started = await refusedUnavailable(backend).finally(() => sentinel.clear());
        const elapsed = Date.now() - started;
        assert.ok(elapsed >= faults.deadlineMs - 50, `ended after ${elapsed} ms (deadline ${faults.deadlineMs})`);
        assert.equal(sentinel.fired, false, `ended past the deadline by more than one attempt (${elapsed} ms)`);
      });

      it('a create whose answer was lost is not sent again (no second key), and fails with backend_unavailable', async () => {
        const { backend, faults } = await openFaulty(0);
        const before = faults.createKeysReceived();
        faults.loseNextCreateAnswer();
        await assert.rejects(backend.createWalletKey(faultAccount), isFault('backend_unavailable'));
        assert.equal(faults.createKeysReceived() - before, 1);
      });
    });
  });
}
