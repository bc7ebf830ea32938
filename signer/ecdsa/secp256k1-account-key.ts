/**
 * An EVM signature (EIP-3009, Permit2, EIP-2612, a policy receipt) by the account's wallet key, with the key tied to
 * its account before any refusal about it is answered, and one answer for every key that is not the account's.
 *
 * A backend refuses a reference of the other curve (Ed25519) before it asks whether the key is the account's
 * (../backends/key-backend.ts), so on its own the answer to another account's Ed25519 reference would be
 * `invariant_violation`, naming the key's curve to whoever holds the reference. On that refusal the reference is
 * asked of the account as what it says it is: the backend signs a probe of the signer's own with it under the account
 * key (../key-destruction/prove-wallet-key.ts `keyProbe`: never returned, counted in no ceiling and no spend). Not the
 * account's: `key_not_found`. The account's: `invariant_violation`, rule `key_curve` (as a Solana payment names a
 * secp256k1 key: ../solana/ed25519-account-key.ts). A destroyed key is `key_destroyed` to its own account only: the
 * backends answer another account's destroyed key `key_not_found` (their tombstones name the key's account).
 *
 * Every `key_not_found` a signing method answers is `WALLET_KEY_NOT_FOUND`, one code, message and no details
 * (`asWalletKeyOfAccount`), whatever the backend said: a reference never made, malformed, of another account, of
 * either curve, destroyed or not, all answer the same body.
 *
 * Defends: a caller of the socket that holds another account's wallet key reference learning the key's curve or
 * whether it was destroyed through a signing method.
 * Does not defend: a tombstone written before it named its account (it answers `key_destroyed` to every account:
 * ../backends/pkcs11/tombstone-store.ts, ../backends/aws-kms/kms-tombstones.ts). A reference of the other curve
 * costs one HSM or KMS signature of the probe each time.
 */
import type { KeyBackend, SignDigestOptions } from '../backends/key-backend.js';
import { keyProbe } from '../key-destruction/prove-wallet-key.js';
import { SignerFault } from '../signer-error.js';
import { signEd25519 } from '../solana/ed25519-signature.js';

/** What every signing method answers for a wallet key reference that is not a live or destroyed key of the account. */
export const WALLET_KEY_NOT_FOUND_MESSAGE = 'wallet_key_ref names no wallet key of this account';

/** The one `key_not_found` of the signing methods (`cause` kept for the process's own logs, never sent). */
export function walletKeyNotFound(cause: unknown): SignerFault {
  return new SignerFault('key_not_found', WALLET_KEY_NOT_FOUND_MESSAGE, undefined, { cause });
}

/** `err`, or the one `key_not_found` when it is any `key_not_found`. */
export function asWalletKeyOfAccount(err: unknown): unknown {
  return err instanceof SignerFault && err.code === 'key_not_found' ? walletKeyNotFound(err) : err;
}

/**
 * The backend's raw ECDSA signature of `digest` by the wallet key (asked at once, synchronously up to its first await:
 * the caller has just taken the wallet's ceilings). A refusal of the key's curve is answered only once the key is
 * known to be the account's; every `key_not_found` as `walletKeyNotFound`; every other refusal as the backend gave it.
 */
export async function signDigestOfAccount(
  backend: KeyBackend,
  accountKeyRef: string,
  walletKeyRef: string,
  digest: Uint8Array,
  options: SignDigestOptions = {},
): Promise<Uint8Array> {
  try {
    return await backend.signDigest(accountKeyRef, walletKeyRef, digest, options);
  } catch (err) {
    // The only invariant a backend's ECDSA signing checks on a key: its curve.
    if (!(err instanceof SignerFault) || err.code !== 'invariant_violation') throw asWalletKeyOfAccount(err);
    await assertEd25519KeyOfAccount(backend, accountKeyRef, walletKeyRef);
    throw new SignerFault(
      'invariant_violation',
      "key_curve: wallet_key_ref names a key of the account that is not a secp256k1 key (an EVM wallet's key is)",
      { rule: 'key_curve' },
      { cause: err },
    );
  }
}

/**
 * Resolves when the backend signs a fresh probe with the Ed25519 key `walletKeyRef` names under `accountKeyRef` (the
 * key is the account's); throws `walletKeyNotFound` when it is not (a refusal of its curve included, or a token that
 * holds no Ed25519 key at all), and any other refusal as the backend gave it.
 */
async function assertEd25519KeyOfAccount(
  backend: KeyBackend,
  accountKeyRef: string,
  walletKeyRef: string,
): Promise<void> {
  try {
    await signEd25519(backend, accountKeyRef, walletKeyRef, keyProbe());
  } catch (err) {
    if (err instanceof SignerFault && ['key_not_found', 'invariant_violation', 'hsm_unsupported'].includes(err.code))
      throw walletKeyNotFound(err);
    throw err;
  }
}
