/**
 * A signer configuration refused at start: the shared configuration error (base/config-error.ts) with
 * `details.process` = `signer`. Each problem names the variable (never its value when it is secret).
 */
import { ConfigError } from '../../base/config-error.js';

export class SignerConfigError extends ConfigError {
  override name = 'SignerConfigError';

  constructor(problems: string | readonly string[], options: { cause?: unknown } = {}) {
    super('signer', problems, options);
  }
}
