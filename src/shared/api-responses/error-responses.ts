/**
 * The one error envelope every API error is answered with (src/api/http/middleware/error-handler.ts):
 * `{ error_code, user_message, request_id, recovery?, ...details }` — a stable snake_case `error_code` from
 * src/shared/error-codes.ts, a human sentence, the request id to quote, an optional machine-readable recovery
 * step, and the error's structured fields (e.g. `violations`, `retry_after_seconds`, `fields`). Defined once
 * here: the OpenAPI document derives every error response from it.
 *
 * Defends: clients parsing prose (they branch on `error_code` and the fields). Does not defend: a field a
 * particular code adds being documented here (details are open: their keys vary per code).
 */
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../error-codes.js';

export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];
export const errorCodeSchema = z.enum(ERROR_CODE_NAMES);

/** What the caller can do next; `kind` says which of the shapes it is. */
export const recoverySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('reauthenticate'), cli_command: z.string(), login_command: z.string() }),
  z.object({
    kind: z.literal('fund_wallet'),
    deposit_url: z.string(),
    deposit_uri: z.string(),
    shortfall_usd: z.string(),
    chain: z.string(),
  }),
  z.object({
    kind: z.literal('raise_pat_cap'),
    settings_url: z.string(),
    cli_command: z.string(),
    current_cap_usd: z.string(),
    attempted_amount_usd: z.string(),
  }),
  z.object({
    kind: z.literal('raise_max_amount'),
    required_amount_usd: z.string(),
    current_max_amount_usd: z.string(),
  }),
  z.object({ kind: z.literal('use_alternate_scheme'), offered_schemes: z.array(z.string()) }),
  z.object({
    kind: z.literal('create_wallet'),
    chain: z.string(),
    network: z.string(),
    dashboard_url: z.string(),
    cli_command: z.string(),
  }),
  z.object({ kind: z.literal('retry_later'), retry_after_seconds: z.number() }),
]);
export type Recovery = z.infer<typeof recoverySchema>;

/** The error envelope; the error's own fields (details) ride beside the four named keys. */
export const errorBodySchema = z
  .object({
    error_code: errorCodeSchema,
    user_message: z.string(),
    request_id: z.string(),
    recovery: recoverySchema.optional(),
  })
  .catchall(z.unknown());
export type ErrorBody = z.infer<typeof errorBodySchema>;
