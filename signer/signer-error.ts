/** The signer's one error type: a stable protocol error code plus a message safe to send to the front. */
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
