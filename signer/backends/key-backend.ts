/**
 * The contract every key backend fulfils (PKCS#11 today; an AWS KMS backend with one KMS key per wallet
 * and Sign(MessageType DIGEST) fits it unchanged). Key references are opaque strings the front stores and
 * hands back; a backend never returns private key bytes, and `signDigest` is reachable only through the
 * signer service, which computes the digest itself from a structured EIP-3009 authorization.
 */
export interface BackendHealth {
  backend: 'pkcs11' | 'aws-kms';
}

export interface CreatedWalletKey {
  walletKeyRef: string;
  /** Uncompressed SEC1 public key 0x04‖X‖Y (65 bytes). */
  publicKey: Uint8Array;
}

export interface KeyBackend {
  readonly kind: 'pkcs11' | 'aws-kms';
  health(): Promise<BackendHealth>;
  createAccountKey(): Promise<string>;
  createWalletKey(accountKeyRef: string): Promise<CreatedWalletKey>;
  /** Raw ECDSA over a 32-byte digest: r‖s, 64 bytes, not yet normalised (see ecdsa/finalize-signature). */
  signDigest(accountKeyRef: string, walletKeyRef: string, digest: Uint8Array): Promise<Uint8Array>;
  /** After this, the reference is refused forever with `key_destroyed`. */
  destroyWalletKey(accountKeyRef: string, walletKeyRef: string): Promise<void>;
  close(): Promise<void>;
}
