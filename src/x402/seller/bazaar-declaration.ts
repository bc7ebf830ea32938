/**
 * The Bazaar discovery declaration of one 402 challenge (docs/seller-middleware.md#bazaar-discovery): the
 * `extensions.bazaar` entry from the official `declareDiscoveryExtension` of `@x402/extensions`, filled as the
 * official `bazaarResourceServerExtension` fills it for an HTTP request — `info.input.method` and its schema
 * `enum`/`required`, and for a route with parameters the `routeTemplate` (`/weather/:city`) and
 * `info.input.pathParams` — plus the seller's `serviceName` and `tags` on the challenge's `resource`. Facilitators
 * that catalogue from paid traffic read it back with `extractDiscoveryInfo(payload, requirements)`: the buyer's
 * client echoes the challenge's resource and extensions into its payment.
 *
 * The route is the first of `discovery.routes` whose pattern fits the request path (segment matching, no regular
 * expression); `prefix` (the gate's `/<slug>`) is put before its template, so the template names the buyer's URL.
 * A declaration is built and checked with the official `validateDiscoveryExtension` once per method and route,
 * then reused; one the validator refuses (say, an input schema whose required fields no example gives) is
 * replaced by the method-only declaration, and a method Bazaar does not describe gets none.
 *
 * Defends against: a 402 failing or growing without bound because of the seller's declarations (bounded and
 * validated at start-up, ./discovery-options.ts; never an exception here); a route template a catalogue would
 * refuse (checked with the official `isValidRouteTemplate`, else left out). Does not defend against: a
 * declaration that misdescribes the route (the seller's words), or a buyer's client that does not echo it.
 */
import {
  declareDiscoveryExtension,
  isValidRouteTemplate,
  validateDiscoveryExtension,
  type DiscoveryExtension,
} from '@x402/extensions/bazaar';
import { matchParsedPathPattern, type PatternSegment } from '../../shared/path-pattern.js';
import type { DiscoveryRoute, DiscoveryRouteOptions, ResolvedDiscovery } from './discovery-options.js';
import type { RouteTerms } from './payment-terms.js';

const QUERY_METHODS = new Set(['GET', 'HEAD', 'DELETE']);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** What the paywall knows of the request the challenge answers. */
export interface DiscoveryRequest {
  method: string;
  /** The path the seller's routes are named by (the origin's path behind the gate). */
  path: string;
  /** What the buyer's URL has before `path` (the gate's `/<slug>`); empty for the middleware. */
  prefix?: string | undefined;
}

/** The challenge's share: service metadata for `resource`, and the extensions record entry. */
export interface BazaarDeclaration {
  resource: { serviceName?: string; tags?: string[] };
  extensions: { bazaar?: DiscoveryExtension };
}

type Json = Record<string, unknown>;
const asJson = (v: unknown): Json => (typeof v === 'object' && v !== null ? (v as Json) : {});

/** The official declaration for `method` from what the route declares (no method yet: the helper adds none). */
function declared(method: string, d: DiscoveryRouteOptions): DiscoveryExtension {
  const output = d.output_example !== undefined ? { example: d.output_example, schema: d.output_schema } : undefined;
  const common = {
    ...(d.input_example ? { input: d.input_example } : {}),
    ...(d.input_schema ? { inputSchema: d.input_schema } : {}),
    ...(output ? { output } : {}),
  };
  const config = BODY_METHODS.has(method) ? { ...common, bodyType: d.body_type ?? 'json' } : common;
  return declareDiscoveryExtension(config).bazaar!;
}

/** What `bazaarResourceServerExtension.enrichDeclaration` adds for an HTTP request of `method`. */
function withMethod(extension: DiscoveryExtension, method: string, dynamic: boolean): DiscoveryExtension {
  const schema = asJson(extension.schema);
  const properties = asJson(schema.properties);
  const input = asJson(properties.input);
  const inputProperties = asJson(input.properties);
  const required = Array.isArray(input.required) ? (input.required as string[]) : [];
  const enrichedInput = {
    ...input,
    properties: {
      ...inputProperties,
      method: { type: 'string', enum: [method] },
      ...(dynamic && !('pathParams' in inputProperties) ? { pathParams: { type: 'object' } } : {}),
    },
    required: required.includes('method') ? required : [...required, 'method'],
  };
  return {
    ...extension,
    info: { ...extension.info, input: { ...extension.info.input, method } },
    schema: { ...schema, properties: { ...properties, input: enrichedInput } },
  } as DiscoveryExtension;
}

/** The checked declaration of `method` on `route` (the method-only one when the full one is refused). */
function buildChecked(method: string, d: DiscoveryRouteOptions, dynamic: boolean): DiscoveryExtension | undefined {
  const placeholder = (e: DiscoveryExtension) =>
    dynamic ? ({ ...e, info: { ...e.info, input: { ...e.info.input, pathParams: {} } } } as DiscoveryExtension) : e;
  const full = withMethod(declared(method, d), method, dynamic);
  if (validateDiscoveryExtension(placeholder(full)).valid) return full;
  const bare = withMethod(declared(method, { body_type: d.body_type }), method, dynamic);
  return validateDiscoveryExtension(placeholder(bare)).valid ? bare : undefined;
}

const cache = new WeakMap<ResolvedDiscovery, Map<string, DiscoveryExtension | undefined>>();

function checkedFor(discovery: ResolvedDiscovery, method: string, route: DiscoveryRoute | undefined, index: number) {
  let byKey = cache.get(discovery);
  if (!byKey) cache.set(discovery, (byKey = new Map()));
  const key = `${method} ${index}`;
  if (!byKey.has(key))
    byKey.set(key, buildChecked(method, { ...discovery.declared, ...route?.declared }, route?.template !== undefined));
  return byKey.get(key);
}

/** The values of the pattern's parameters in `path` (which fits it). */
function pathParamsOf(segments: readonly PatternSegment[], path: string): Record<string, string> {
  const parts = path.slice(1).split('/');
  const out: Record<string, string> = {};
  segments.forEach((s, i) => {
    if (s.kind !== 'parameter') return;
    const part = parts[i] ?? '';
    out[s.name] = part.slice(s.prefix.length, part.length - s.suffix.length);
  });
  return out;
}

/** The service metadata of `discovery` for the challenge's `resource`. */
function serviceMetadata(discovery: ResolvedDiscovery): BazaarDeclaration['resource'] {
  return {
    ...(discovery.serviceName ? { serviceName: discovery.serviceName } : {}),
    ...(discovery.tags ? { tags: [...discovery.tags] } : {}),
  };
}

/** The declaration for one request; never throws (a problem leaves the declaration out, not the 402). */
export function declareBazaar(discovery: ResolvedDiscovery, request: DiscoveryRequest): BazaarDeclaration {
  const resource = serviceMetadata(discovery);
  const method = request.method.toUpperCase();
  if (!QUERY_METHODS.has(method) && !BODY_METHODS.has(method)) return { resource, extensions: {} };
  try {
    const index = discovery.routes.findIndex((r) => matchParsedPathPattern(r.segments, request.path));
    const route = index === -1 ? undefined : discovery.routes[index];
    const checked = checkedFor(discovery, method, route, index);
    if (!checked) return { resource, extensions: {} };
    if (!route?.template) return { resource, extensions: { bazaar: checked } };
    const template = `${request.prefix ?? ''}${route.template}`;
    const pathParams = pathParamsOf(route.segments, request.path);
    const bazaar = {
      ...checked,
      ...(isValidRouteTemplate(template) ? { routeTemplate: template } : {}),
      info: { ...checked.info, input: { ...checked.info.input, pathParams } },
    } as DiscoveryExtension;
    return { resource, extensions: { bazaar } };
  } catch {
    return { resource, extensions: {} };
  }
}

/** `terms` with the declaration of `request` (unchanged when the seller turned discovery off). */
export function withBazaar(
  terms: RouteTerms,
  discovery: ResolvedDiscovery | undefined,
  request: DiscoveryRequest,
): RouteTerms {
  if (!discovery) return terms;
  const { resource, extensions } = declareBazaar(discovery, request);
  return {
    ...terms,
    resource: { ...terms.resource, ...resource },
    extensions: { ...terms.extensions, ...extensions },
  };
}
