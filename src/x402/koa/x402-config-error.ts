/**
 * The seller middleware's configuration error (spec §7: "ValueError at construction" and "Configuration error
 * on first paid request"). One error lists every problem found, so a seller fixes them in one pass.
 */
export class X402ConfigError extends Error {
  override readonly name = 'X402ConfigError';
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`x402 middleware misconfigured: ${problems.join('; ')}`);
    this.problems = Object.freeze([...problems]);
  }
}
