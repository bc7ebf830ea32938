/**
 * PKCS#11 key backend (SoftHSM2 locally, any PKCS#11 HSM in production), key hierarchy of
 * docs/adr/0002-signer-key-hierarchy.md: root KEK (AES-256 token object, non-extractable, wrap/unwrap only,
 * found by label at start, handle cached) → per-account AES-256 key generated in the HSM and returned only
 * wrapped by the KEK → per-wallet secp256k1 key pair generated in the HSM, the private key returned only
 * wrapped by its account key (CKM_AES_KEY_WRAP_PAD). Attribute templates: ./key-templates.ts. Ed25519
 * wallet keys (CKM_EDDSA) are token objects bound to their account instead: ./ed25519-token-keys.ts.
 *
 * Protects against: private keys in the clear outside the HSM — generated as sensitive session objects,
 * wrapped once, destroyed; unwrapped copies are sensitive, non-extractable session objects owned by one
 * long-lived "holder" session and cached by handle (./key-handle-cache.ts), never as bytes. A KEK that is
 * extractable, not sensitive or able to decrypt is refused at start. Destroyed wallet keys are tombstoned
 * in the token (./tombstone-store.ts) and refused forever (`key_not_found` to other accounts) — including a signature
 * asked for before the destroy: the tombstone is checked again in the tick of C_SignInit, after the wait for
 * a session, and once more when the HSM answers (./sign-on-pool.ts), so once destroy has answered no signature
 * with the key starts in the HSM or leaves this backend (one already inside C_Sign ends there, discarded).
 * Signing runs on an exclusive pooled session (./session-pool.ts); a digest that is not exactly 32 bytes is
 * refused (CKM_ECDSA would sign any length).
 * Known limits: whoever holds the user PIN and the token can unwrap keys inside this HSM (and, because
 * pkcs11js cannot set CKA_UNWRAP_TEMPLATE, unwrap them as extractable): the PIN is the crown jewel.
 * C_SignInit, C_UnwrapKey and key generation run synchronously on the main thread. C_Sign runs on a libuv thread,
 * except for a signature asked for while the signer holds no other request (`signInline: 'when_alone'`, the
 * default): the hand-off to a worker thread and back costs two wake-ups (≈ 150 µs of machine CPU per payment at
 * 400/s on the VM of docs/performance.md). Under load signing stays parallel. Ed25519 always runs on a libuv thread.
 * A new wallet key is cached at its creation (an Ed25519 one by handle): its first signature costs no unwrap or search.
 * Another curve's key is `invariant_violation`; the service ties keys to accounts first (../../ecdsa/, ../../solana/).
 */
import pkcs11js from 'pkcs11js';
import type { Pkcs11BackendConfig } from '../../config/signer-config.js';
import { SignerFault } from '../../signer-error.js';
import type { BackendHealth, CreatedWalletKey, KeyBackend, SignDigestOptions, WalletKeyCurve } from '../key-backend.js';
import { assertEd25519Message } from '../ed25519-message.js';
import { toSignerFault } from './ckr-error-map.js';
import { CKM_EDDSA, Ed25519TokenKeys } from './ed25519-token-keys.js';
import { KeyHandleCache } from './key-handle-cache.js';
import {
  GENERATE_ACCOUNT_KEY,
  GENERATE_WALLET_PRIVATE_KEY,
  GENERATE_WALLET_PUBLIC_KEY,
  UNWRAP_ACCOUNT_KEY,
  UNWRAP_WALLET_KEY,
  WRAP_MECHANISM,
} from './key-templates.js';
import { decodeKeyRef, encodeKeyRef, walletBlobHash, type DecodedKeyRef } from './pkcs11-key-ref.js';
import { Pkcs11Module } from './pkcs11-module.js';
import { findRootKek } from './root-kek.js';
import { SessionPool } from './session-pool.js';
import { signOnPool, type SignOnPoolRequest } from './sign-on-pool.js';
import { TombstoneStore } from './tombstone-store.js';
import { qualifyForStart } from './token-qualification.js';

export interface BackendObserver {
  cacheHit?(): void;
  cacheMiss?(): void;
  hsmOperation?(op: string, seconds: number): void;
  /** A signature was made on the main thread (`inline`) or on a libuv thread (`pool`). */
  signed?(thread: 'inline' | 'pool'): void;
}

/** Wrap output buffers: generous upper bounds (measured: account key 40 bytes, wallet DEK 72 bytes). */
const WRAP_BUFFER_BYTES = 1024;
/** PKCS#11 session state "R/W user functions" (logged-in R/W session); pkcs11js does not export CKS_*. */
const CKS_RW_USER_FUNCTIONS = 3;

export class Pkcs11Backend implements KeyBackend {
  readonly kind = 'pkcs11' as const;
  private readonly cache: KeyHandleCache;
  private readonly signInline: Pkcs11BackendConfig['signInline'];
  private readonly ed25519: Ed25519TokenKeys;
  private closed = false;

  private constructor(
    private readonly module: Pkcs11Module,
    /** Long-lived session that owns every unwrapped session object and runs the synchronous calls. */
    private readonly holder: pkcs11js.Handle,
    private readonly kek: pkcs11js.Handle,
    private readonly pool: SessionPool,
    private readonly tombstones: TombstoneStore,
    config: Pkcs11BackendConfig,
    private readonly observer: BackendObserver,
    /** Why this token cannot hold Ed25519 (Solana) keys, when it cannot (./token-qualification.ts). */
    private readonly ed25519Missing: string | undefined,
  ) {
    this.signInline = config.signInline;
    this.ed25519 = new Ed25519TokenKeys(module, holder, config.cacheSize, (op, fn) => this.timed(op, fn));
    this.cache = new KeyHandleCache({
      max: config.cacheSize,
      ttlMs: config.cacheTtlMs,
      destroy: (handle) => this.destroyObject(handle),
      onHit: () => observer.cacheHit?.(),
      onMiss: () => observer.cacheMiss?.(),
    });
  }

  /** Opens the token, logs in, finds and checks the root KEK, loads tombstones, opens the session pool. */
  static open(config: Pkcs11BackendConfig, observer: BackendObserver = {}): Pkcs11Backend {
    const module = Pkcs11Module.load(config.modulePath);
    try {
      const slot = module.findTokenSlot(config.tokenLabel, config.tokenSerial);
      const holder = module.openSession(slot);
      module.login(holder, config.pin);
      const ed25519Missing = qualifyForStart(module.p11, slot, holder);
      const kek = findRootKek(module, holder, config);
      const tombstones = TombstoneStore.load(module, holder);
      const pool = new SessionPool(module, slot, config.sessions);
      const backend = new Pkcs11Backend(module, holder, kek, pool, tombstones, config, observer, ed25519Missing);
      if (ed25519Missing === undefined) backend.ed25519.index(); // the token's keys remembered once, at start
      return backend;
    } catch (err) {
      module.finalize();
      throw toSignerFault(err, 'PKCS#11 start');
    }
  }

  private destroyObject(handle: pkcs11js.Handle): void {
    if (this.closed) return;
    try {
      this.module.p11.C_DestroyObject(this.holder, handle);
    } catch {
      /* the session object may already be gone */
    }
  }

  private timed<T>(op: string, fn: () => T): T {
    const started = process.hrtime.bigint();
    try {
      return fn();
    } catch (err) {
      throw toSignerFault(err, op);
    } finally {
      this.observer.hsmOperation?.(op, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new SignerFault('hsm_unavailable', 'backend closed');
  }

  /** Solana keys on a token that cannot hold them: permanent `hsm_unsupported`, never "retry shortly". */
  private assertEd25519(): void {
    if (this.ed25519Missing !== undefined)
      throw new SignerFault('hsm_unsupported', `this HSM cannot hold Ed25519 (Solana) keys: ${this.ed25519Missing}`);
  }

  /** An account key reference; a wallet key's blob spelled as one (destroyed or not) is none: `key_not_found`. */
  private decodeAccountRef(ref: string): DecodedKeyRef {
    const decoded = decodeKeyRef(ref);
    if (decoded.kind !== 'acct' || this.tombstones.has(decoded.blobHash))
      throw new SignerFault('key_not_found', 'account_key_ref is not a PKCS#11 account key reference');
    return decoded;
  }

  /** A live wallet reference of `curve`: its tombstone (`destroyedOf`: by account) first, then its curve. */
  private decodeLiveWalletRef(ref: string, curve: WalletKeyCurve, account: DecodedKeyRef): DecodedKeyRef {
    const decoded = decodeKeyRef(ref);
    if (decoded.kind === 'acct')
      throw new SignerFault('key_not_found', 'wallet_key_ref is not a PKCS#11 wallet key reference');
    if (this.tombstones.destroyedOf(decoded.blobHash, account.blobHash))
      throw new SignerFault('key_destroyed', 'wallet_key_ref names a destroyed key');
    if (decoded.kind !== (curve === 'ed25519' ? 'ed25519' : 'wal'))
      throw new SignerFault('invariant_violation', `wallet_key_ref names a key of another curve than ${curve}`);
    return decoded;
  }

  /** The handle of an Ed25519 token key of this account (its account key must unwrap first). */
  private withEd25519Key<T>(account: DecodedKeyRef, wallet: DecodedKeyRef, fn: (h: pkcs11js.Handle) => Promise<T>) {
    return this.withAccountKey(account, () => fn(this.ed25519.find(wallet, account.blobHash)));
  }

  private withAccountKey<T>(ref: DecodedKeyRef, fn: (handle: pkcs11js.Handle) => Promise<T>): Promise<T> {
    return this.cache.use(
      `acct:${ref.blobHash}`,
      () =>
        this.timed('unwrap_account_key', () =>
          this.module.p11.C_UnwrapKey(this.holder, WRAP_MECHANISM, this.kek, ref.blob, UNWRAP_ACCOUNT_KEY),
        ),
      fn,
    );
  }

  /**
   * The cache key names the account too: a wallet handle cached for account A must not answer a request
   * that pairs the same wallet ref with account B (the unwrap under B's key is what proves ownership).
   */
  private static walletCacheKey(account: DecodedKeyRef, wallet: DecodedKeyRef): string {
    return `wal:${account.blobHash}:${wallet.blobHash}`;
  }

  private withWalletKey<T>(
    account: DecodedKeyRef,
    accountKey: pkcs11js.Handle,
    ref: DecodedKeyRef,
    fn: (handle: pkcs11js.Handle) => Promise<T>,
  ): Promise<T> {
    return this.cache.use(
      Pkcs11Backend.walletCacheKey(account, ref),
      () =>
        this.timed('unwrap_wallet_key', () =>
          this.module.p11.C_UnwrapKey(this.holder, WRAP_MECHANISM, accountKey, ref.blob, UNWRAP_WALLET_KEY),
        ),
      fn,
    );
  }

  async health(): Promise<BackendHealth> {
    this.assertOpen();
    try {
      this.timed('health', () => {
        const info = this.module.p11.C_GetSessionInfo(this.holder);
        if (info.state !== CKS_RW_USER_FUNCTIONS)
          throw new SignerFault('hsm_unavailable', 'holder session is not logged in');
        this.module.p11.C_GetAttributeValue(this.holder, this.kek, [{ type: pkcs11js.CKA_CLASS }]);
      });
    } catch (err) {
      throw new SignerFault('hsm_unavailable', err instanceof Error ? err.message : 'HSM health check failed');
    }
    return { backend: 'pkcs11' };
  }

  async createAccountKey(): Promise<string> {
    this.assertOpen();
    const p11 = this.module.p11;
    const key = this.timed('generate_account_key', () =>
      p11.C_GenerateKey(this.holder, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, GENERATE_ACCOUNT_KEY),
    );
    try {
      const wrapped = this.timed('wrap_account_key', () =>
        p11.C_WrapKey(this.holder, WRAP_MECHANISM, this.kek, key, Buffer.alloc(WRAP_BUFFER_BYTES)),
      );
      return encodeKeyRef('acct', Buffer.from(wrapped));
    } finally {
      this.destroyObject(key);
    }
  }

  async createWalletKey(accountKeyRef: string, curve: WalletKeyCurve = 'secp256k1'): Promise<CreatedWalletKey> {
    this.assertOpen();
    const account = this.decodeAccountRef(accountKeyRef);
    if (curve === 'ed25519') {
      this.assertEd25519();
      // The account key must unwrap (a live account of this KEK) before a key is bound to it.
      return this.withAccountKey(account, async () => {
        const { id, publicKey } = this.timed('generate_wallet_key', () => this.ed25519.generate(account.blobHash));
        return { walletKeyRef: encodeKeyRef('ed25519', id), publicKey, curve };
      });
    }
    const p11 = this.module.p11;
    return this.withAccountKey(account, async (accountKey) => {
      const pair = this.timed('generate_wallet_key', () =>
        p11.C_GenerateKeyPair(
          this.holder,
          { mechanism: pkcs11js.CKM_EC_KEY_PAIR_GEN },
          GENERATE_WALLET_PUBLIC_KEY,
          GENERATE_WALLET_PRIVATE_KEY,
        ),
      );
      try {
        const [point] = this.timed('read_public_key', () =>
          p11.C_GetAttributeValue(this.holder, pair.publicKey, [{ type: pkcs11js.CKA_EC_POINT }]),
        );
        const der = point?.value;
        // CKA_EC_POINT is a DER OCTET STRING around 04‖X‖Y.
        if (!(der instanceof Buffer) || der.length !== 67 || der[0] !== 0x04 || der[1] !== 0x41 || der[2] !== 0x04) {
          throw new SignerFault('hsm_error', 'unexpected CKA_EC_POINT encoding');
        }
        const wrapped = this.timed('wrap_wallet_key', () =>
          p11.C_WrapKey(this.holder, WRAP_MECHANISM, accountKey, pair.privateKey, Buffer.alloc(WRAP_BUFFER_BYTES)),
        );
        const walletKeyRef = encodeKeyRef('wal', Buffer.from(wrapped));
        void this.withWalletKey(account, accountKey, decodeKeyRef(walletKeyRef), async () => undefined).catch(() => 0);
        return { walletKeyRef, publicKey: new Uint8Array(der.subarray(2)), curve: 'secp256k1' };
      } finally {
        this.destroyObject(pair.privateKey);
        this.destroyObject(pair.publicKey);
      }
    });
  }

  async signDigest(
    accountKeyRef: string,
    walletKeyRef: string,
    digest: Uint8Array,
    options: SignDigestOptions = {},
  ): Promise<Uint8Array> {
    this.assertOpen();
    // CKM_ECDSA signs any input length without complaint: only ever a 32-byte digest.
    if (!(digest instanceof Uint8Array) || digest.length !== 32)
      throw new SignerFault('invalid_request', 'digest must be 32 bytes');
    const account = this.decodeAccountRef(accountKeyRef);
    const wallet = this.decodeLiveWalletRef(walletKeyRef, 'secp256k1', account);
    const inline = () => this.signInline === 'when_alone' && options.alone?.() === true;
    return this.withAccountKey(account, (accountKey) =>
      this.withWalletKey(account, accountKey, wallet, (walletKey) =>
        this.sign({ mechanism: pkcs11js.CKM_ECDSA, key: walletKey, input: digest, inline }, wallet),
      ),
    );
  }

  /** One signature on a pooled session, refused if the wallet is destroyed before it starts or ends (./sign-on-pool.ts). */
  private sign(request: Omit<SignOnPoolRequest, 'destroyed'>, wallet: DecodedKeyRef): Promise<Uint8Array> {
    const destroyed = () => this.tombstones.has(wallet.blobHash);
    return signOnPool(this.pool, this.module.p11, this.observer, { ...request, destroyed });
  }

  /** Ed25519 (CKM_EDDSA, single-part) over the message, with an account's token key: 64 bytes. */
  async signEd25519(accountKeyRef: string, walletKeyRef: string, message: Uint8Array): Promise<Uint8Array> {
    this.assertOpen();
    this.assertEd25519();
    assertEd25519Message(message);
    const account = this.decodeAccountRef(accountKeyRef);
    const wallet = this.decodeLiveWalletRef(walletKeyRef, 'ed25519', account);
    return this.withEd25519Key(account, wallet, (key) =>
      this.sign({ mechanism: CKM_EDDSA, key, input: message, inline: () => false }, wallet),
    );
  }

  /**
   * Tombstones the wallet key: from now on its reference is refused with `key_destroyed` in any field.
   * The blob must unwrap under the account key first (so a typo or a foreign blob answers
   * `key_not_found` instead of writing a useless tombstone); destroying twice succeeds (retry-safe).
   */
  async destroyWalletKey(accountKeyRef: string, walletKeyRef: string): Promise<void> {
    this.assertOpen();
    const wallet = decodeKeyRef(walletKeyRef);
    if (wallet.kind === 'acct')
      throw new SignerFault('key_not_found', 'wallet_key_ref is not a PKCS#11 wallet key reference');
    if (wallet.kind === 'ed25519') return this.destroyEd25519Key(accountKeyRef, wallet);
    const account = this.decodeAccountRef(accountKeyRef);
    if (this.tombstones.destroyedOf(wallet.blobHash, account.blobHash)) return;
    await this.withAccountKey(account, (accountKey) =>
      this.withWalletKey(account, accountKey, wallet, async () => undefined),
    );
    this.timed('write_tombstone', () =>
      this.tombstones.record(this.module, this.holder, wallet.blobHash, account.blobHash),
    );
    // Only this account's unwrap can have produced a cached handle for the blob (see walletCacheKey).
    this.cache.evict(Pkcs11Backend.walletCacheKey(account, wallet));
  }

  /**
   * An Ed25519 key: tombstone first (the reference is refused from then on), then the token object is
   * destroyed. A retry after a tombstone finishes an interrupted destroy (the object, if still there and
   * the account's, is destroyed); destroying twice, in a row or at once, succeeds. The lookup, the tombstone
   * and C_DestroyObject run in one synchronous stretch (the callback runs in the tick of the lookup), so two
   * destroys at once never both hold the handle: the second finds no object, and the tombstone says why.
   */
  private async destroyEd25519Key(accountKeyRef: string, wallet: DecodedKeyRef): Promise<void> {
    const account = this.decodeAccountRef(accountKeyRef);
    try {
      await this.withEd25519Key(account, wallet, async (key) => {
        this.timed('write_tombstone', () =>
          this.tombstones.record(this.module, this.holder, wallet.blobHash, account.blobHash),
        );
        this.ed25519.forget(wallet, account.blobHash);
        this.timed('destroy_wallet_key', () => this.ed25519.destroyKey(key));
      });
    } catch (err) {
      // Destroyed before, for this account: nothing of it is left in the token.
      const notFound = err instanceof SignerFault && err.code === 'key_not_found';
      if (notFound && this.tombstones.destroyedOf(wallet.blobHash, account.blobHash)) return;
      throw err;
    }
  }

  walletKeyId(walletKeyRef: string): string | undefined {
    return walletBlobHash(walletKeyRef);
  }

  isDestroyed(walletKeyRef: string): boolean {
    const id = walletBlobHash(walletKeyRef);
    return id !== undefined && this.tombstones.has(id);
  }

  /** Test and ops hook: one attribute of the root KEK (the HSM refuses CKA_VALUE: CKR_ATTRIBUTE_SENSITIVE). */
  readKekAttribute(type: number): Buffer | undefined {
    return this.readAttributeForTest(this.kek, type);
  }

  /** Test hook: the handles of the unwrapped keys currently cached (handles, never bytes). */
  unwrappedHandlesForTest(): pkcs11js.Handle[] {
    return this.cache.handles();
  }

  /** Test hook: read one attribute of an object; the HSM refuses sensitive ones with CKR_ATTRIBUTE_SENSITIVE. */
  readAttributeForTest(handle: pkcs11js.Handle, type: number): Buffer | undefined {
    const [attr] = this.module.p11.C_GetAttributeValue(this.holder, handle, [{ type }]);
    return attr?.value;
  }

  /** Destroys cached session objects, closes every session, finalizes the module. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.cache.clear();
    this.ed25519.clear(); // token objects: forgotten, not destroyed
    this.closed = true;
    this.pool.close();
    this.module.closeSession(this.holder);
    this.module.finalize();
  }
}
