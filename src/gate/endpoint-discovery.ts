/**
 * What the gate's 402 challenges declare for x402 Bazaar catalogues (docs/gate.md#bazaar-discovery), per
 * endpoint, from what the catalogue already says of it: the seller's name as `serviceName`, the endpoint's
 * capability tags as `tags`, the input and output JSON Schemas its OpenAPI operation declares, and its path
 * pattern as the route (its Bazaar route template, behind the seller's `/<slug>` prefix when routed by path).
 * The paywall builds the declaration per request (src/x402/seller/bazaar-declaration.ts).
 *
 * Defends against: an endpoint left unsold because of its declarations — options the paywall's checks would
 * refuse (a pattern stored before the grammar, an oversize schema) fall back to the service name and tags only.
 * Does not defend against: declarations that misdescribe the origin (the seller's OpenAPI document).
 */
import type { GateEndpoint, GateSeller } from '../shared/api-responses/gate-responses.js';
import { resolveDiscovery, type DiscoveryOptions } from '../x402/seller/discovery-options.js';

export function gateDiscoveryOptions(seller: GateSeller, endpoint: GateEndpoint): DiscoveryOptions {
  const service = {
    ...(seller.name !== undefined ? { service_name: seller.name } : {}),
    ...(endpoint.capabilities ? { tags: endpoint.capabilities } : {}),
  };
  const declared = endpoint.discovery ?? {};
  const full: DiscoveryOptions = {
    ...service,
    ...(declared.input_schema ? { input_schema: declared.input_schema } : {}),
    ...(declared.output_schema ? { output_schema: declared.output_schema } : {}),
    ...(endpoint.path_pattern !== null ? { routes: { [endpoint.path_pattern]: {} } } : {}),
  };
  const problems: string[] = [];
  resolveDiscovery(full, problems);
  return problems.length === 0 ? full : service;
}
