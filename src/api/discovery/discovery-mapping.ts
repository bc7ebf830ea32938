/**
 * One catalogue row (./discovery-store.ts) as the Bazaar resource the official client reads: the resource URL
 * (the verified origin, or the verified gate URL and `/<slug>`, and the endpoint's route, `{param}` written
 * `:param` as Bazaar route templates are), the
 * x402 `accepts` a buyer of it is asked for (exact, the catalogue's network, its USDC, the price in USDC's
 * 6 decimals, where the platform knows the seller is paid), the service name and tags as the official sanitizer
 * keeps them, the `bazaar` extension (how to call it, with the input and output JSON Schemas the seller's
 * OpenAPI document declared), and the platform's own `treasury` block (verified revenue and paid calls on the
 * catalogue's network, and the uptime the seller's gate reported when it reported any). Pure.
 *
 * Defends: a resource of a shape the official client does not expect (typed with src/shared/api-responses/
 * discovery-responses.ts); a payee written in any case but its checksum. Does not defend: what the seller
 * declared (its schemas and description are its own words, shown as data).
 */
import { sanitizeResourceServiceMetadata } from '@x402/extensions/bazaar';
import { getAddress } from 'viem';
import { formatUsd } from '../../../policy/money.js';
import type { ChainInfo } from '../../shared/chain-registry.js';
import type {
  DiscoveryAccept,
  DiscoveryResourceView,
  DiscoveryUptime,
} from '../../shared/api-responses/discovery-responses.js';
import type { DiscoveryRow } from './discovery-store.js';

/** How long a buyer's authorization may stay valid: the seller middleware's default (docs/seller-middleware.md). */
const MAX_TIMEOUT_SECONDS = 300;

/** Methods whose input is a query string (the rest take a JSON body), as the Bazaar extension tells them apart. */
const QUERY_METHODS = new Set(['GET', 'HEAD', 'DELETE']);

/** What the OpenAPI refresh kept of the operation (migrations/20261129121700_endpoint_discovery.ts). */
interface DeclaredDiscovery {
  description?: string;
  input_schema?: Record<string, unknown>;
  output_schema?: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function declaredOf(row: DiscoveryRow): DeclaredDiscovery {
  const d = row.discovery;
  if (!isObject(d)) return {};
  return {
    ...(typeof d.description === 'string' ? { description: d.description } : {}),
    ...(isObject(d.input_schema) ? { input_schema: d.input_schema } : {}),
    ...(isObject(d.output_schema) ? { output_schema: d.output_schema } : {}),
  };
}

/** The route as a Bazaar route template: `/weather/{city}` → `/weather/:city`. */
export function routeTemplate(path: string): string {
  return path.replace(/\{([^{}/]+)\}/g, ':$1');
}

/** The `bazaar` extension: `info` says how the resource is called, `schema` is its JSON Schema (2020-12). */
export function bazaarExtension(method: string, declared: DeclaredDiscovery) {
  const query = QUERY_METHODS.has(method);
  const input = declared.input_schema ?? { type: 'object', properties: {} };
  const inputProperties = query
    ? {
        type: { type: 'string', const: 'http' },
        method: { type: 'string', enum: ['GET', 'HEAD', 'DELETE'] },
        queryParams: { ...input, type: 'object' },
      }
    : {
        type: { type: 'string', const: 'http' },
        method: { type: 'string', enum: ['POST', 'PUT', 'PATCH'] },
        bodyType: { type: 'string', enum: ['json', 'form-data', 'text'] },
        body: input,
      };
  const output = declared.output_schema;
  return {
    info: {
      input: { type: 'http', method, ...(query ? {} : { bodyType: 'json', body: {} }) },
      ...(output ? { output: { type: 'json' } } : {}),
    },
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        input: {
          type: 'object',
          properties: inputProperties,
          required: query ? ['type', 'method'] : ['type', 'method', 'bodyType', 'body'],
          additionalProperties: false,
        },
        ...(output
          ? {
              output: {
                type: 'object',
                properties: { type: { type: 'string' }, example: output },
                required: ['type'],
              },
            }
          : {}),
      },
      required: ['input'],
    },
  };
}

/** The one `accepts` entry of a row on `chain`. */
export function acceptOf(row: DiscoveryRow, chain: ChainInfo): DiscoveryAccept {
  return {
    scheme: 'exact',
    network: chain.network,
    amount: BigInt(row.price_micro).toString(),
    asset: chain.usdc,
    payTo: getAddress(row.pay_to),
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    extra: { name: chain.usdcName, version: chain.usdcVersion },
  };
}

/** The 30-day uptime as reported by the seller's gate; nothing without a sample. */
export function uptimeOf(row: Pick<DiscoveryRow, 'uptime_answered' | 'uptime_failed'>): { uptime?: DiscoveryUptime } {
  const answered = Number(row.uptime_answered);
  const samples = answered + Number(row.uptime_failed);
  if (!(samples > 0)) return {};
  const ratio = Math.round((answered / samples) * 10_000) / 10_000;
  return { uptime: { ratio, samples, window_days: 30, reported_by: 'seller_gate' } };
}

export function discoveryResourceOf(row: DiscoveryRow, chain: ChainInfo): DiscoveryResourceView {
  const declared = declaredOf(row);
  const updated = Math.max(row.endpoint_updated_at.getTime(), row.seller_updated_at.getTime());
  const metadata = sanitizeResourceServiceMetadata({
    url: row.resource_base,
    serviceName: row.seller_name,
    tags: row.capabilities,
  });
  return {
    resource: `${row.resource_base.replace(/\/+$/, '')}${routeTemplate(row.path)}`.slice(0, 2048),
    type: 'http',
    x402Version: 2,
    accepts: [acceptOf(row, chain)],
    lastUpdated: new Date(updated).toISOString(),
    description: (declared.description ?? `${row.seller_name}: ${row.method} ${row.path}`).slice(0, 512),
    ...(metadata.serviceName ? { serviceName: metadata.serviceName } : {}),
    ...(metadata.tags ? { tags: metadata.tags } : {}),
    extensions: { bazaar: bazaarExtension(row.method, declared) },
    treasury: {
      seller_id: row.seller_id,
      seller_slug: row.seller_slug,
      seller_name: row.seller_name,
      endpoint_slug: row.endpoint_slug,
      price_usd: formatUsd(BigInt(row.price_micro)),
      revenue_30d_usd: formatUsd(BigInt(row.revenue_micro)),
      paid_calls_30d: Number(row.paid_calls),
      origin_verified: true,
      ...uptimeOf(row),
    },
  };
}
