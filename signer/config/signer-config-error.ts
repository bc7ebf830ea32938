/** A signer configuration refused at start; the message names the variable (never its value when it is secret). */
export class SignerConfigError extends Error {
  override readonly name = 'SignerConfigError';
}
