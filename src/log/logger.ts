/**
 * Structured JSON logs (pino). Authorization headers, tokens, PINs and key references are redacted by
 * path, and nothing in src/ logs a request body.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, name = 'treasury-api'): Logger {
  return pino({
    name,
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        'authorization',
        'token',
        'api_key',
        'admin_token',
        'password',
        'pin',
        '*.token',
        '*.api_key',
        '*.account_key_ref',
        '*.wallet_key_ref',
      ],
      censor: '[redacted]',
    },
  });
}
