/**
 * The one error type the front throws for expected faults. The error middleware renders it as
 * `{ error_code, user_message, request_id, recovery?, ...fields }` (DESIGN §5).
 */
import { ERROR_CODES, type ErrorCode } from '../../shared/error-codes.js';

export type Recovery =
  | { kind: 'reauthenticate'; cli_command: string; login_command: string }
  | { kind: 'fund_wallet'; deposit_url: string; deposit_uri: string; shortfall_usd: string; chain: string }
  /** `cli_command` signs the owner in again (SIWE, keystore passphrase) before it changes the cap. */
  | { kind: 'raise_pat_cap'; settings_url: string; cli_command: string; current_cap_usd: string; attempted_amount_usd: string }
  | { kind: 'raise_max_amount'; required_amount_usd: string; current_max_amount_usd: string }
  | { kind: 'use_alternate_scheme'; offered_schemes: string[] }
  | { kind: 'create_wallet'; chain: string; dashboard_url: string }
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

export class AppError extends Error {
  override readonly name = 'AppError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly recovery: Recovery | undefined;
  readonly fields: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    super(options.message ?? ERROR_CODES[code].message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.recovery = options.recovery;
    this.fields = options.fields ?? {};
    this.headers = options.headers ?? {};
  }
}
