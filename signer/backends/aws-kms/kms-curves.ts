/**
 * What each wallet-key curve is in KMS terms: the key spec CreateKey asks for, the signing algorithm and
 * message type Sign is sent with, and how GetPublicKey's SPKI becomes the public key the signer returns.
 *   secp256k1  ECC_SECG_P256K1        ECDSA_SHA_256    DIGEST  (the signer's own 32-byte digest, not hashed again)
 *   ed25519    ECC_NIST_EDWARDS25519  ED25519_SHA_512  RAW     (PureEdDSA over the message: what Solana verifies)
 *
 * Protects against: a key of one curve answered for another (the backend checks KeySpec and SigningAlgorithm
 * against this table), and Ed25519ph (ED25519_PH_SHA_512 with DIGEST), a different signature that Solana
 * does not accept.
 * Known limits: KMS takes RAW messages up to 4,096 bytes (ED25519_MESSAGE_MAX_BYTES).
 */
import type { MessageType, SigningAlgorithmSpec, KeySpec } from '@aws-sdk/client-kms';
import type { WalletKeyCurve } from '../key-backend.js';
import { spkiToEd25519PublicKey, spkiToUncompressedPoint } from './kms-public-key.js';

export interface KmsCurve {
  keySpec: KeySpec;
  signingAlgorithm: SigningAlgorithmSpec;
  messageType: MessageType;
  publicKey(spki: Uint8Array): Uint8Array;
}

export const KMS_CURVES: Readonly<Record<WalletKeyCurve, KmsCurve>> = {
  secp256k1: {
    keySpec: 'ECC_SECG_P256K1',
    signingAlgorithm: 'ECDSA_SHA_256',
    messageType: 'DIGEST',
    publicKey: spkiToUncompressedPoint,
  },
  ed25519: {
    keySpec: 'ECC_NIST_EDWARDS25519',
    signingAlgorithm: 'ED25519_SHA_512',
    messageType: 'RAW',
    publicKey: spkiToEd25519PublicKey,
  },
};
