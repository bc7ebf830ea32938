/**
 * Before a wallet key is destroyed under a policy store: proof, made by the signer itself, that `wallet_key_ref` is
 * the key of the address the front names — the backend signs a probe the signer chose, and the signature must recover
 * to the address (secp256k1: ../ecdsa/finalize-signature.ts) or verify strictly under its key (Ed25519:
 * ../solana/ed25519-signature.ts). The address's family names the curve: a 0x address is proved with signDigest, a
 * base58 one with signEd25519, and each refuses a key of the other curve.
 *
 * Defends: a front that names another wallet's address (one without a signed policy, or a made-up one) for the key
 * of a wallet whose owner-signed policy forbids its destruction (`address_mismatch`, rule `key_of_address`), or a key
 * of the other curve than the address's (`invariant_violation`, rule `address_curve`); a probe an outsider chose. The
 * probe is a fixed label and 32 random bytes: it starts with 0xff, which begins no EIP-191 or EIP-712 preimage (0x19)
 * and no Solana transaction message (0xff would be a versioned message of version 127, which does not exist); the
 * secp256k1 key signs its keccak-256. Its signature is dropped here, never returned, and counts in no ceiling and no
 * policy spend (the backend is asked directly, not through the service's payment paths).
 * Does not defend: a backend that signs this probe with another key than the reference names (the signer trusts the
 * reference-to-key mapping, as it does for payments). A key that cannot sign now (`key_destroyed` without its
 * tombstone here: an AWS KMS key an operator disabled) cannot be proved, so it is not destroyed through this path.
 */
import { randomBytes } from 'node:crypto';
import { keccak256 } from '../keccak-256.js';
import { aaddress } from '../assert.js';
import type { KeyBackend, SignDigestOptions } from '../backends/key-backend.js';
import { finalizeSignature } from '../ecdsa/finalize-signature.js';
import { SignerFault } from '../signer-error.js';
import { assertEd25519Signature, signEd25519, solanaPublicKey } from '../solana/ed25519-signature.js';

const PROBE_LABEL = new TextEncoder().encode('treasury-signer destroy_wallet_key probe v1\n');

/** 0xff ‖ the label ‖ 32 random bytes: a message nobody outside this process chose. */
export function keyProbe(): Uint8Array {
  const probe = new Uint8Array(1 + PROBE_LABEL.length + 32);
  probe[0] = 0xff;
  probe.set(PROBE_LABEL, 1);
  probe.set(randomBytes(32), 1 + PROBE_LABEL.length);
  return probe;
}

export interface ProbedKey {
  account_key_ref: string;
  wallet_key_ref: string;
  /** 0x (secp256k1) or base58 (Ed25519). */
  address: string;
}

/**
 * Resolves `proved` once the key signed a fresh probe as `address`'s key; `destroyed` when the backend refused it as
 * destroyed and holds its tombstone (an earlier destroy finished). Throws the refusals the header names, and any
 * other fault of the backend as it came.
 */
export async function proveWalletKey(
  backend: KeyBackend,
  key: ProbedKey,
  context: SignDigestOptions = {},
): Promise<'proved' | 'destroyed'> {
  const { account_key_ref, wallet_key_ref, address } = key;
  const evm = address.startsWith('0x');
  if (evm) aaddress(address, 'address');
  const publicKey = evm ? undefined : solanaPublicKey(address, 'address');
  const probe = keyProbe();
  try {
    if (publicKey === undefined) {
      const digest = keccak256(probe);
      finalizeSignature(digest, await backend.signDigest(account_key_ref, wallet_key_ref, digest, context), address);
    } else {
      const signature = await signEd25519(backend, account_key_ref, wallet_key_ref, probe);
      assertEd25519Signature(signature, probe, publicKey);
    }
    return 'proved';
  } catch (err) {
    if (!(err instanceof SignerFault)) throw err;
    if (err.code === 'key_destroyed' && backend.isDestroyed(wallet_key_ref)) return 'destroyed';
    if (err.code === 'address_mismatch')
      throw new SignerFault(
        'address_mismatch',
        'wallet_key_ref is not the key of the address named: nothing was destroyed',
        { rule: 'key_of_address' },
        { cause: err },
      );
    // The only invariant a backend's signing checks on a live key: its curve (each method refuses the other one).
    if (err.code === 'invariant_violation')
      throw new SignerFault(
        'invariant_violation',
        `wallet_key_ref names a key of another curve than the ${evm ? '0x' : 'base58'} address named`,
        { rule: 'address_curve' },
        { cause: err },
      );
    throw err;
  }
}
