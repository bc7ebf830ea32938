/**
 * Structured JSON logs (pino). Authorization headers, tokens, PINs, key references and SQL bind values are
 * redacted by path, and nothing in src/ logs a request body. Errors are logged through `describeError`
 * (./describe-error.ts), which keeps out what a message can carry of a secret: bind values and SQL with
 * values (database errors are logged by SQLSTATE and constraint), and the path, query and credentials of
 * any URL (an RPC provider's key).
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import { describeError } from './describe-error.js';

export type { Logger };

/** `destination`: where the lines go (standard output by default; tests capture them). */
export function createLogger(level: string, name = 'treasury-api', destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    // `err` is logged as `describeError` renders it (call sites pass it already rendered, or a string); an
    // Error passed as is gets the same treatment instead of pino's serializer, which copies every field.
    serializers: { err: (value: unknown) => (value instanceof Error ? describeError(value) : value) },
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
        'bindings',
        '*.token',
        '*.api_key',
        '*.account_key_ref',
        '*.wallet_key_ref',
        '*.bindings',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
