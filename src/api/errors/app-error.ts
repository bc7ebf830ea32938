/**
 * The one error type the front throws for expected faults: the API's base error, in the shape of
 * base/base-error.ts (`code`, `details` as fields, `cause`, `walk()`), plus the HTTP status of its code,
 * the recovery block and response headers. The error middleware renders it as
 * `{ error_code, user_message, request_id, recovery?, ...details }`; a fault that wraps another keeps it as
 * `cause` (a signer refusal's `SignerError`, found with `err.walk((e) => e instanceof SignerError)`).
 */
import { BaseError } from '../../../base/base-error.js';
import { ERROR_CODES, type ErrorCode } from '../../shared/error-codes.js';

export type Recovery =
  | { kind: 'reauthenticate'; cli_command: string; login_command: string }
  | { kind: 'fund_wallet'; deposit_url: string; deposit_uri: string; shortfall_usd: string; chain: string }
  /** `cli_command` signs the owner in again (SIWE, keystore passphrase) before it changes the cap. */
  | {
      kind: 'raise_pat_cap';
      settings_url: string;
      cli_command: string;
      current_cap_usd: string;
      attempted_amount_usd: string;
    }
  | { kind: 'raise_max_amount'; required_amount_usd: string; current_max_amount_usd: string }
  | { kind: 'use_alternate_scheme'; offered_schemes: string[] }
  /** `chain` is the requested chain's name (`base`), `network` its CAIP-2 id; `cli_command` makes the wallet. */
  | { kind: 'create_wallet'; chain: string; network: string; dashboard_url: string; cli_command: string }
  | { kind: 'retry_later'; retry_after_seconds: number };

export const REAUTHENTICATE: Recovery = Object.freeze({
  kind: 'reauthenticate',
  cli_command: 'xx init',
  login_command: 'xx login --token <PAT>',
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
