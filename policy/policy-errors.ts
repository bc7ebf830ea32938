/**
 * The one error the policy engine throws: its inputs were not what the caller promised (a stored policy
 * that no longer parses, a request or spend state with the wrong types). It names the bad field.
 *
 * Protects against: a malformed input being read as "no rule" — the engine throws instead of allowing, so the
 * caller's transaction fails closed (HTTP 500, nothing signed). A denial is never an error: it is a value.
 * Known limits: the message is for operators (logs), not for API clients.
 */
export class PolicyInputError extends Error {
  override readonly name = 'PolicyInputError';
  constructor(
    /** Dotted path of the offending input, e.g. `policy.daily_cap_usd` or `state.recentCount`. */
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}
