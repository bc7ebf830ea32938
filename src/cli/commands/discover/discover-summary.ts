/**
 * One catalogue resource (GET /discovery/search, src/shared/api-responses/discovery-responses.ts) as an agent
 * or a person reads it: price, network, payee, seller, resource URL, how it is called and a short summary of
 * its input and output schemas (field names, `*` marking required ones, at most twelve each). Shared by
 * `xx discover` and the MCP `discover` tool. Pure.
 *
 * Defends: a schema summary that grows without bound or carries control characters from a seller's document
 * (names are cut and cleaned). Does not defend: what the seller declared (its words, shown as data).
 */
import { z } from 'zod';
import type { DiscoveryResourceView } from '../../../shared/api-responses/discovery-responses.js';

export const discoveredSummarySchema = z.object({
  price_usd: z.string(),
  network: z.string(),
  pay_to: z.string(),
  seller: z.string(),
  resource: z.string(),
  method: z.string(),
  description: z.string(),
  input: z.string(),
  output: z.string(),
  revenue_30d_usd: z.string(),
  paid_calls_30d: z.number().int().min(0),
});
export type DiscoveredSummary = z.infer<typeof discoveredSummarySchema>;

const MAX_FIELDS = 12;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A name as one short printable token: controls and characters that hide or reorder text become `?`. */
const clean = (name: string): string =>
  name
    // eslint-disable-next-line no-control-regex
    .replace(
      /[\u0000-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff\u{e0000}-\u{e007f}]/gu,
      '?',
    )
    .slice(0, 40);

/** `a*, b, c` for an object schema's properties (`*`: required); `-` when it names none. */
export function fieldsOf(schema: unknown): string {
  if (!isObject(schema) || !isObject(schema.properties)) return '-';
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : []);
  const names = Object.keys(schema.properties);
  if (names.length === 0) return '-';
  const shown = names.slice(0, MAX_FIELDS).map((n) => `${clean(n)}${required.has(n) ? '*' : ''}`);
  return names.length > MAX_FIELDS ? `${shown.join(', ')}, …` : shown.join(', ');
}

/** The declared input and output schemas from the resource's `bazaar` extension. */
function schemasOf(r: DiscoveryResourceView): { method: string; input: unknown; output: unknown } {
  const info = r.extensions?.bazaar.info;
  const input = isObject(info) && isObject(info.input) ? info.input : {};
  const props = r.extensions?.bazaar.schema.properties;
  const inputProps =
    isObject(props) && isObject(props.input) && isObject(props.input.properties) ? props.input.properties : {};
  const outputProps =
    isObject(props) && isObject(props.output) && isObject(props.output.properties) ? props.output.properties : {};
  return {
    method: typeof input.method === 'string' ? input.method : '-',
    input: inputProps.queryParams ?? inputProps.body,
    output: outputProps.example,
  };
}

export function summarizeResource(r: DiscoveryResourceView): DiscoveredSummary {
  const accept = r.accepts[0];
  const { method, input, output } = schemasOf(r);
  return {
    price_usd: r.treasury.price_usd,
    network: accept?.network ?? '-',
    pay_to: accept?.payTo ?? '-',
    seller: r.treasury.seller_name,
    resource: r.resource,
    method,
    description: r.description ?? '',
    input: fieldsOf(input),
    output: fieldsOf(output),
    revenue_30d_usd: r.treasury.revenue_30d_usd,
    paid_calls_30d: r.treasury.paid_calls_30d,
  };
}
