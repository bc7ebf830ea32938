/**
 * Turns a seller's OpenAPI document (JSON, 3.x) into endpoint definitions: one per path × method, slug from
 * operationId (else method + path), price from the `x-price-usd` extension — without one (or with an invalid
 * one, or one above the bound every USD amount a route takes is held to, MAX_AMOUNT_USD: `usdAmountOrZero` of
 * ../../http/schemas/common-schemas.ts) the operation is unpriced (`price: null`), which is not free: the gate
 * does not serve it until the seller prices it; `"0"` is free, by choice — capabilities from `x-capabilities`,
 * `{param}` paths kept as path patterns, and what the operation declares for buyers (description, input and
 * output JSON Schemas: ./openapi-discovery.ts). A path whose parameters break the pattern grammar
 * (src/shared/path-pattern.ts: one parameter per segment, bounded length, segments and parameters) is skipped
 * like any other unusable path: it could never be matched.
 *
 * Defends: one document costing the API's event loop more than a bounded amount of work — operations past the
 * first MAX_INGESTED_OPERATIONS are never looked at (they would be dropped anyway), and the schemas of all the
 * kept ones share one node budget (./openapi-discovery.ts: past it, operations are ingested without schemas, so
 * the seller stays sellable). Does not defend: which operations a document past the bound loses (the later
 * ones, in document order).
 */
import { z } from 'zod';
import { AppError } from '../../errors/app-error.js';
import { usdAmountOrZero } from '../../http/schemas/common-schemas.js';
import { parsePathPattern } from '../../../shared/path-pattern.js';
import { discoveryOfOperation, documentBudget, type EndpointDiscovery } from './openapi-discovery.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** Operations one document yields at most (the default endpoint bound, ../seller-endpoint-bound.ts). */
export const MAX_INGESTED_OPERATIONS = 1000;

export interface IngestedEndpoint {
  slug: string;
  method: string;
  path: string;
  path_pattern: string | null;
  /** USD, or null when the document names no (valid) price: unpriced, not served by the gate. */
  price: string | null;
  capabilities: string[];
  /** What the operation declares for buyers (the public catalogue), or null: ./openapi-discovery.ts. */
  discovery: EndpointDiscovery | null;
}

const operationSchema = z
  .object({
    operationId: z.string().optional(),
    'x-price-usd': z.string().optional(),
    'x-capabilities': z.array(z.string()).optional(),
  })
  .loose();

const documentSchema = z.object({ paths: z.record(z.string(), z.record(z.string(), z.unknown())) }).loose();

function slugify(value: string): string {
  return (
    value
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 63) || 'endpoint'
  );
}

export function parseOpenApi(text: string): IngestedEndpoint[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AppError('openapi_invalid');
  }
  const doc = documentSchema.safeParse(json);
  if (!doc.success) throw new AppError('openapi_invalid');
  const out: IngestedEndpoint[] = [];
  const budget = documentBudget();
  for (const [path, item] of Object.entries(doc.data.paths)) {
    if (out.length >= MAX_INGESTED_OPERATIONS) break;
    if (!/^\/[A-Za-z0-9\-._~%!$&'()*+,;=:@/{}]*$/.test(path) || path.length > 512) continue;
    const patterned = path.includes('{') || path.includes('}');
    if (patterned && !parsePathPattern(path).ok) continue;
    for (const method of METHODS) {
      if (out.length >= MAX_INGESTED_OPERATIONS) break;
      const parsed = operationSchema.safeParse(item[method]);
      if (item[method] === undefined || !parsed.success) continue;
      const op = parsed.data;
      const priced = usdAmountOrZero.safeParse(op['x-price-usd']);
      const price = priced.success ? priced.data : null;
      out.push({
        slug: slugify(op.operationId ?? `${method} ${path}`),
        method: method.toUpperCase(),
        path,
        path_pattern: patterned ? path : null,
        price,
        capabilities: (op['x-capabilities'] ?? [])
          .filter((c) => /^[a-z0-9][a-z0-9._:\-/]{0,127}$/.test(c))
          .slice(0, 64),
        discovery: discoveryOfOperation(doc.data, method, op, budget),
      });
    }
  }
  return out;
}
