/**
 * PKCS#11 key backend (SoftHSM2 locally, any PKCS#11 HSM in production), key hierarchy of DESIGN §3:
 * root KEK (AES-256 token object, non-extractable, wrap/unwrap only, found by label at start) → per-account
 * AES-256 key generated in the HSM and returned only wrapped by the KEK → per-wallet secp256k1 key pair
 * generated in the HSM, the private key returned only wrapped by its account key (CKM_AES_KEY_WRAP_PAD).
 *
 * Defends: private keys never exist outside the HSM in the clear — generated as sensitive session
 * objects, wrapped once, destroyed; unwrapped copies are sensitive, non-extractable session objects held
 * on one long-lived session and cached by handle (LRU + TTL, pinned while in use), never as bytes.
 * Destroyed wallet keys leave a tombstone (a CKO_DATA token object labelled with the SHA-256 of the
 * wrapped blob), so a destroyed reference is refused forever, under any encoding.
 * Does not defend: an attacker holding both a wrapped blob and the HSM PIN with access to the token (that
 * is the HSM's job); the generated private key is CKA_EXTRACTABLE so that it can be wrapped once — SoftHSM
 * offers no trusted-wrap path without an SO-managed trusted key.
 * Known limits: C_SignInit/C_UnwrapKey run on the main thread; only C_Sign is asynchronous.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import pkcs11js from 'pkcs11js';
import type { Pkcs11BackendConfig } from '../../config/signer-config.js';
import { SignerFault } from '../../signer-error.js';
import type { BackendHealth, CreatedWalletKey, KeyBackend } from '../key-backend.js';
import { toSignerFault } from './ckr-error-map.js';
import { SessionPool } from './session-pool.js';

const SECP256K1_PARAMS = Buffer.from('06052b8104000a', 'hex');
const WRAP_MECHANISM = { mechanism: pkcs11js.CKM_AES_KEY_WRAP_PAD };
const TOMBSTONE_APPLICATION = 'treasury-tombstone';

export interface BackendObserver {
  cacheHit?(): void;
  cacheMiss?(): void;
  hsmOperation?(op: string, seconds: number): void;
}

interface CachedKey {
  handle: pkcs11js.Handle;
  inUse: number;
  evicted: boolean;
}

type RefKind = 'acct' | 'wal';

export function encodeKeyRef(kind: RefKind, blob: Buffer): string {
  return `p11:v1:${kind}:${blob.toString('base64url')}`;
}

/** Decodes a reference of the expected kind; refuses non-canonical encodings (one blob, one spelling). */
export function decodeKeyRef(ref: string, kind: RefKind): Buffer {
  const prefix = `p11:v1:${kind}:`;
  if (!ref.startsWith(prefix)) throw new SignerFault('key_not_found', `not a PKCS#11 ${kind === 'acct' ? 'account' : 'wallet'} key reference`);
  const encoded = ref.slice(prefix.length);
  const blob = Buffer.from(encoded, 'base64url');
  if (blob.length < 16 || blob.length > 2048 || blob.toString('base64url') !== encoded) throw new SignerFault('key_not_found', 'malformed key reference');
  return blob;
}

function blobDigest(blob: Buffer): string {
  return createHash('sha256').update(blob).digest('hex');
}

export class Pkcs11Backend implements KeyBackend {
  readonly kind = 'pkcs11' as const;
  private readonly p11: pkcs11js.PKCS11;
  private readonly slot: pkcs11js.Handle;
  /** Long-lived session that owns every unwrapped session object and runs the synchronous calls. */
  private readonly holder: pkcs11js.Handle;
  private readonly pool: SessionPool;
  private readonly kek: pkcs11js.Handle;
  private readonly cache: LRUCache<string, CachedKey> | undefined;
  private readonly tombstones = new Set<string>();
  private closed = false;

  private constructor(
    private readonly config: Pkcs11BackendConfig,
    private readonly observer: BackendObserver,
  ) {
    this.p11 = new pkcs11js.PKCS11();
    this.p11.load(config.modulePath);
    // CKF_OS_LOCKING_OK is mandatory: without it concurrent async calls crash SoftHSM.
    this.p11.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
    try {
      const slot = this.p11.C_GetSlotList(true).find((s) => this.p11.C_GetTokenInfo(s).label.trim() === config.tokenLabel);
      if (slot === undefined) throw new SignerFault('hsm_unavailable', `no token labelled ${config.tokenLabel}`);
      this.slot = slot;
      this.holder = this.p11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
      try {
        this.p11.C_Login(this.holder, pkcs11js.CKU_USER, config.pin);
      } catch (err) {
        if ((err as { code?: number }).code !== pkcs11js.CKR_USER_ALREADY_LOGGED_IN) throw toSignerFault(err, 'C_Login');
      }
      const kek = this.findOne([
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
        { type: pkcs11js.CKA_LABEL, value: config.kekLabel },
      ]);
      if (kek === null) throw new SignerFault('key_not_found', `root KEK "${config.kekLabel}" not found on token ${config.tokenLabel}; run npm run hsm:init`);
      this.kek = kek;
      this.loadTombstones();
      this.pool = new SessionPool(this.p11, slot, config.sessions);
      this.cache =
        config.cacheSize > 0
          ? new LRUCache<string, CachedKey>({
              max: config.cacheSize,
              ttl: config.cacheTtlMs,
              ttlAutopurge: true,
              dispose: (entry) => {
                entry.evicted = true;
                if (entry.inUse === 0) this.destroyObject(entry.handle);
              },
            })
          : undefined;
    } catch (err) {
      try {
        this.p11.C_Finalize();
      } catch {
        /* ignore */
      }
      throw err instanceof SignerFault ? err : toSignerFault(err, 'PKCS#11 initialisation');
    }
  }

  static open(config: Pkcs11BackendConfig, observer: BackendObserver = {}): Pkcs11Backend {
    return new Pkcs11Backend(config, observer);
  }

  private findOne(template: pkcs11js.Template): pkcs11js.Handle | null {
    this.p11.C_FindObjectsInit(this.holder, template);
    try {
      return this.p11.C_FindObjects(this.holder);
    } finally {
      this.p11.C_FindObjectsFinal(this.holder);
    }
  }

  private loadTombstones(): void {
    this.p11.C_FindObjectsInit(this.holder, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_DATA },
      { type: pkcs11js.CKA_APPLICATION, value: TOMBSTONE_APPLICATION },
    ]);
    const handles: pkcs11js.Handle[] = [];
    try {
      for (;;) {
        const batch = this.p11.C_FindObjects(this.holder, 256);
        if (batch.length === 0) break;
        handles.push(...batch);
      }
    } finally {
      this.p11.C_FindObjectsFinal(this.holder);
    }
    for (const h of handles) {
      const [label] = this.p11.C_GetAttributeValue(this.holder, h, [{ type: pkcs11js.CKA_LABEL }]);
      if (label?.value instanceof Buffer) this.tombstones.add(label.value.toString('utf8'));
    }
  }

  private destroyObject(handle: pkcs11js.Handle): void {
    if (this.closed) return;
    try {
      this.p11.C_DestroyObject(this.holder, handle);
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

  private unwrapAccountKey(blob: Buffer): pkcs11js.Handle {
    return this.timed('unwrap_account_key', () =>
      this.p11.C_UnwrapKey(this.holder, WRAP_MECHANISM, this.kek, blob, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
        { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
        { type: pkcs11js.CKA_TOKEN, value: false },
        { type: pkcs11js.CKA_PRIVATE, value: true },
        { type: pkcs11js.CKA_SENSITIVE, value: true },
        { type: pkcs11js.CKA_EXTRACTABLE, value: false },
        { type: pkcs11js.CKA_WRAP, value: true },
        { type: pkcs11js.CKA_UNWRAP, value: true },
        { type: pkcs11js.CKA_ENCRYPT, value: false },
        { type: pkcs11js.CKA_DECRYPT, value: false },
      ]),
    );
  }

  private unwrapWalletKey(accountKey: pkcs11js.Handle, blob: Buffer): pkcs11js.Handle {
    return this.timed('unwrap_wallet_key', () =>
      this.p11.C_UnwrapKey(this.holder, WRAP_MECHANISM, accountKey, blob, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
        { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_EC },
        { type: pkcs11js.CKA_TOKEN, value: false },
        { type: pkcs11js.CKA_PRIVATE, value: true },
        { type: pkcs11js.CKA_SENSITIVE, value: true },
        { type: pkcs11js.CKA_EXTRACTABLE, value: false },
        { type: pkcs11js.CKA_SIGN, value: true },
        { type: pkcs11js.CKA_DECRYPT, value: false },
        { type: pkcs11js.CKA_DERIVE, value: false },
      ]),
    );
  }

  /**
   * Runs `fn` with an unwrapped key handle: from the cache when present (pinned while in use), else
   * unwrapped now and cached (or destroyed right after when caching is off).
   */
  private async withKey<T>(cacheKey: string, unwrap: () => pkcs11js.Handle, fn: (handle: pkcs11js.Handle) => Promise<T>): Promise<T> {
    let entry = this.cache?.get(cacheKey);
    if (entry) this.observer.cacheHit?.();
    else {
      this.observer.cacheMiss?.();
      entry = { handle: unwrap(), inUse: 0, evicted: false };
      if (this.cache) this.cache.set(cacheKey, entry);
      else entry.evicted = true;
    }
    entry.inUse++;
    try {
      return await fn(entry.handle);
    } finally {
      entry.inUse--;
      if (entry.evicted && entry.inUse === 0) this.destroyObject(entry.handle);
    }
  }

  private withAccountKey<T>(accountKeyRef: string, fn: (handle: pkcs11js.Handle) => Promise<T>): Promise<T> {
    const blob = decodeKeyRef(accountKeyRef, 'acct');
    return this.withKey(`acct:${blobDigest(blob)}`, () => this.unwrapAccountKey(blob), fn);
  }

  async health(): Promise<BackendHealth> {
    this.assertOpen();
    this.timed('token_info', () => this.p11.C_GetTokenInfo(this.slot));
    return { backend: 'pkcs11' };
  }

  async createAccountKey(): Promise<string> {
    this.assertOpen();
    const key = this.timed('generate_account_key', () =>
      this.p11.C_GenerateKey(this.holder, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
        { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
        { type: pkcs11js.CKA_VALUE_LEN, value: 32 },
        { type: pkcs11js.CKA_TOKEN, value: false },
        { type: pkcs11js.CKA_PRIVATE, value: true },
        { type: pkcs11js.CKA_SENSITIVE, value: true },
        { type: pkcs11js.CKA_EXTRACTABLE, value: true },
        { type: pkcs11js.CKA_WRAP, value: true },
        { type: pkcs11js.CKA_UNWRAP, value: true },
        { type: pkcs11js.CKA_ENCRYPT, value: false },
        { type: pkcs11js.CKA_DECRYPT, value: false },
      ]),
    );
    try {
      const wrapped = this.timed('wrap_account_key', () => this.p11.C_WrapKey(this.holder, WRAP_MECHANISM, this.kek, key, Buffer.alloc(512)));
      return encodeKeyRef('acct', Buffer.from(wrapped));
    } finally {
      this.destroyObject(key);
    }
  }

  async createWalletKey(accountKeyRef: string): Promise<CreatedWalletKey> {
    this.assertOpen();
    return this.withAccountKey(accountKeyRef, async (accountKey) => {
      const pair = this.timed('generate_wallet_key', () =>
        this.p11.C_GenerateKeyPair(
          this.holder,
          { mechanism: pkcs11js.CKM_EC_KEY_PAIR_GEN },
          [
            { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY },
            { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_EC },
            { type: pkcs11js.CKA_EC_PARAMS, value: SECP256K1_PARAMS },
            { type: pkcs11js.CKA_TOKEN, value: false },
            { type: pkcs11js.CKA_VERIFY, value: true },
          ],
          [
            { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
            { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_EC },
            { type: pkcs11js.CKA_TOKEN, value: false },
            { type: pkcs11js.CKA_PRIVATE, value: true },
            { type: pkcs11js.CKA_SENSITIVE, value: true },
            { type: pkcs11js.CKA_EXTRACTABLE, value: true },
            { type: pkcs11js.CKA_SIGN, value: true },
            { type: pkcs11js.CKA_DERIVE, value: false },
          ],
        ),
      );
      try {
        const [point] = this.timed('read_public_key', () => this.p11.C_GetAttributeValue(this.holder, pair.publicKey, [{ type: pkcs11js.CKA_EC_POINT }]));
        const der = point?.value;
        // CKA_EC_POINT is a DER OCTET STRING around 04‖X‖Y.
        if (!(der instanceof Buffer) || der.length !== 67 || der[0] !== 0x04 || der[1] !== 0x41 || der[2] !== 0x04) {
          throw new SignerFault('hsm_error', 'unexpected CKA_EC_POINT encoding');
        }
        const wrapped = this.timed('wrap_wallet_key', () => this.p11.C_WrapKey(this.holder, WRAP_MECHANISM, accountKey, pair.privateKey, Buffer.alloc(1024)));
        return { walletKeyRef: encodeKeyRef('wal', Buffer.from(wrapped)), publicKey: new Uint8Array(der.subarray(2)) };
      } finally {
        this.destroyObject(pair.privateKey);
        this.destroyObject(pair.publicKey);
      }
    });
  }

  async signDigest(accountKeyRef: string, walletKeyRef: string, digest: Uint8Array): Promise<Uint8Array> {
    this.assertOpen();
    // CKM_ECDSA signs any input length without complaint: only ever a 32-byte digest.
    if (!(digest instanceof Uint8Array) || digest.length !== 32) throw new SignerFault('invalid_request', 'digest must be 32 bytes');
    const walletBlob = decodeKeyRef(walletKeyRef, 'wal');
    const walletDigest = blobDigest(walletBlob);
    if (this.tombstones.has(`tomb:${walletDigest}`)) throw new SignerFault('key_destroyed', 'this wallet key was destroyed');
    return this.withAccountKey(accountKeyRef, (accountKey) =>
      this.withKey(
        `wal:${walletDigest}`,
        () => this.unwrapWalletKey(accountKey, walletBlob),
        (walletKey) =>
          this.pool.with(async (session) => {
            const started = process.hrtime.bigint();
            try {
              this.p11.C_SignInit(session, { mechanism: pkcs11js.CKM_ECDSA }, walletKey);
              const signature = await this.p11.C_SignAsync(session, Buffer.from(digest), Buffer.alloc(64));
              if (signature.length !== 64) throw new SignerFault('hsm_error', `unexpected signature length ${signature.length}`);
              return new Uint8Array(signature);
            } catch (err) {
              throw toSignerFault(err, 'C_Sign');
            } finally {
              this.observer.hsmOperation?.('sign', Number(process.hrtime.bigint() - started) / 1e9);
            }
          }),
      ),
    );
  }

  async destroyWalletKey(accountKeyRef: string, walletKeyRef: string): Promise<void> {
    this.assertOpen();
    decodeKeyRef(accountKeyRef, 'acct');
    const walletDigest = blobDigest(decodeKeyRef(walletKeyRef, 'wal'));
    const label = `tomb:${walletDigest}`;
    if (!this.tombstones.has(label)) {
      this.timed('write_tombstone', () =>
        this.p11.C_CreateObject(this.holder, [
          { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_DATA },
          { type: pkcs11js.CKA_TOKEN, value: true },
          { type: pkcs11js.CKA_PRIVATE, value: true },
          { type: pkcs11js.CKA_MODIFIABLE, value: false },
          { type: pkcs11js.CKA_APPLICATION, value: TOMBSTONE_APPLICATION },
          { type: pkcs11js.CKA_LABEL, value: label },
        ]),
      );
      this.tombstones.add(label);
    }
    this.cache?.delete(`wal:${walletDigest}`);
  }

  /** Test and ops hook: read an attribute of the root KEK (e.g. to prove CKA_VALUE is refused). */
  readKekAttribute(type: number): Buffer | undefined {
    return this.readAttributeForTest(this.kek, type);
  }

  /** Test hook: the handles of the unwrapped keys currently cached (handles, never bytes). */
  unwrappedHandlesForTest(): pkcs11js.Handle[] {
    return this.cache ? [...this.cache.values()].map((e) => e.handle) : [];
  }

  /** Test hook: read one attribute of an object; the HSM refuses sensitive ones with CKR_ATTRIBUTE_SENSITIVE. */
  readAttributeForTest(handle: pkcs11js.Handle, type: number): Buffer | undefined {
    const [attr] = this.p11.C_GetAttributeValue(this.holder, handle, [{ type }]);
    return attr?.value as Buffer | undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.cache?.clear();
    this.closed = true;
    this.pool.close();
    try {
      this.p11.C_CloseSession(this.holder);
    } catch {
      /* ignore */
    }
    try {
      this.p11.C_Finalize();
      this.p11.close();
    } catch {
      /* ignore */
    }
  }
}
