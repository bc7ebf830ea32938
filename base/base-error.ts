/**
 * The one shape every process's base error has (viem's `BaseError` is the model): a stable snake_case
 * `code` callers branch on, a `shortMessage` for humans, `details` — the structured fields of the fault
 * (the rule, the limit, the field that was wrong) — and the standard `cause` chain, with `walk()` to find
 * a cause of a given kind. The API's `AppError` (src/api/errors/app-error.ts), the signer's `SignerFault`
 * (signer/signer-error.ts) and the signer client's `SignerError` extend it, so a signer refusal read in
 * the API is found with `err.walk((e) => e instanceof SignerError)` and its rule read from `details.rule`.
 *
 * Defends against: faults whose meaning lives only in prose, so that somebody parses a message with a
 * regex to recover a rule or a code. What a caller needs is a field here; the message is for people.
 * Does not defend: `details` is whatever the thrower puts in it; it is not redacted here. Throwers keep
 * secrets, tokens and key material out of it (each process's renderer decides what crosses its boundary).
 *
 * Lives in base/, the floor under every process: it imports nothing, so the signer (which may not import
 * src/) and the API (and the packages that ship) may all extend it.
 */

export type ErrorDetails = Readonly<Record<string, unknown>>;

export interface BaseErrorOptions<Details extends object = ErrorDetails> {
  /** The human message; the code's own wording when absent. */
  message?: string | undefined;
  details?: Details | undefined;
  cause?: unknown;
}

export class BaseError<Code extends string = string, Details extends object = ErrorDetails> extends Error {
  override name = 'BaseError';
  readonly code: Code;
  /** The message as the thrower wrote it (`message` is the same text: no details are folded into it). */
  readonly shortMessage: string;
  /** The fault as fields; `{}` when there are none. */
  readonly details: Details;

  constructor(code: Code, options: BaseErrorOptions<Details> = {}) {
    const message = options.message ?? code;
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.shortMessage = message;
    this.details = (options.details ?? {}) as Details;
  }

  /**
   * The first error along the `cause` chain, this one included, for which `match` holds; without `match`,
   * the deepest cause. Stops after 32 links (a cycle cannot loop forever). Like viem's `BaseError.walk`.
   */
  walk(): unknown;
  walk<T>(match: (err: unknown) => err is T): T | undefined;
  walk(match: (err: unknown) => boolean): unknown;
  walk(match?: (err: unknown) => boolean): unknown {
    let current: unknown = this;
    for (let depth = 0; depth < 32; depth++) {
      if (match?.(current)) return current;
      const next = current instanceof Error ? current.cause : undefined;
      if (next === undefined || next === null) return match ? undefined : current;
      current = next;
    }
    return match ? undefined : current;
  }
}
