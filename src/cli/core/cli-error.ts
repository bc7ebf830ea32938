/**
 * The CLI's one error type: a stable `code` (the server's `error_code` when it came from the API), the
 * `userMessage` shown unchanged, the exit code (1 generic, 2 bad arguments, 130 interrupted), and the
 * recovery block (docs/api.md#errors) when there is one. It has the base error shape (base/base-error.ts): `details`
 * is `{}` when none were given.
 */
import { BaseError } from '../../../base/base-error.js';

export type ExitCode = 1 | 2 | 130;

export interface CliErrorInit {
  code: string;
  userMessage: string;
  exitCode?: ExitCode;
  recovery?: Record<string, unknown> | undefined;
  status?: number | undefined;
  details?: Record<string, unknown> | undefined;
}

export class CliError extends BaseError<string, Record<string, unknown>> {
  override readonly name = 'CliError';
  readonly userMessage: string;
  readonly exitCode: ExitCode;
  readonly recovery: Record<string, unknown> | undefined;
  readonly status: number | undefined;
  /** Whether `details` were given (`--json` prints them then, even empty, as before). */
  readonly #hasDetails: boolean;

  constructor(init: CliErrorInit & { cause?: unknown }) {
    super(init.code, { message: init.userMessage, details: init.details, cause: init.cause });
    this.userMessage = init.userMessage;
    this.exitCode = init.exitCode ?? 1;
    this.recovery = init.recovery;
    this.status = init.status;
    this.#hasDetails = init.details !== undefined;
  }

  /** What `--json` prints on stderr. */
  toJSON(): Record<string, unknown> {
    return {
      error_code: this.code,
      user_message: this.userMessage,
      ...(this.recovery ? { recovery: this.recovery } : {}),
      ...(this.status !== undefined ? { status: this.status } : {}),
      ...(this.#hasDetails ? { details: this.details } : {}),
    };
  }
}

/**
 * The `reauthenticate` recovery block (docs/api.md#errors) for "sign in again" (the fields the server sends
 * with 401 `invalid_token`), for the errors the CLI raises itself: no session, no agent, a refused agent PAT.
 * `login_command` takes the PAT on stdin (piped, or at a prompt): a PAT in argv is readable by every local user.
 */
export const REAUTHENTICATE_RECOVERY: Readonly<Record<string, unknown>> = Object.freeze({
  kind: 'reauthenticate',
  cli_command: 'xx init',
  login_command: 'xx login --token -',
});

/** A missing flag without a TTY to prompt on: exit 2, naming the flag. */
export function missingFlag(flag: string, what: string): CliError {
  return new CliError({
    code: 'missing_argument',
    userMessage: `${flag} is required (${what}); no terminal to prompt on.`,
    exitCode: 2,
    details: { flag },
  });
}
