/**
 * AWS KMS key backend: each wallet key is a KMS asymmetric key (ECC_SECG_P256K1 or, for Ed25519,
 * ECC_NIST_EDWARDS25519, SIGN_VERIFY: ./kms-curves.ts) created in
 * KMS, tagged with its Treasury account and a request id, and reached through the alias
 * `alias/<prefix>/<account>/<key id>` (./kms-key-ref.ts); its private half never exists outside KMS. An
 * account is a random id the signer makes (no KMS resource): the alias binds each wallet key to it, and
 * with TREASURY_KMS_SIGNER_PRINCIPAL_ARN each key carries the account's key policy (./kms-key-policy.ts).
 * Signing sends `Sign{MessageType: DIGEST, ECDSA_SHA_256}` over the 32-byte digest the signer computed,
 * checks KMS answered for the right key, and turns the DER into r‖s (./kms-der-signature.ts); Ed25519 keys
 * sign the message itself (`ED25519_SHA_512`, RAW) and KMS answers the raw 64 bytes; low-S,
 * yParity and the address check are the shared ../../ecdsa/finalize-signature.ts. The public key is read
 * once (GetPublicKey) and cached. Destroy = tombstone, DisableKey, ScheduleKeyDeletion (pending window
 * TREASURY_KMS_DELETION_WINDOW_DAYS, default 7).
 *
 * Quotas and faults: Sign calls keep to TREASURY_KMS_SIGN_RATE_PER_SECOND (./kms-sign-rate.ts); every call
 * ends by TREASURY_KMS_DEADLINE_MS, throttling, 5xx and timeouts are retried with backoff and jitter within
 * it (./kms-call.ts), and an unreachable KMS answers `backend_unavailable` at once (a refused connection
 * at the first call; a KMS that only times out after three calls in a row, ./kms-breaker.ts). CreateKey is not
 * idempotent: it is sent again only after a clean refusal; after a 5xx or a timeout it fails, and the key
 * it may have made has no alias, so it is never used (docs/aws-kms.md: finding such keys by their tag).
 * A key created but not named (CreateAlias or GetPublicKey failed) is disabled and scheduled for deletion.
 *
 * Protects against: private keys outside KMS; a wallet key used under another account (wrong pairing:
 * the alias does not exist → `key_not_found`); an alias re-pointed at another key (Sign's answer must name
 * the key id of the reference, and the signature must still recover to the wallet's address); destroyed
 * keys signing again (disabled at once; KMS refuses Sign; tombstones answer `key_destroyed` for good — also to
 * a Sign asked for before the destroy: checked before each attempt and on KMS's answer, ./kms-sign.ts).
 * Known limits: whoever holds the signer's AWS credentials can sign with every wallet key (the IAM policy
 * and key policy are the crown jewels here, as the PIN is for PKCS#11); a key disabled by an operator is
 * treated as destroyed (`key_destroyed`).
 */
import http from 'node:http';
import https from 'node:https';
import { randomBytes } from 'node:crypto';
import {
  CreateAliasCommand,
  CreateKeyCommand,
  DescribeKeyCommand,
  DisableKeyCommand,
  GetPublicKeyCommand,
  KMSClient,
  ListKeysCommand,
  ScheduleKeyDeletionCommand,
  type KMSClientConfig,
} from '@aws-sdk/client-kms';
import { LRUCache } from 'lru-cache';
import type { AwsKmsBackendConfig } from '../../config/signer-config.js';
import { SignerFault } from '../../signer-error.js';
import type { BackendHealth, CreatedWalletKey, KeyBackend, WalletKeyCurve } from '../key-backend.js';
import { assertEd25519Message } from '../ed25519-message.js';
import { KmsBreaker } from './kms-breaker.js';
import {
  DEFAULT_RETRY_POLICY,
  KmsCallFault,
  runKmsCall,
  type KmsCallObserver,
  type KmsRetryPolicy,
  type KmsSendOptions,
} from './kms-call.js';
import { KMS_CURVES } from './kms-curves.js';
import { derSignatureToCompact } from './kms-der-signature.js';
import { awsAccountOfArn, walletKeyPolicy } from './kms-key-policy.js';
import {
  arnNamesKey,
  decodeAccountRef,
  decodeWalletKey,
  encodeAccountRef,
  encodeWalletRef,
  walletAlias,
  walletKeyIdOf,
} from './kms-key-ref.js';
import { KmsInFlight } from './kms-in-flight.js';
import { signWithKms, type KmsSignDeps } from './kms-sign.js';
import { KmsSignRate } from './kms-sign-rate.js';
import { KmsTombstones } from './kms-tombstones.js';

export type KmsBackendObserver = KmsCallObserver;

/** Test and tool seams: SDK settings that never come from Treasury's configuration (static test credentials, a retry policy for fast tests). */
export interface KmsBackendOverrides {
  sdk?: Partial<KMSClientConfig>;
  retry?: Partial<KmsRetryPolicy>;
}

const KEY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const KMS_TAG_MANAGED = 'treasury:managed';
export const KMS_TAG_ACCOUNT = 'treasury:account';
export const KMS_TAG_REQUEST = 'treasury:request';

export class AwsKmsBackend implements KeyBackend {
  readonly kind = 'aws-kms' as const;
  private readonly client: KMSClient;
  private readonly rate: KmsSignRate;
  private readonly inFlight: KmsInFlight;
  private readonly breaker = new KmsBreaker();
  private readonly policy: KmsRetryPolicy;
  private readonly signDeps: KmsSignDeps;
  /** Alias → public key (public data). */
  private readonly publicKeys: LRUCache<string, Uint8Array>;
  private closed = false;

  private constructor(
    private readonly config: AwsKmsBackendConfig,
    private readonly tombstones: KmsTombstones,
    private readonly observer: KmsBackendObserver,
    overrides: KmsBackendOverrides,
  ) {
    // More sockets than requests allowed in flight (./kms-in-flight.ts): a request never queues inside the agent.
    const agent = { keepAlive: true, maxSockets: config.maxInFlight + 8 };
    this.client = new KMSClient({
      region: config.region,
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      // One attempt per send: ./kms-call.ts retries, counts and bounds (the SDK's retries would hide throttles from the metrics and ignore the deadline).
      maxAttempts: 1,
      requestHandler: {
        connectionTimeout: Math.min(1000, config.attemptTimeoutMs),
        httpAgent: new http.Agent(agent),
        httpsAgent: new https.Agent(agent),
      },
      ...overrides.sdk,
    });
    this.policy = { ...DEFAULT_RETRY_POLICY, attemptTimeoutMs: config.attemptTimeoutMs, ...overrides.retry };
    this.inFlight = new KmsInFlight(config.maxInFlight);
    this.rate = new KmsSignRate(config.signRatePerSecond, Math.max(1024, config.maxInFlight * 4));
    this.publicKeys = new LRUCache({ max: Math.max(1, config.cacheSize) });
    this.signDeps = {
      client: this.client,
      send: (op, idempotent, attempt, options) => this.send(op, idempotent, attempt, options),
      rate: this.rate,
      tombstones,
      aliasPrefix: config.aliasPrefix,
      deadlineMs: config.deadlineMs,
    };
  }

  /** Builds the client and loads tombstones; no network call (health() is the first). */
  static open(
    config: AwsKmsBackendConfig,
    observer: KmsBackendObserver = {},
    overrides: KmsBackendOverrides = {},
  ): AwsKmsBackend {
    return new AwsKmsBackend(config, KmsTombstones.load(config.tombstoneFile), observer, overrides);
  }

  private assertOpen(): void {
    if (this.closed) throw new SignerFault('backend_unavailable', 'backend closed');
  }

  /**
   * One KMS operation (a KmsSend): refused at once while KMS is known not to answer (./kms-breaker.ts), else run
   * within its deadline (./kms-call.ts).
   */
  private async send<T>(
    op: string,
    idempotent: boolean,
    attempt: (signal: AbortSignal) => Promise<T>,
    { deadline = Date.now() + this.config.deadlineMs, probe = false, refuse }: KmsSendOptions = {},
  ): Promise<T> {
    if (!probe) {
      try {
        this.breaker.admit(op);
      } catch (err) {
        this.observer.kmsFailure?.(op, 'circuit_open');
        throw err;
      }
    }
    try {
      const result = await runKmsCall(op, attempt, {
        idempotent,
        deadline,
        policy: this.policy,
        observer: this.observer,
        slot: (until, fn) => this.inFlight.run(until, fn),
        refuse,
      });
      this.breaker.succeeded();
      return result;
    } catch (err) {
      if (err instanceof KmsCallFault) this.breaker.failed(err.kms.reason);
      throw err;
    }
  }

  /** KMS answers and our credentials work: a one-key ListKeys (needs only kms:ListKeys), bounded by one attempt's timeout. */
  async health(): Promise<BackendHealth> {
    this.assertOpen();
    try {
      // Always asks KMS, breaker or not: this is how /readyz sees KMS come back.
      await this.send(
        'list_keys',
        true,
        (abortSignal) => this.client.send(new ListKeysCommand({ Limit: 1 }), { abortSignal }),
        { deadline: Date.now() + this.config.attemptTimeoutMs, probe: true },
      );
    } catch (err) {
      throw new SignerFault('backend_unavailable', err instanceof Error ? err.message : 'KMS health check failed');
    }
    return { backend: 'aws-kms' };
  }

  async createAccountKey(): Promise<string> {
    this.assertOpen();
    return encodeAccountRef(randomBytes(16).toString('hex'));
  }

  async createWalletKey(accountKeyRef: string, curve: WalletKeyCurve = 'secp256k1'): Promise<CreatedWalletKey> {
    this.assertOpen();
    const account = decodeAccountRef(accountKeyRef);
    const spec = KMS_CURVES[curve];
    const request = randomBytes(16).toString('hex');
    const awsAccountId = this.config.signerPrincipalArn ? awsAccountOfArn(this.config.signerPrincipalArn) : undefined;
    const policy =
      this.config.signerPrincipalArn && awsAccountId
        ? walletKeyPolicy({
            awsAccountId,
            signerPrincipalArn: this.config.signerPrincipalArn,
            adminPrincipalArn: this.config.adminPrincipalArn,
            treasuryAccountId: account,
            curve,
          })
        : undefined;
    let created;
    try {
      created = await this.send('create_key', false, (abortSignal) =>
        this.client.send(
          new CreateKeyCommand({
            KeySpec: spec.keySpec,
            KeyUsage: 'SIGN_VERIFY',
            Description: 'Treasury wallet key',
            ...(policy ? { Policy: policy } : {}),
            Tags: [
              { TagKey: KMS_TAG_MANAGED, TagValue: 'true' },
              { TagKey: KMS_TAG_ACCOUNT, TagValue: account },
              { TagKey: KMS_TAG_REQUEST, TagValue: request },
            ],
          }),
          { abortSignal },
        ),
      );
    } catch (err) {
      // Name the request tag so an operator can find a key a maybe-executed CreateKey left behind.
      if (err instanceof KmsCallFault && err.kms.maybeExecuted)
        throw new KmsCallFault(err.code, `${err.message} (tag ${KMS_TAG_REQUEST}=${request})`, err.kms);
      throw err;
    }
    const meta = created.KeyMetadata;
    const keyId = meta?.KeyId;
    if (typeof keyId !== 'string' || !KEY_ID.test(keyId))
      throw new SignerFault('hsm_error', 'KMS CreateKey answered without a key id');
    try {
      if (meta?.KeySpec !== spec.keySpec || meta.KeyUsage !== 'SIGN_VERIFY')
        throw new SignerFault('hsm_error', 'KMS created a key of another spec or usage');
      const alias = walletAlias(this.config.aliasPrefix, account, keyId);
      await this.createAlias(alias, keyId);
      const publicKey = await this.publicKey(alias, keyId, curve);
      return { walletKeyRef: encodeWalletRef(keyId, curve), publicKey, curve };
    } catch (err) {
      // The front will never learn this key's reference: do not leave it usable (best effort).
      await this.retire(keyId).catch(() => undefined);
      throw err;
    }
  }

  /** CreateAlias, retried safely: an AlreadyExists on a retry is success if the alias names our key. */
  private async createAlias(alias: string, keyId: string): Promise<void> {
    try {
      await this.send('create_alias', true, (abortSignal) =>
        this.client.send(new CreateAliasCommand({ AliasName: alias, TargetKeyId: keyId }), { abortSignal }),
      );
    } catch (err) {
      if (!(err instanceof KmsCallFault && err.kms.reason === 'already_exists')) throw err;
      const described = await this.send('describe_key', true, (abortSignal) =>
        this.client.send(new DescribeKeyCommand({ KeyId: alias }), { abortSignal }),
      );
      if (described.KeyMetadata?.KeyId !== keyId)
        throw new SignerFault('hsm_error', 'KMS alias already names another key');
    }
  }

  /** The wallet key's public key (./kms-curves.ts), read once through its alias and cached. */
  private async publicKey(alias: string, keyId: string, curve: WalletKeyCurve): Promise<Uint8Array> {
    const known = this.publicKeys.get(alias);
    if (known) return known;
    const out = await this.send('get_public_key', true, (abortSignal) =>
      this.client.send(new GetPublicKeyCommand({ KeyId: alias }), { abortSignal }),
    );
    if (!arnNamesKey(out.KeyId, keyId)) throw new SignerFault('hsm_error', 'KMS answered GetPublicKey for another key');
    if (out.KeySpec !== KMS_CURVES[curve].keySpec || out.KeyUsage !== 'SIGN_VERIFY' || !out.PublicKey)
      throw new SignerFault('hsm_error', `KMS key is not a ${curve} signing key`);
    const point = KMS_CURVES[curve].publicKey(out.PublicKey);
    this.publicKeys.set(alias, point);
    return point;
  }

  async signDigest(accountKeyRef: string, walletKeyRef: string, digest: Uint8Array): Promise<Uint8Array> {
    this.assertOpen();
    // MessageType DIGEST: KMS signs these 32 bytes as they are (RAW would SHA-256 them again).
    if (!(digest instanceof Uint8Array) || digest.length !== 32)
      throw new SignerFault('invalid_request', 'digest must be 32 bytes');
    return derSignatureToCompact(await this.sign(accountKeyRef, walletKeyRef, 'secp256k1', digest));
  }

  async signEd25519(accountKeyRef: string, walletKeyRef: string, message: Uint8Array): Promise<Uint8Array> {
    this.assertOpen();
    assertEd25519Message(message);
    const signature = await this.sign(accountKeyRef, walletKeyRef, 'ed25519', message);
    if (signature.length !== 64)
      throw new SignerFault('hsm_error', 'KMS answered an Ed25519 signature of another length');
    return signature;
  }

  /** One Sign, held to the key's tombstone before each attempt and on KMS's answer (./kms-sign.ts). */
  private sign(accountKeyRef: string, walletKeyRef: string, curve: WalletKeyCurve, message: Uint8Array) {
    return signWithKms(this.signDeps, { accountKeyRef, walletKeyRef, curve, message });
  }

  /**
   * Tombstone, then DisableKey, then ScheduleKeyDeletion. The key must be reachable through the account's
   * alias first (a typo or a foreign pairing answers `key_not_found`, writing nothing). Idempotent, and a
   * retry finishes what an interrupted destroy left (a disabled key still gets its deletion scheduled).
   */
  async destroyWalletKey(accountKeyRef: string, walletKeyRef: string): Promise<void> {
    this.assertOpen();
    const { keyId, curve } = decodeWalletKey(walletKeyRef);
    const account = decodeAccountRef(accountKeyRef);
    const alias = walletAlias(this.config.aliasPrefix, account, keyId);
    let state: string | undefined;
    try {
      const described = await this.send('describe_key', true, (abortSignal) =>
        this.client.send(new DescribeKeyCommand({ KeyId: alias }), { abortSignal }),
      );
      if (described.KeyMetadata?.KeyId !== keyId) throw new SignerFault('hsm_error', 'KMS alias names another key');
      // One key, one name: a reference spelled with the other curve's prefix is not this key.
      if (described.KeyMetadata.KeySpec !== KMS_CURVES[curve].keySpec)
        throw new SignerFault('key_not_found', `wallet_key_ref is not a ${curve} key`);
      state = described.KeyMetadata.KeyState;
    } catch (err) {
      // KMS deleted the key (and its alias) after the pending window: already destroyed by us, for this account.
      const state = this.tombstones.stateFor(keyId, account);
      if (err instanceof KmsCallFault && err.kms.reason === 'not_found' && state === 'destroyed') return;
      throw err;
    }
    this.tombstones.record(keyId, account);
    this.publicKeys.delete(alias);
    if (state === 'PendingDeletion') return;
    await this.retire(keyId, state === 'Disabled');
  }

  walletKeyId(walletKeyRef: string): string | undefined {
    return walletKeyIdOf(walletKeyRef);
  }

  isDestroyed(walletKeyRef: string): boolean {
    const id = walletKeyIdOf(walletKeyRef);
    return id !== undefined && this.tombstones.has(id);
  }

  /** DisableKey (unless already disabled), then ScheduleKeyDeletion; a key already pending deletion is done. */
  private async retire(keyId: string, disabled = false): Promise<void> {
    const alreadyPending = (err: unknown) => err instanceof KmsCallFault && err.kms.reason === 'invalid_state';
    if (!disabled) {
      try {
        await this.send('disable_key', true, (abortSignal) =>
          this.client.send(new DisableKeyCommand({ KeyId: keyId }), { abortSignal }),
        );
      } catch (err) {
        if (alreadyPending(err)) return;
        throw err;
      }
    }
    try {
      await this.send('schedule_key_deletion', true, (abortSignal) =>
        this.client.send(
          new ScheduleKeyDeletionCommand({ KeyId: keyId, PendingWindowInDays: this.config.deletionWindowDays }),
          { abortSignal },
        ),
      );
    } catch (err) {
      if (!alreadyPending(err)) throw err;
    }
  }

  /** Releases the SDK client's sockets. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.client.destroy();
  }
}
