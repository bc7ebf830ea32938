/**
 * The signer's one error type: a stable protocol error code plus a message that is safe to send to the
 * front (it names the rule or operation that failed, never key material, PINs or HSM internals).
 *
 * Protects against: ad-hoc error shapes — the server replies with `code` and `message` only; anything
 * thrown that is not a SignerFault becomes `internal_error` with a generic message.
 * Known limits: messages are for humans and logs; callers branch on `code` only.
 */
import type { SignerErrorCode } from './protocol/signer-protocol.js';

export class SignerFault extends Error {
  override readonly name = 'SignerFault';
  constructor(
    readonly code: SignerErrorCode,
    message: string,
  ) {
    super(message);
  }
}
