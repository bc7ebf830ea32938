/**
 * Why the signer's limits state file (./limits-state-file.ts) cannot be used, as a stable code and the file's path:
 * callers branch on the code; the message names the setting and the file for the operator, and nothing else.
 */
import { BaseError } from '../../base/base-error.js';

/**
 * `unreadable` or `not_a_state_file` at start (`line`: the first line that is not one), `unwritable` at start or
 * on a save, `invalid_snapshot` when a wallet key held in memory would not read back (it is not written).
 */
export type LimitsStateFileErrorCode = 'unreadable' | 'not_a_state_file' | 'unwritable' | 'invalid_snapshot';

export class LimitsStateFileError extends BaseError<LimitsStateFileErrorCode, { file: string; line?: number }> {
  override readonly name = 'LimitsStateFileError';
  constructor(
    code: LimitsStateFileErrorCode,
    file: string,
    message: string,
    options: { cause?: unknown; line?: number } = {},
  ) {
    super(code, {
      message,
      details: options.line === undefined ? { file } : { file, line: options.line },
      cause: options.cause,
    });
  }
}

/** `err` (a failed write to `file`) as `unwritable`, naming the setting, the file and the system's code only. */
export function unwritable(file: string, err: unknown): LimitsStateFileError {
  if (err instanceof LimitsStateFileError) return err;
  return new LimitsStateFileError(
    'unwritable',
    file,
    `cannot write TREASURY_SIGNER_LIMITS_STATE_FILE ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    { cause: err },
  );
}
