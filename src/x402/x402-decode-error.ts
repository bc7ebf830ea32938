/**
 * The typed error every x402 decoder throws: a stable snake_case `reason` (what was wrong with the input)
 * and a short human message. Never carries the offending bytes, so it is safe to log and to echo.
 */
import { BaseError } from '../../base/base-error.js';

export type X402DecodeReason =
  | 'header_missing'
  | 'header_too_large'
  | 'invalid_base64'
  | 'invalid_utf8'
  | 'invalid_json'
  | 'unsafe_json'
  | 'invalid_shape';

/** In the base error shape (base/base-error.ts): `code` is the `reason`. */
export class X402DecodeError extends BaseError<X402DecodeReason> {
  override readonly name = 'X402DecodeError';
  readonly reason: X402DecodeReason;

  constructor(reason: X402DecodeReason, message: string, options?: { cause?: unknown }) {
    super(reason, { message, cause: options?.cause });
    this.reason = reason;
  }
}
