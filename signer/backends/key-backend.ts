/**
 * The contract every key backend fulfils: PKCS#11 (./pkcs11/pkcs11-backend.ts) and AWS KMS
 * (./aws-kms/aws-kms-backend.ts: one ECC_SECG_P256K1 KMS key per wallet, Sign with MessageType DIGEST,
 * KMS's DER parsed into r‖s), each for secp256k1 and Ed25519 wallet keys (docs/adr/0013-solana-keys.md).
 * Both pass one contract suite, on both curves (test/integration/signer/key-backend-contract.ts).
 *
 * Protects against: callers depending on a backend's internals — key references are opaque strings
 * matching the protocol's keyRefSchema, and no method returns private key bytes.
 * Known limits: `signDigest` signs whatever 32 bytes it is given, and `signEd25519` whatever message; only
 * the signer service calls them, with a digest it computed itself from a structured authorization, or a
 * message it decoded and checked (there is no raw-bytes RPC). A wallet key's curve is fixed at creation
 * and named by its reference: each signing method refuses a key of the other curve.
 */
import type { z } from 'zod';
import type { walletKeyCurveSchema } from '../protocol/signer-protocol.js';

export type BackendKind = 'pkcs11' | 'aws-kms';

/** The curves a wallet key may be on: secp256k1 (EVM, the default) or Ed25519 (Solana). */
export type WalletKeyCurve = z.infer<typeof walletKeyCurveSchema>;

export interface BackendHealth {
  backend: BackendKind;
}

export interface CreatedWalletKey {
  /**
   * Opaque reference the front stores (PKCS#11: the DEK wrapped by its account key, or the CKA_ID of an
   * Ed25519 token object); its encoding names the curve.
   */
  walletKeyRef: string;
  /** secp256k1: uncompressed SEC1 public key 0x04‖X‖Y (65 bytes); ed25519: the raw 32-byte public key. */
  publicKey: Uint8Array;
  curve: WalletKeyCurve;
}

export interface SignDigestOptions {
  /**
   * Whether this is the only request the signer holds, asked at the moment the backend is about to sign
   * (requests that arrived in the same read are counted by then). A backend may then sign on the calling
   * thread instead of handing the operation to a worker thread.
   */
  alone?: () => boolean;
}

export interface KeyBackend {
  readonly kind: BackendKind;
  /** Resolves when the backend can sign; rejects with a SignerFault (`hsm_unavailable` for PKCS#11, `backend_unavailable` for KMS) otherwise. */
  health(): Promise<BackendHealth>;
  /** A new account key; returns its opaque reference. */
  createAccountKey(): Promise<string>;
  /** A new wallet key of the account on `curve` (default secp256k1). */
  createWalletKey(accountKeyRef: string, curve?: WalletKeyCurve): Promise<CreatedWalletKey>;
  /**
   * Raw ECDSA over a 32-byte digest: r‖s, 64 bytes, not yet normalised (see ecdsa/finalize-signature.ts).
   * A backend whose device answers DER parses it here.
   */
  signDigest(
    accountKeyRef: string,
    walletKeyRef: string,
    digest: Uint8Array,
    options?: SignDigestOptions,
  ): Promise<Uint8Array>;
  /**
   * RFC 8032 Ed25519 (PureEdDSA) over the message bytes: 64 bytes. A secp256k1 key is refused with
   * `invariant_violation` (as signDigest refuses an Ed25519 key); a message outside the bounds of
   * ./ed25519-message.ts with `invalid_request`.
   */
  signEd25519(accountKeyRef: string, walletKeyRef: string, message: Uint8Array): Promise<Uint8Array>;
  /**
   * After this, the wallet reference is refused forever with `key_destroyed` under its own account, and with
   * `key_not_found` under any other (the tombstone names the key's account; destroying it again under another account
   * is `key_not_found` too). Idempotent, also when two run at once.
   * Once it has resolved, no signature with the key starts and none is returned — a signature asked for before it,
   * still waiting (for a session, the sign rate, a retry), answers `key_destroyed` too; one being computed when the
   * key was tombstoned is discarded. A signature returned before that is the caller's: the signer service holds
   * back one whose key's destroy has started (`walletKeyId`, `isDestroyed`; ../key-destruction/).
   */
  destroyWalletKey(accountKeyRef: string, walletKeyRef: string): Promise<void>;
  /**
   * The wallet key `walletKeyRef` names, as one string however the reference may be spelled (PKCS#11: the hash of its
   * blob, as tombstones are keyed; KMS: the key id), or undefined when it names no wallet key of this backend. Pure:
   * no I/O. The signer service keys the destroys it has under way by it (../key-destruction/).
   */
  walletKeyId(walletKeyRef: string): string | undefined;
  /**
   * Whether this process holds the wallet key's tombstone (destroyed here, or before it started). Synchronous, no
   * I/O: asked right before a signature leaves the service. A KMS key an operator disabled is not tombstoned.
   */
  isDestroyed(walletKeyRef: string): boolean;
  /** Releases sessions/clients. Idempotent. */
  close(): Promise<void>;
}
