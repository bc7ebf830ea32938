/**
 * What the API's operational routes answer: liveness (GET /livez, /health), readiness (GET /readyz: 200
 * ready, 503 with the same body when the database or the signer is out of reach or the process is shutting
 * down) and the shape of its own OpenAPI document (GET /v1/openapi.json). Defined once here: the routes are
 * typed with the derived types and the OpenAPI document is derived from the schemas.
 *
 * Defends: probes and clients reading a field that is not there. Does not defend: a probe that trusts 200 alone.
 */
import { z } from 'zod';

/** GET /livez and GET /health: the process answers. */
export const livenessSchema = z.object({ status: z.literal('ok') });
export type Liveness = z.infer<typeof livenessSchema>;

/** GET /readyz (200 or 503): whether PostgreSQL and the signer answer and the process is not shutting down. */
export const readinessSchema = z.object({
  status: z.enum(['ready', 'not_ready']),
  database: z.boolean(),
  signer: z.boolean(),
  shutting_down: z.boolean(),
  /** Only on 503: `not_ready` and its message, like every error envelope. */
  error_code: z.literal('not_ready').optional(),
  user_message: z.string().optional(),
});
export type Readiness = z.infer<typeof readinessSchema>;

/** GET /v1/openapi.json: an OpenAPI 3.1 document (its own schema is the OpenAPI specification's). */
export const openApiDocumentSchema = z
  .object({
    openapi: z.string().startsWith('3.1'),
    info: z.object({ title: z.string(), version: z.string() }).loose(),
    paths: z.record(z.string(), z.record(z.string(), z.unknown())),
  })
  .loose();
