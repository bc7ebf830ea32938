/**
 * The one error type the front throws for expected faults: the API's base error, in the shape of
 * base/base-error.ts (`code`, `details` as fields, `cause`, `walk()`), plus the HTTP status of its code,
 * the recovery block and response headers. The error middleware renders it as
 * `{ error_code, user_message, request_id, recovery?, ...details }`; a fault that wraps another keeps it as
 * `cause` (a signer refusal's `SignerError`, found with `err.walk((e) => e instanceof SignerError)`).
 */
import { BaseError } from '../../../base/base-error.js';
import { ERROR_CODES, type ErrorCode } from '../../shared/error-codes.js';
import type { Recovery as ErrorRecovery } from '../../shared/api-responses/error-responses.js';

/** What the caller can do next: the shapes of the error envelope's `recovery` (src/shared/api-responses/error-responses.ts). */
export type Recovery = ErrorRecovery;

export const REAUTHENTICATE: Recovery = Object.freeze({
  kind: 'reauthenticate',
  cli_command: 'xx init',
  login_command: 'xx login --token -',
});

export interface AppErrorOptions {
  message?: string;
  recovery?: Recovery;
  fields?: Record<string, unknown>;
  headers?: Record<string, string>;
  cause?: unknown;
}

export class AppError extends BaseError<ErrorCode, Record<string, unknown>> {
  override readonly name = 'AppError';
  readonly status: number;
  readonly recovery: Recovery | undefined;
  readonly headers: Record<string, string>;

  /** `options.fields` become `details`: the fields the response body carries beside `error_code`. */
  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    super(code, {
      message: options.message ?? ERROR_CODES[code].message,
      details: options.fields ?? {},
      cause: options.cause,
    });
    this.status = ERROR_CODES[code].status;
    this.recovery = options.recovery;
    this.headers = options.headers ?? {};
  }

  /** The same object as `details` (the name call sites and tests have used). */
  get fields(): Record<string, unknown> {
    return this.details;
  }
}
