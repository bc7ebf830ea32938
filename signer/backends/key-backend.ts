/**
 * The contract every key backend fulfils: PKCS#11 (./pkcs11/pkcs11-backend.ts) and AWS KMS
 * (./aws-kms/aws-kms-backend.ts: one ECC_SECG_P256K1 KMS key per wallet, Sign with MessageType DIGEST,
 * KMS's DER parsed into r‖s). Both pass one contract suite (test/integration/signer/key-backend-contract.ts).
 *
 * Protects against: callers depending on a backend's internals — key references are opaque strings
 * matching the protocol's keyRefSchema, and no method returns private key bytes.
 * Known limits: `signDigest` signs whatever 32 bytes it is given; only the signer service calls it, with
 * a digest it computed itself from a structured EIP-3009 authorization (there is no raw-digest RPC).
 */
export type BackendKind = 'pkcs11' | 'aws-kms';

export interface BackendHealth {
  backend: BackendKind;
}

export interface CreatedWalletKey {
  /** Opaque reference the front stores (PKCS#11: the DEK wrapped by its account key). */
  walletKeyRef: string;
  /** Uncompressed SEC1 public key 0x04‖X‖Y (65 bytes). */
  publicKey: Uint8Array;
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
  createWalletKey(accountKeyRef: string): Promise<CreatedWalletKey>;
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
  /** After this, the wallet reference is refused forever with `key_destroyed`. Idempotent. */
  destroyWalletKey(accountKeyRef: string, walletKeyRef: string): Promise<void>;
  /** Releases sessions/clients. Idempotent. */
  close(): Promise<void>;
}
