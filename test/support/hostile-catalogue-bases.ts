/**
 * What the catalogue-wide hostile-input suite (test/integration/api/hostile-inputs-catalogue.test.ts) needs to
 * call a catalogued route (src/api/api-catalog.ts) so that only the attacked field is wrong: the bearer its auth
 * kind admits, a real object of the tenant for each path parameter, and a base body and query the route's own
 * catalogue schema accepts, with every optional field and nested object present so that each field of the schema
 * has a place in it. A route whose body the schema takes as `{}` needs no entry; one that needs more and has
 * none, or a path parameter named nowhere here, fails the suite by name.
 *
 * Defends: the suite attacking a field through a body that is already refused for another reason.
 */
import type { Auth, CatalogEntry } from '../../src/api/http/openapi/catalog-entry.js';
import { paymentRequirements, SELLER_ADDRESS } from '../builders/payment-requirements.js';
import { UNREACHABLE_ORIGIN, type Bearer, type Tenant } from './bearer-tenant.js';

/** The tenant's objects a base names, and a service PAT of its seller (a path parameter of a DELETE). */
export interface BaseObjects {
  tenant: Tenant;
  servicePatId: string;
}

/** The bearer each auth kind admits that reaches the route's schema (an agent PAT's single-use sibling aside). */
export const BEARER_BY_AUTH: Record<Auth, Bearer | undefined> = {
  none: undefined,
  operator: 'operator',
  treasury: 'treasury_pat',
  // A Treasury PAT may not mint Treasury PATs: the operator reaches every route of this kind.
  treasury_or_operator: 'operator',
  treasury_or_agent: 'treasury_pat',
  session: 'owner_session',
  owner_session: 'owner_session',
  owner_session_or_service: 'owner_session',
  session_or_agent: 'owner_session',
  service: 'service_pat',
  gate: 'gate_pat',
  agent: 'agent_pat',
  any: 'owner_session',
};

/** A path parameter's value: by its name, or for `{id}` by the collection before it. */
export function pathValue(path: string, param: string, o: BaseObjects): string | undefined {
  const t = o.tenant;
  const byName: Record<string, string> = {
    endpoint_id: t.endpointId,
    pat_id: o.servicePatId,
    authorization_id: `auth_${'0'.repeat(24)}`,
    asset: 'init.js',
  };
  if (param !== 'id') return byName[param];
  const byCollection: Record<string, string> = {
    treasuries: t.agentTreasuryId,
    wallets: t.agentWalletId,
    agents: t.agentId,
    pats: t.targetPatId,
    sellers: t.sellerId,
  };
  const segments = path.split('/');
  return byCollection[segments[segments.indexOf('{id}') - 1] ?? ''];
}

const OTHER_ADDRESS = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
const HASH = `0x${'ab'.repeat(32)}`;
const HEX64 = 'ab'.repeat(32);
/** base58 text of a 32-byte key's length and of a 64-byte signature's. */
const BASE58_KEY = '4'.repeat(44);
const BASE58_SIGNATURE = '5'.repeat(88);
const SIGNATURE = `0x${'11'.repeat(65)}`;

/** A wallet policy with every rule present. */
const POLICY = {
  per_tx_cap_usd: '1',
  daily_cap_usd: '10',
  weekly_cap_usd: '50',
  monthly_cap_usd: '100',
  velocity_cap: { max_count: 10, window_seconds: 60 },
  counterparty_allowlist: [SELLER_ADDRESS],
  counterparty_blocklist: [OTHER_ADDRESS],
  cooling_off: 0,
  capability_cap_usd: { search: '1' },
  capability_required: false,
  allow_key_destruction: false,
};

const ledgerRow = (o: BaseObjects) => ({
  tx_hash: HASH,
  payer: OTHER_ADDRESS,
  amount: '1000',
  network: 'eip155:84532',
  endpoint_id: o.tenant.endpointId,
  method: 'GET',
  route: '/base',
  content_hash: HEX64,
  nonce: HASH,
});

const claim = (o: BaseObjects) => ({
  endpoint_id: o.tenant.endpointId,
  route: '/base',
  id: 'pay_base_0000000000',
  fingerprint: HEX64,
});

const endpoint = {
  path: '/base',
  method: 'GET',
  price: '0.01',
  route_prices: { '/base/a': '0.02' },
  path_pattern: '/base/{id}',
  capabilities: ['search'],
};

const PAGE = { limit: '10', cursor: 'abc' };
const LEDGER_QUERY = (o: BaseObjects) => ({
  ...PAGE,
  seller_id: o.tenant.sellerId,
  from: '2025-01-01T00:00:00Z',
  to: '2025-02-01T00:00:00Z',
  endpoint_id: o.tenant.endpointId,
  status: 'pending',
  format: 'csv',
});
const DISCOVERY_QUERY = {
  type: 'http',
  scheme: 'exact',
  extensions: 'bazaar',
  network: 'eip155:84532',
  payTo: SELLER_ADDRESS,
  limit: '10',
};
const SIGN_IN_MESSAGE = 'treasury.test wants you to sign in';

/** Base bodies by `METHOD path` (more than one where the body is a union: a field is attacked in the one holding it). */
const BODIES: Record<string, (o: BaseObjects) => unknown[]> = {
  'POST /v1/treasury': () => [{ owner_type: 'org', owner_id: 'hostile-base' }],
  'POST /v1/treasuries/{id}/pats': () => [{ label: 'base', expires_in_seconds: 600 }],
  'POST /v1/wallets': () => [{ label: 'base', chain: 'eip155:84532', policy: POLICY }],
  'POST /v1/wallets/{id}/rotate': () => [{ abandon_balance: true }],
  'POST /v1/wallets/{id}/revoke': () => [{ abandon_balance: true }],
  'PUT /v1/wallets/{id}/policy': () => [POLICY],
  'PUT /v1/wallets/{id}/policy/signed': () => [{ policy: POLICY, version: 1, issued_at: 1, signature: SIGNATURE }],
  'POST /v1/wallets/{id}/policy/evaluate': () => [
    { kind: 'pay', to: SELLER_ADDRESS, amount_usd: '1', capability: 'search' },
  ],
  'POST /v1/wallets/{id}/pay': () => [
    {
      payment_requirements: paymentRequirements({
        extra: { name: 'USDC', version: '2', facilitatorAddress: OTHER_ADDRESS, feePayer: BASE58_KEY, memo: 'base' },
        resource: 'https://seller.example/r',
        description: 'base',
        mimeType: 'application/json',
      }),
      capability: 'search',
      authorization: { nonce: HASH, valid_after: '0', valid_before: '4102444800' },
      gas_sponsoring: 'eip2612',
      payment_identifier: 'pay_base_0000000000',
    },
  ],
  'POST /v1/wallets/{id}/transfer': () => [{ to: SELLER_ADDRESS, amount_usd: '1', valid_for_seconds: 600 }],
  'POST /v1/wallets/{id}/authorizations/{authorization_id}/settlement': () => [{ transaction: HASH }],
  'POST /v1/identity/init': () => [
    {
      chain: 'evm',
      message: SIGN_IN_MESSAGE,
      signature: SIGNATURE,
      link_solana: { message: SIGN_IN_MESSAGE, signature: BASE58_SIGNATURE, public_key: BASE58_KEY },
    },
    { chain: 'solana', message: SIGN_IN_MESSAGE, signature: BASE58_SIGNATURE, public_key: BASE58_KEY },
  ],
  'POST /v1/auth/verify': () => [{ network: 'eip155:84532' }],
  'POST /v1/agents': () => [{ label: 'base' }],
  'POST /v1/agents/{id}/wallets': () => [{ label: 'base', policy: POLICY, network: 'eip155:84532' }],
  'POST /v1/pats': (o) => [
    {
      scope_type: 'agent',
      scope_id: o.tenant.agentId,
      label: 'base',
      daily_cap_usd: '1',
      single_use: false,
      expires_in_seconds: 600,
      parent_pat_id: o.tenant.targetPatId,
      within_session: false,
    },
    { scope_type: 'treasury', gate: true },
  ],
  'PATCH /v1/pats/{id}': () => [{ daily_cap_usd: '3' }],
  'POST /v1/sellers': () => [
    {
      name: 'Base',
      slug: 'base',
      openapi_url: 'https://seller.example/openapi.json',
      capabilities: ['search'],
      protocol: 'x402',
      payout_mode: 'direct',
      legal_entity: 'Base Ltd',
      country: 'GB',
      origin: 'https://seller.example',
    },
  ],
  'PATCH /v1/sellers/{id}': () => [
    {
      name: 'Base',
      origin: 'https://seller.example',
      openapi_url: 'https://seller.example/openapi.json',
      capabilities: ['search'],
      payout_mode: 'direct',
    },
  ],
  'PUT /v1/sellers/{id}/banking': () => [{ legal_entity: 'Base Ltd', country: 'GB' }],
  'POST /v1/sellers/{id}/pay-to': () => [
    { address: SELLER_ADDRESS, signature: SIGNATURE },
    { address: BASE58_KEY, signature: BASE58_SIGNATURE },
  ],
  'POST /v1/sellers/{id}/pats': () => [{ label: 'base', expires_in_seconds: 600 }],
  'POST /v1/sellers/{id}/endpoints': () => [{ slug: 'base', ...endpoint }],
  'PATCH /v1/sellers/{id}/endpoints/{endpoint_id}': () => [endpoint],
  'POST /v1/ledger': (o) => [ledgerRow(o)],
  'POST /v1/gate/ledger': (o) => [ledgerRow(o)],
  'POST /v1/ledger/batch': (o) => [{ rows: [ledgerRow(o)] }],
  'POST /v1/gate/ledger/batch': (o) => [{ rows: [ledgerRow(o)] }],
  'POST /v1/gate/uptime': (o) => [
    { buckets: [{ endpoint_id: o.tenant.endpointId, hour: '2025-01-01T00:00:00Z', answered: 1, failed: 0 }] },
  ],
  'POST /v1/gate/address': () => [{ url: UNREACHABLE_ORIGIN, network: 'eip155:84532' }],
  ...Object.fromEntries(
    ['/v1/payment-ids', '/v1/gate/payment-ids'].flatMap((prefix) => [
      [`POST ${prefix}/begin`, (o: BaseObjects) => [{ ...claim(o), pending_ttl_seconds: 60 }]],
      [
        `POST ${prefix}/complete`,
        (o: BaseObjects) => [
          { ...claim(o), answer: { status: 200, headers: { 'content-type': 'text/plain' }, body_base64: 'AAAA' } },
        ],
      ],
      [`POST ${prefix}/release`, (o: BaseObjects) => [claim(o)]],
    ]),
  ),
};

/** Base queries by `METHOD path`: every key the schema takes, each value as a query string gives it. */
const QUERIES: Record<string, (o: BaseObjects) => Record<string, string>> = {
  'GET /v1/wallets/{id}/policy/receipt': () => ({ nonce: 'ab'.repeat(32) }),
  'GET /v1/wallets': () => ({ ...PAGE, status: 'active' }),
  'GET /v1/wallets/{id}/decisions': () => ({ limit: '10' }),
  'GET /v1/wallets/{id}/audit': () => ({ limit: '10' }),
  'GET /v1/gate/catalogue': () => ({ network: 'eip155:84532' }),
  'GET /v1/ledger': LEDGER_QUERY,
  'GET /v1/ledger/revenue': LEDGER_QUERY,
  'GET /v1/ledger/export': LEDGER_QUERY,
  'GET /discovery/resources': () => ({ ...DISCOVERY_QUERY, offset: '0' }),
  'GET /discovery/search': () => ({ ...DISCOVERY_QUERY, query: 'weather', cursor: '0' }),
};

/** The base bodies of a route: its own, or `{}` (which the suite checks its schema takes). */
export const baseBodies = (entry: CatalogEntry, o: BaseObjects): unknown[] =>
  BODIES[`${entry.method} ${entry.path}`]?.(o) ?? [{}];

/** The base query of a route: its own, or the page keys of a paged list, or none. */
export const baseQuery = (entry: CatalogEntry, o: BaseObjects): Record<string, string> =>
  QUERIES[`${entry.method} ${entry.path}`]?.(o) ?? (entry.query ? PAGE : {});
