/**
 * The one error every process throws when its configuration is refused at start (the API's
 * src/api/config/app-config.ts, the signer's signer/config/signer-config.ts, the gate's src/gate/gate-config.ts):
 * the base error shape (./base-error.ts) with code `config_invalid`, which process refused it in
 * `details.process`, and each problem — the variable named, then what is wrong — in `details.problems`. A start
 * script, a supervisor or a test reads the fields; nothing parses the message to find the variable.
 *
 * Defends against: three processes failing in three shapes (a bare `Error`, an `Error` subclass, a `BaseError`),
 * so that whoever starts them has to guess which one it got. Does not defend: a problem is the thrower's text;
 * each loader keeps secrets (a PIN, a token) out of it, as before.
 */
import { BaseError } from './base-error.js';

/** The processes that read a configuration. */
export type ConfiguredProcess = 'api' | 'signer' | 'gate';

export interface ConfigErrorDetails {
  process: ConfiguredProcess;
  /** One line per problem, each naming its variable first (`TREASURY_PORT: expected a number`). */
  problems: readonly string[];
}

/** How each process's refusals begin (the API's predates the others and kept its wording). */
const PREFIX: Readonly<Record<ConfiguredProcess, string>> = {
  api: 'invalid configuration',
  signer: 'invalid signer configuration',
  gate: 'invalid gate configuration',
};

export class ConfigError extends BaseError<'config_invalid', ConfigErrorDetails> {
  override name = 'ConfigError';

  constructor(process: ConfiguredProcess, problems: string | readonly string[], options: { cause?: unknown } = {}) {
    const list = Object.freeze(typeof problems === 'string' ? [problems] : [...problems]);
    super('config_invalid', {
      message: `${PREFIX[process]}: ${list.join('; ')}`,
      details: { process, problems: list },
      cause: options.cause,
    });
  }
}
