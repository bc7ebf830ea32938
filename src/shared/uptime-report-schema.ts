/**
 * The uptime report a gate sends to `POST /v1/gate/uptime`, and the API's reply: defined once here, so the gate
 * checks its own reports with the schema the API validates them with (docs/gate.md#uptime).
 *
 * A report is up to MAX_UPTIME_BUCKETS buckets, each one endpoint's counts for one UTC hour: `answered`
 * (the origin answered, any status below 500) and `failed` (5xx, unreachable, timed out), each 0–1,000,000 and
 * at least one in all; `hour` an ISO instant on the hour, spelled as toISOString spells it (no hour 24, no
 * day past the month's end).
 *
 * Defends: unbounded or malformed numbers and instants reaching the store. Does not defend: counts that are
 * false — the gate is the seller's own process (docs/security-model.md#uptime-as-reported-by-the-sellers-gate).
 */
import { z } from 'zod';
import { endpointIdField } from './api-responses/response-fields.js';

export const MAX_UPTIME_BUCKETS = 500;
export const MAX_UPTIME_COUNT = 1_000_000;

const count = z.number().int().min(0).max(MAX_UPTIME_COUNT);

export const uptimeBucketSchema = z
  .object({
    endpoint_id: endpointIdField,
    hour: z
      .string()
      .max(32)
      .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:00:00(?:\.000)?Z$/, 'expected an ISO instant on the hour (…T13:00:00Z)')
      // The instant it names, spelled back the same: no day past its month's end (02-30), no hour 24, which
      // Date.parse would carry into the next month or day.
      .refine((s) => {
        const t = Date.parse(s);
        return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 13) === s.slice(0, 13);
      }, 'expected a valid instant'),
    answered: count,
    failed: count,
  })
  .strict()
  .refine((b) => b.answered + b.failed > 0, 'a bucket counts at least one request');
export type UptimeBucket = z.infer<typeof uptimeBucketSchema>;

export const uptimeReportBodySchema = z
  .object({ buckets: z.array(uptimeBucketSchema).min(1).max(MAX_UPTIME_BUCKETS) })
  .strict();
export type UptimeReportBody = z.infer<typeof uptimeReportBodySchema>;

/**
 * The reply, as the ledger batches answer: one outcome per endpoint and hour of the report (buckets of the same
 * endpoint and hour added together), `refused` with its error code — `endpoint_not_found` (not a managed-proxy
 * endpoint of the gate's account) or `uptime_hour_out_of_window`.
 */
export const uptimeReportReplySchema = z.object({
  results: z
    .array(
      z.object({
        endpoint_id: z.string().max(64),
        hour: z.string().max(32),
        outcome: z.enum(['stored', 'refused']),
        error_code: z.enum(['endpoint_not_found', 'uptime_hour_out_of_window']).optional(),
      }),
    )
    .max(MAX_UPTIME_BUCKETS),
});
export type UptimeReportReply = z.infer<typeof uptimeReportReplySchema>;
