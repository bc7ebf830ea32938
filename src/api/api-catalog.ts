/**
 * The catalogue of every route: its operationId, who may call it, its request schema and its replies (each a
 * zod schema of src/shared/api-responses/ or the error envelope) — the single source of `GET /v1/openapi.json`
 * (./http/openapi/openapi-document.ts builds the document from it, zod 4's toJSONSchema turning each schema
 * into JSON Schema, so no shape is written twice). Tests compare it with the routes the app serves (both ways),
 * validate the document with an OpenAPI validator, and parse real replies with the schemas named here. The
 * entries live by route family, each beside its routes (a wing's `*-catalog.ts`, or ./http/openapi/*-catalog.ts
 * for the families not yet in a wing), in the shape of ./http/openapi/catalog-entry.ts; the order here is the
 * order of the document's paths. It stands beside the composition root because it names every wing: nothing
 * below imports it, the document is built from the catalogue the root hands over (./app.ts).
 *
 * Defends: a client generated from the document meeting routes, replies or errors it does not describe.
 * Does not defend: the details an error code adds beside the envelope's four keys (they vary per code).
 */
import type { CatalogEntry } from './http/openapi/catalog-entry.js';
import { IDENTITY_CATALOG } from './identity/identity-catalog.js';
import { AGENT_CATALOG } from './platform/agent-catalog.js';
import { PAT_CATALOG } from './platform/pat-catalog.js';
import { TREASURIES_CATALOG } from './platform/treasury-catalog.js';
import { LEDGER_CATALOG } from './sellers/ledger/ledger-catalog.js';
import { UPTIME_CATALOG } from './sellers/uptime/uptime-catalog.js';
import { GATE_ADDRESS_CATALOG } from './sellers/gate-address/gate-address-catalog.js';
import { PAYMENT_ID_CATALOG } from './sellers/payment-ids/payment-id-catalog.js';
import { OPERATIONS_CATALOG } from './http/openapi/operations-catalog.js';
import { SELLER_CATALOG, SERVICE_PAT_CHECK_CATALOG } from './sellers/seller-catalog.js';
import { PAY_CATALOG } from './pay/pay-catalog.js';
import { WALLET_CATALOG } from './wallets/wallet-catalog.js';
import { DISCOVERY_CATALOG } from './discovery/discovery-catalog.js';
import { SANDBOX_CATALOG } from './faucets/faucet-catalog.js';

export type { Auth, CatalogEntry, RawReply, Reply } from './http/openapi/catalog-entry.js';

export const API_CATALOG: CatalogEntry[] = [
  ...OPERATIONS_CATALOG,
  ...TREASURIES_CATALOG,
  ...WALLET_CATALOG,
  ...PAY_CATALOG,
  ...IDENTITY_CATALOG,
  ...SERVICE_PAT_CHECK_CATALOG,
  ...AGENT_CATALOG,
  ...PAT_CATALOG,
  ...SELLER_CATALOG,
  ...LEDGER_CATALOG,
  ...UPTIME_CATALOG,
  ...GATE_ADDRESS_CATALOG,
  ...PAYMENT_ID_CATALOG,
  ...DISCOVERY_CATALOG,
  ...SANDBOX_CATALOG,
];
