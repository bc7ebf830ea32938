/**
 * The typed error every x402 decoder throws: a stable snake_case `reason` (what was wrong with the input)
 * and a short human message. Never carries the offending bytes, so it is safe to log and to echo.
 */
export type X402DecodeReason =
  | 'header_missing'
  | 'header_too_large'
  | 'invalid_base64'
  | 'invalid_utf8'
  | 'invalid_json'
  | 'unsafe_json'
  | 'invalid_shape';

export class X402DecodeError extends Error {
  override readonly name = 'X402DecodeError';
  readonly reason: X402DecodeReason;

  constructor(reason: X402DecodeReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}
