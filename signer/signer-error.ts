/**
 * The signer's one error type: a stable protocol error code plus a message that is safe to send to the
 * front (it names the rule or operation that failed, never key material, PINs or HSM internals).
 *
 * Protects against: ad-hoc error shapes — the server replies with `code`, `message` and, for a refusal,
 * `details` (the rule or limit as fields); anything thrown that is not a SignerFault becomes
 * `internal_error` with a generic message.
 * Known limits: messages are for humans and logs; callers branch on `code` and `details`, never on the message.
 * It has the shape of every process's base error (base/base-error.ts: `code`, `details`, `cause`, `walk()`).
 */
import { BaseError } from '../base/base-error.js';
import type { SignerErrorCode, SignerErrorDetails } from './protocol/signer-protocol.js';

export class SignerFault extends BaseError<SignerErrorCode, SignerErrorDetails> {
  override readonly name = 'SignerFault';
  /** `details`: what the refusal is about, as fields (the rule, the limit, its headroom): sent as `error.details` when not empty. */
  constructor(code: SignerErrorCode, message: string, details?: SignerErrorDetails, options: { cause?: unknown } = {}) {
    super(code, { message, details, cause: options.cause });
  }
}
