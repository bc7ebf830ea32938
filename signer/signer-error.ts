/**
 * The signer's one error type: a stable protocol error code plus a message that is safe to send to the
 * front (it names the rule or operation that failed, never key material, PINs or HSM internals).
 *
 * Protects against: ad-hoc error shapes — the server replies with `code`, `message` and, for a refusal,
 * `details` (the rule or limit as fields); anything thrown that is not a SignerFault becomes
 * `internal_error` with a generic message.
 * Known limits: messages are for humans and logs; callers branch on `code` and `details`, never on the message.
 */
import type { SignerErrorCode, SignerErrorDetails } from './protocol/signer-protocol.js';

export class SignerFault extends Error {
  override readonly name = 'SignerFault';
  constructor(
    readonly code: SignerErrorCode,
    message: string,
    /** What the refusal is about, as fields (the rule, the limit, its headroom): sent as `error.details`. */
    readonly details?: SignerErrorDetails,
  ) {
    super(message);
  }
}
