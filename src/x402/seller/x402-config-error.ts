/**
 * The seller middleware's configuration error, thrown at construction and, for the endpoint rule, on the first
 * paid request (docs/seller-middleware.md#rules-and-runtime-answers). One error lists every problem found, so a
 * seller fixes them in one pass.
 */
import { BaseError } from '../../../base/base-error.js';

/** In the base error shape (base/base-error.ts): code `x402_config_invalid`, the problems also as `details.problems`. */
export class X402ConfigError extends BaseError<'x402_config_invalid', { problems: readonly string[] }> {
  override readonly name = 'X402ConfigError';
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    const frozen = Object.freeze([...problems]);
    super('x402_config_invalid', {
      message: `x402 middleware misconfigured: ${problems.join('; ')}`,
      details: { problems: frozen },
    });
    this.problems = frozen;
  }
}
