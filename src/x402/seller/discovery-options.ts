/**
 * The seller's `discovery` option (docs/seller-middleware.md#bazaar-discovery): what its 402 challenges declare
 * for x402 Bazaar catalogues — the service name and tags on the challenge's `resource`, and per route the
 * request body type and the JSON Schemas (and examples) of its input and output, under `extensions.bazaar`
 * (./bazaar-declaration.ts builds it per request). Validated once with zod, like every other option; routes are
 * named with the endpoints' path-pattern grammar (`/weather/{city}`, src/shared/path-pattern.ts) and matched by
 * segments, never through a regular expression.
 *
 * Defends against: a challenge grown without bound by the seller's declarations (each schema or example at most
 * 16 KiB of JSON, at most 64 routes, bounded strings); a 402 that fails because of what the seller wrote — a
 * service name that is too long or not printable ASCII is cut to 32 characters or left out, tags are kept as the
 * official sanitizer keeps them (≤ 5, ≤ 32 printable ASCII characters, no duplicates), never refused at request
 * time. Does not defend against: declarations that do not describe the route truthfully (they are the seller's
 * words; catalogues show them as data).
 */
import { isValidServiceName, sanitizeTags } from '@x402/extensions/bazaar';
import { z } from 'zod';
import { parsePathPattern, type PatternSegment } from '../../shared/path-pattern.js';

/** The largest JSON text of one declared schema or example. */
export const MAX_DECLARED_JSON_BYTES = 16 * 1024;
export const MAX_DISCOVERY_ROUTES = 64;
const MAX_SERVICE_NAME = 32;

/** A JSON value the challenge can carry: serialisable, at most 16 KiB of JSON text. */
function boundedJson(value: unknown): boolean {
  try {
    const text = JSON.stringify(value);
    return typeof text === 'string' && Buffer.byteLength(text, 'utf8') <= MAX_DECLARED_JSON_BYTES;
  } catch {
    return false;
  }
}

const jsonObject = z
  .record(z.string().max(256), z.unknown())
  .refine(boundedJson, `must be JSON of at most ${MAX_DECLARED_JSON_BYTES} bytes`);
const jsonValue = z.unknown().refine(boundedJson, `must be JSON of at most ${MAX_DECLARED_JSON_BYTES} bytes`);

/** What one route declares; every field falls back to the option's own. */
export const discoveryRouteOptionsSchema = z
  .object({
    /** How a POST, PUT or PATCH body is sent; default `json`. */
    body_type: z.enum(['json', 'form-data', 'text']).optional(),
    /** JSON Schema of the query parameters (GET, HEAD, DELETE) or of the body (POST, PUT, PATCH). */
    input_schema: jsonObject.optional(),
    /** An example input (query parameters or body). */
    input_example: jsonObject.optional(),
    /** JSON Schema of the answer. */
    output_schema: jsonObject.optional(),
    /** An example answer (an output schema is declared only with an example, as the official helper does). */
    output_example: jsonValue.optional(),
  })
  .strict();

export const discoveryOptionsSchema = discoveryRouteOptionsSchema
  .extend({
    /** false: no Bazaar declaration at all. Default true. */
    enabled: z.boolean().optional(),
    /** The challenge's `resource.serviceName`: cut to 32 characters; left out unless printable ASCII. */
    service_name: z.string().max(256).optional(),
    /** The challenge's `resource.tags`: at most 5 kept (≤ 32 printable ASCII characters each). */
    tags: z.array(z.string().max(256)).max(64).optional(),
    /** Per route pattern (`/weather/{city}`): its declarations and its route template (`/weather/:city`). */
    routes: z
      .record(z.string().max(512), discoveryRouteOptionsSchema)
      .refine((r) => Object.keys(r).length <= MAX_DISCOVERY_ROUTES, `at most ${MAX_DISCOVERY_ROUTES} routes`)
      .optional(),
  })
  .strict();

export type DiscoveryOptions = z.input<typeof discoveryOptionsSchema>;
export type DiscoveryRouteOptions = z.infer<typeof discoveryRouteOptionsSchema>;

/** One declared route: its parsed pattern, its Bazaar route template and what it declares. */
export interface DiscoveryRoute {
  segments: readonly PatternSegment[];
  /** The pattern as a Bazaar route template (`{city}` written `:city`), or undefined when it has no parameter. */
  template: string | undefined;
  declared: DiscoveryRouteOptions;
}

export interface ResolvedDiscovery {
  serviceName: string | undefined;
  tags: readonly string[] | undefined;
  /** What every route declares unless its own entry says otherwise. */
  declared: DiscoveryRouteOptions;
  routes: readonly DiscoveryRoute[];
}

/** The service name as the official sanitizer accepts it: cut to 32 characters, else left out. */
export function serviceNameOf(raw: string | undefined): string | undefined {
  const cut = raw?.trim().slice(0, MAX_SERVICE_NAME).trim();
  return isValidServiceName(cut) ? cut : undefined;
}

/** A path pattern as a Bazaar route template: `/weather/{city}.json` → `/weather/:city.json`; none without a parameter. */
export function routeTemplateOf(segments: readonly PatternSegment[]): string | undefined {
  if (!segments.some((s) => s.kind === 'parameter')) return undefined;
  const parts = segments.map((s) => (s.kind === 'literal' ? s.text : `${s.prefix}:${s.name}${s.suffix}`));
  return `/${parts.join('/')}`;
}

const { enabled: _e, service_name: _s, tags: _t, routes: _r, ...noRoute } = discoveryOptionsSchema.shape;
const routeKeys = Object.keys(noRoute) as Array<keyof DiscoveryRouteOptions>;

function ownDeclarations(options: DiscoveryRouteOptions): DiscoveryRouteOptions {
  const out: Record<string, unknown> = {};
  for (const key of routeKeys) if (options[key] !== undefined) out[key] = options[key];
  return out as DiscoveryRouteOptions;
}

/**
 * Validates the option into its resolved form; undefined when disabled. Problems (a malformed schema, a route
 * outside the path-pattern grammar) go to `problems` — reported at start-up, never at request time.
 */
export function resolveDiscovery(raw: unknown, problems: string[]): ResolvedDiscovery | undefined {
  const parsed = discoveryOptionsSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    for (const issue of parsed.error.issues)
      problems.push(`discovery.${issue.path.join('.')}: ${issue.message}`.slice(0, 300));
    return undefined;
  }
  const options = parsed.data;
  if (options.enabled === false) return undefined;
  const routes: DiscoveryRoute[] = [];
  for (const [pattern, declared] of Object.entries(options.routes ?? {})) {
    const route = parsePathPattern(pattern);
    if (!route.ok) {
      problems.push(
        `discovery.routes: ${JSON.stringify(pattern.slice(0, 64))} is not a route pattern (${route.problem})`,
      );
      continue;
    }
    routes.push({ segments: route.segments, template: routeTemplateOf(route.segments), declared });
  }
  const tags = sanitizeTags(options.tags);
  return Object.freeze({
    serviceName: serviceNameOf(options.service_name),
    tags: tags ? Object.freeze(tags) : undefined,
    declared: ownDeclarations(options),
    routes: Object.freeze(routes),
  });
}
