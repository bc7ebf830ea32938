/**
 * The bounds of a message a backend's signEd25519 accepts, checked in one place for both backends.
 *
 * Protects against: an empty or oversized message reaching the HSM or KMS (KMS takes RAW messages of
 * 1..4,096 bytes; a Solana transaction message is at most 1,232 bytes).
 * Known limits: says nothing about what the message is; the caller decodes and checks it before signing.
 */
import { SignerFault } from '../signer-error.js';

export const ED25519_MESSAGE_MIN_BYTES = 1;
export const ED25519_MESSAGE_MAX_BYTES = 4096;

/** Refuses with `invalid_request` anything but a Uint8Array of 1..4,096 bytes. */
export function assertEd25519Message(message: unknown): asserts message is Uint8Array {
  if (
    !(message instanceof Uint8Array) ||
    message.length < ED25519_MESSAGE_MIN_BYTES ||
    message.length > ED25519_MESSAGE_MAX_BYTES
  )
    throw new SignerFault(
      'invalid_request',
      `message must be ${ED25519_MESSAGE_MIN_BYTES}..${ED25519_MESSAGE_MAX_BYTES} bytes`,
    );
}
