/**
 * The one error the policy engine throws: its inputs were not what the caller promised (a stored policy
 * that no longer parses, a request or spend state with the wrong types). It names the bad field, as a field:
 * the base error shape (base/base-error.ts), code `policy_input_invalid`, the dotted path in `details.field`
 * (and `field`, as before).
 *
 * Protects against: a malformed input being read as "no rule" — the engine throws instead of allowing, so the
 * caller's transaction fails closed (HTTP 500, nothing signed). A denial is never an error: it is a value.
 * Known limits: the message is for operators (logs), not for API clients.
 *
 * base/ is the one folder policy/ may import: it imports nothing itself, so the engine stays pure.
 */
import { BaseError } from '../base/base-error.js';

export class PolicyInputError extends BaseError<'policy_input_invalid', { field: string }> {
  override name = 'PolicyInputError';
  /** Dotted path of the offending input, e.g. `policy.daily_cap_usd` or `state.recentCount`. */
  readonly field: string;

  constructor(field: string, message: string) {
    super('policy_input_invalid', { message: `${field}: ${message}`, details: { field } });
    this.field = field;
  }
}
