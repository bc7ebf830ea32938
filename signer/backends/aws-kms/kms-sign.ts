/**
 * One KMS Sign with a wallet key, through its account's alias and with its curve's algorithm and message type
 * (./kms-curves.ts): the configured sign rate first (./kms-sign-rate.ts), then the call and its retries
 * (./kms-call.ts); KMS's answer must name the reference's key and carry a signature of that algorithm.
 *
 * Protects against: a key destroyed while its signature waited. The tombstone (./kms-tombstones.ts) is checked
 * on entry, before each attempt goes on the wire (after the wait for the sign rate, a request slot or a
 * backoff) and on KMS's answer (a signature KMS made while the key was being destroyed is discarded):
 * `key_destroyed` each time. So once destroy has answered, no Sign request for the key leaves and no signature
 * comes back, whether or not KMS has applied DisableKey yet (its API is eventually consistent). A destroyed key
 * of another account is `key_not_found` (./kms-tombstones.ts names each key's account), before its curve is looked
 * at: only its own account learns it was destroyed. Also: a key of the other curve (`invariant_violation`; `key_not_found` when KMS refuses a re-spelled reference), and an
 * alias re-pointed at another key (`hsm_error`).
 * Known limits: a Sign already on the wire when the key is destroyed may still be carried out by KMS; its
 * signature is dropped here, not unmade.
 */
import { SignCommand, type KMSClient } from '@aws-sdk/client-kms';
import { SignerFault } from '../../signer-error.js';
import type { WalletKeyCurve } from '../key-backend.js';
import { KmsCallFault, type KmsSend } from './kms-call.js';
import { KMS_CURVES } from './kms-curves.js';
import { arnNamesKey, decodeAccountRef, decodeWalletKey, walletAlias } from './kms-key-ref.js';
import type { KmsSignRate } from './kms-sign-rate.js';
import type { KmsTombstones } from './kms-tombstones.js';

export interface KmsSignDeps {
  client: KMSClient;
  send: KmsSend;
  rate: KmsSignRate;
  tombstones: KmsTombstones;
  aliasPrefix: string;
  deadlineMs: number;
}

export interface KmsSignRequest {
  accountKeyRef: string;
  walletKeyRef: string;
  curve: WalletKeyCurve;
  /** The 32-byte digest (secp256k1) or the message itself (Ed25519). */
  message: Uint8Array;
}

/** KMS's signature as it answered it: DER for ECDSA, the raw 64 bytes for Ed25519. */
export async function signWithKms(deps: KmsSignDeps, request: KmsSignRequest): Promise<Uint8Array> {
  const { curve, message } = request;
  const wallet = decodeWalletKey(request.walletKeyRef);
  const account = decodeAccountRef(request.accountKeyRef);
  const destroyed = (when: string) => {
    const state = deps.tombstones.stateFor(wallet.keyId, account);
    if (state === 'of_another_account')
      return new SignerFault('key_not_found', 'wallet_key_ref names no wallet key of this account');
    return state === 'destroyed' ? new SignerFault('key_destroyed', `wallet_key_ref names a ${when}`) : undefined;
  };
  const refused = destroyed('destroyed key');
  if (refused) throw refused;
  if (wallet.curve !== curve)
    throw new SignerFault('invariant_violation', `wallet_key_ref names a key of another curve than ${curve}`);
  const alias = walletAlias(deps.aliasPrefix, account, wallet.keyId);
  const { signingAlgorithm, messageType } = KMS_CURVES[curve];
  const deadline = Date.now() + deps.deadlineMs;
  await deps.rate.take(deadline);
  // Retrying Sign is safe: any signature KMS made is over this message, which the signer computed or checked itself.
  const out = await deps
    .send(
      'sign',
      true,
      (abortSignal) =>
        deps.client.send(
          new SignCommand({
            KeyId: alias,
            Message: message,
            MessageType: messageType,
            SigningAlgorithm: signingAlgorithm,
          }),
          { abortSignal },
        ),
      { deadline, refuse: () => destroyed('key destroyed while this signature waited') },
    )
    .catch((err: unknown) => {
      // The message is bounded here: KMS refusing the request means the key is not of this curve (a re-spelled reference).
      if (err instanceof KmsCallFault && err.kms.reason === 'invalid_request')
        throw new SignerFault('key_not_found', `wallet_key_ref is not a ${curve} key`);
      throw err;
    });
  const late = destroyed('key destroyed while KMS signed');
  if (late) throw late;
  if (!arnNamesKey(out.KeyId, wallet.keyId)) throw new SignerFault('hsm_error', 'KMS answered Sign for another key');
  if (out.SigningAlgorithm !== signingAlgorithm || !out.Signature)
    throw new SignerFault('hsm_error', `KMS answered Sign without an ${signingAlgorithm} signature`);
  return out.Signature;
}
