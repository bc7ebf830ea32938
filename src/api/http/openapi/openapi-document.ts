/**
 * `GET /v1/openapi.json`: the OpenAPI 3.1 document built from the route catalogue it is given (src/api/api-catalog.ts). Each
 * request body, query and JSON reply is the JSON Schema zod 4 derives from the schema the route validates
 * with or answers with (`io: 'input'` for what the API accepts, `'output'` for what it sends); every error
 * status is the one error envelope, its `error_code` narrowed to the codes of that status (./openapi-errors.ts);
 * bearer kinds per route come from ./openapi-security.ts. Nothing here restates a shape.
 *
 * Defends: the document drifting from the code (it is computed from the code). Does not defend: a schema
 * zod cannot express in JSON Schema (`unrepresentable: 'any'` leaves it open; refinements are not exported).
 */
import { z } from 'zod';
import { errorBodySchema } from '../../../shared/api-responses/error-responses.js';
import { ERROR_CODES } from '../../../shared/error-codes.js';
import type { CatalogEntry, Reply } from './catalog-entry.js';
import { errorCodesByStatus } from './openapi-errors.js';
import { SECURITY_SCHEMES, securityOf } from './openapi-security.js';

type Json = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  return rest;
}

/** An `Idempotency-Key` the route honours: the retry with the same key and body is the same operation. */
const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the same key with the same body answers the first outcome (never a second payment); with another body, 409 idempotency_key_conflict.',
  schema: { type: 'string', pattern: '^[A-Za-z0-9_.:\\-]{1,128}$' },
};

function parametersOf(entry: CatalogEntry): Json[] {
  const parameters: Json[] = [...entry.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  if (entry.query) {
    const props = (jsonSchema(entry.query, 'input').properties ?? {}) as Record<string, Json>;
    for (const [name, schema] of Object.entries(props)) parameters.push({ name, in: 'query', required: false, schema });
  }
  if (entry.idempotencyKey) parameters.push(IDEMPOTENCY_KEY_PARAMETER);
  return parameters;
}

function successReply(reply: Reply, description: string): Json {
  if (reply === null) return { description };
  if (reply instanceof z.ZodType)
    return { description, content: { 'application/json': { schema: jsonSchema(reply, 'output') } } };
  return {
    description: reply.description,
    content: Object.fromEntries(reply.mediaTypes.map((t) => [t, { schema: { type: 'string' } }])),
  };
}

function responsesOf(entry: CatalogEntry): Record<string, Json> {
  const responses: Record<string, Json> = {};
  for (const [status, reply] of Object.entries(entry.replies))
    responses[status] = successReply(reply, status === '503' ? 'Not ready' : entry.summary);
  for (const [status, codes] of errorCodesByStatus(entry)) {
    if (responses[status]) continue;
    responses[String(status)] = {
      description: codes.map((c) => `\`${c}\`: ${ERROR_CODES[c].message}`).join('\n\n'),
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/Error' },
              { type: 'object', properties: { error_code: { type: 'string', enum: codes } } },
            ],
          },
        },
      },
    };
  }
  return responses;
}

/** The reference page groups operations by the first segment after /v1 (`wallets`, `sellers`, …). */
function tagOf(path: string): string {
  const [, first, second] = path.split('/');
  return first === 'v1' && second && second !== 'openapi.json' ? second : 'operations';
}

function operationOf(entry: CatalogEntry): Json {
  const parameters = parametersOf(entry);
  return {
    operationId: entry.operationId,
    tags: [tagOf(entry.path)],
    summary: entry.summary,
    'x-auth': entry.auth,
    security: securityOf(entry.auth),
    ...(parameters.length ? { parameters } : {}),
    ...(entry.body
      ? {
          requestBody: {
            required: entry.bodyOptional !== true,
            content: { 'application/json': { schema: jsonSchema(entry.body, 'input') } },
          },
        }
      : {}),
    responses: responsesOf(entry),
  };
}

export function buildOpenApiDocument(serverUrl: string, catalog: readonly CatalogEntry[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const entry of catalog) (paths[entry.path] ??= {})[entry.method.toLowerCase()] = operationOf(entry);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Treasury',
      version: '1',
      description:
        'HSM-backed custodial wallets for x402 agents, and the platform around them. Every error is the `Error` envelope: branch on `error_code`.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: SECURITY_SCHEMES,
      schemas: { Error: jsonSchema(errorBodySchema, 'output') },
    },
    paths,
  };
}
