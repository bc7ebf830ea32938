/**
 * `GET /v1/openapi.json`: the OpenAPI 3.1 document built from the route catalogue (./api-catalog.ts), with
 * each request body and query as the JSON Schema of the zod schema the route validates with.
 */
import { z } from 'zod';
import { API_CATALOG } from './api-catalog.js';

function jsonSchema(schema: z.ZodType): unknown {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
}

export function buildOpenApiDocument(serverUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const entry of API_CATALOG) {
    const parameters = [...entry.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (entry.query) {
      const props = (jsonSchema(entry.query) as { properties?: Record<string, unknown> }).properties ?? {};
      for (const [name, schema] of Object.entries(props))
        parameters.push({ name, in: 'query', required: false, schema: schema as { type: string } });
    }
    (paths[entry.path] ??= {})[entry.method.toLowerCase()] = {
      summary: entry.summary,
      'x-auth': entry.auth,
      ...(entry.auth === 'none' ? { security: [] } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(entry.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(entry.body) } } } }
        : {}),
      responses: { default: { description: 'JSON; errors are {error_code, user_message, request_id, recovery?, …}' } },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Treasury',
      version: '1',
      description: 'HSM-backed custodial wallets for x402 agents, and the platform around them.',
    },
    servers: [{ url: serverUrl }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths,
  };
}
