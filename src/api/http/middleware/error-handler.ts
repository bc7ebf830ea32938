/**
 * Renders every error as `{ error_code, user_message, request_id, recovery?, ...details }`. AppErrors keep
 * their code; PostgreSQL out of reach (../../db/is-database-unavailable.ts) is a 503 `database_unavailable`
 * and a statement cancelled by the session limits (../../db/is-database-busy.ts) a 503 `database_busy`, both
 * with Retry-After; anything else is a 500 `internal_error`. Details of both are logged, never sent, and
 * logged through `describeError` (../../log/describe-error.ts): a database error by SQLSTATE and constraint,
 * never its message, statement or bind values; any URL cut to scheme, host and port. Every answer is counted
 * by code (`treasury_errors_total`), and every 401 also as an authentication refusal
 * (`treasury_auth_failures_total`).
 */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { AppError } from '../../errors/app-error.js';
import { isDatabaseUnavailable } from '../../db/is-database-unavailable.js';
import { isDatabaseBusy } from '../../db/is-database-busy.js';
import type { TreasuryMetrics } from '../../metrics/treasury-metrics.js';
import { describeError } from '../../log/describe-error.js';

export function errorHandler(log: Logger, metrics: TreasuryMetrics): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new AppError('not_found');
      if (ctx.status === 405 && (ctx.body === undefined || typeof ctx.body === 'string'))
        throw new AppError('method_not_allowed');
    } catch (raw) {
      let err: AppError;
      if (raw instanceof AppError) {
        err = raw;
      } else if (raw && typeof raw === 'object' && (raw as { status?: number }).status === 413) {
        err = new AppError('payload_too_large');
      } else if (isDatabaseUnavailable(raw)) {
        err = new AppError('database_unavailable', { headers: { 'Retry-After': '1' }, cause: raw });
      } else if (isDatabaseBusy(raw)) {
        err = new AppError('database_busy', { headers: { 'Retry-After': '1' }, cause: raw });
      } else {
        err = new AppError('internal_error', { cause: raw });
      }
      const requestId = String(ctx.state.requestId ?? '');
      if (err.status >= 500) {
        log.error({ request_id: requestId, error_code: err.code, err: describeError(raw) }, 'request failed');
      }
      metrics.errors.inc({ error_code: err.code });
      // Every refusal at authentication is a 401, whichever authenticator or route refused it.
      if (err.status === 401) metrics.authFailures.inc({ error_code: err.code });
      for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
      ctx.status = err.status;
      ctx.body = {
        error_code: err.code,
        user_message: err.message,
        request_id: requestId,
        ...(err.recovery ? { recovery: err.recovery } : {}),
        ...err.details,
      };
    }
  };
}
