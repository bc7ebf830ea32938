/**
 * The catalogue entries of the gate's public address routes (./gate-address-routes.ts); ../../api-catalog.ts puts
 * every family together. Defends: a generated client meeting these routes undescribed. Does not defend: what
 * the proof proves (./gate-address-service.ts).
 */
import { gateAddressBodySchema, gateAddressViewSchema } from '../../../shared/gate-address-schema.js';
import type { CatalogEntry } from '../../http/openapi/catalog-entry.js';
import { ORIGIN_FETCH } from '../../http/openapi/catalog-error-lists.js';

export const GATE_ADDRESS_CATALOG: CatalogEntry[] = [
  {
    method: 'GET',
    path: '/v1/gate/address',
    operationId: 'readGateAddress',
    summary: "The account's gate public address, the token its gate serves, and whether the address is verified",
    auth: 'gate',
    replies: { 200: gateAddressViewSchema },
    errors: ['gate_address_not_set'],
  },
  {
    method: 'POST',
    path: '/v1/gate/address',
    operationId: 'setGateAddress',
    summary: "Name the account's gate public address (a new address must be verified again)",
    auth: 'gate',
    body: gateAddressBodySchema,
    replies: { 200: gateAddressViewSchema },
  },
  {
    method: 'POST',
    path: '/v1/gate/address/verify',
    operationId: 'verifyGateAddress',
    summary:
      "Verify the gate's address (and base domain, at a random name under it) via /.well-known/xx-gate-verification.txt (listed in discovery once verified)",
    auth: 'gate',
    replies: { 200: gateAddressViewSchema },
    errors: [
      'gate_address_not_set',
      'gate_verification_not_found',
      'gate_verification_token_mismatch',
      ...ORIGIN_FETCH,
    ],
  },
];
