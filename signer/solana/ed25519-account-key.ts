/**
 * A Solana payment's Ed25519 signature by the account's wallet key, with the key tied to its account before any
 * refusal about the key's curve is answered. A backend refuses a reference of the other curve (secp256k1) before it
 * asks whether the key is the account's at all (../backends/key-backend.ts), so on its own the answer to another
 * account's reference, or to one the signer never made, would be `invariant_violation` — not the `key_not_found` an
 * Ed25519 reference of another account gets. On that refusal the reference is asked of the account as what it says
 * it is: the backend signs a probe of the signer's own with it under the account key (the probe of
 * ../key-destruction/prove-wallet-key.ts: 0xff, a fixed label and 32 random bytes, hashed; never returned, counted
 * in no ceiling and no spend). Not the account's: the backend's own refusal of it (`key_not_found` for a key of
 * another account or none; `key_destroyed`, as every signing method answers for a key destroyed). The account's:
 * `invariant_violation`, rule `key_curve`.
 *
 * Defends: a front that names a key of another account (or a made-up reference) in `sign_solana_transaction` told
 * anything but what a signing method answers for any key not the account's; a refusal without its stable rule.
 * A destroyed key is `key_destroyed` to its own account only: the backends answer another account's destroyed key
 * `key_not_found` (their tombstones name the key's account), and the service answers every `key_not_found` with one
 * body (../ecdsa/secp256k1-account-key.ts).
 * Does not defend: a tombstone written before it named its account (`key_destroyed` to every account). A reference
 * of the other curve costs one HSM or KMS signature of the probe each time (as a probe of `set_wallet_policy` or
 * `destroy_wallet_key` does).
 */
import { keccak256 } from '../keccak-256.js';
import type { KeyBackend } from '../backends/key-backend.js';
import { keyProbe } from '../key-destruction/prove-wallet-key.js';
import { SignerFault } from '../signer-error.js';
import { signEd25519 } from './ed25519-signature.js';

/**
 * The backend's Ed25519 signature of `message` by the wallet key (asked at once, synchronously up to its first await:
 * the caller has just taken the wallet's ceilings). A refusal of the key's curve is answered only once the key is
 * known to be the account's (see the header); every other refusal as the backend gave it.
 */
export async function signEd25519OfAccount(
  backend: KeyBackend,
  accountKeyRef: string,
  walletKeyRef: string,
  message: Uint8Array,
): Promise<Uint8Array> {
  try {
    return await signEd25519(backend, accountKeyRef, walletKeyRef, message);
  } catch (err) {
    // The only invariant a backend's Ed25519 signing checks: the key's curve.
    if (!(err instanceof SignerFault) || err.code !== 'invariant_violation') throw err;
    await assertKeyOfAccount(backend, accountKeyRef, walletKeyRef);
    throw new SignerFault(
      'invariant_violation',
      "key_curve: wallet_key_ref names a key of the account that is not an Ed25519 key (a Solana wallet's key is)",
      { rule: 'key_curve' },
      { cause: err },
    );
  }
}

/**
 * Resolves when the backend signs a fresh probe with the secp256k1 key `walletKeyRef` names under `accountKeyRef`
 * (the key is the account's); throws the backend's refusal otherwise, a refusal of the curve as `key_not_found`.
 */
async function assertKeyOfAccount(backend: KeyBackend, accountKeyRef: string, walletKeyRef: string): Promise<void> {
  try {
    await backend.signDigest(accountKeyRef, walletKeyRef, keccak256(keyProbe()));
  } catch (err) {
    if (err instanceof SignerFault && err.code === 'invariant_violation')
      throw new SignerFault('key_not_found', 'wallet_key_ref names no wallet key of this account', undefined, {
        cause: err,
      });
    throw err;
  }
}
