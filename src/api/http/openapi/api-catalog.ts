/**
 * The catalogue of every route: its operationId, who may call it, its request schema and its replies (each a
 * zod schema of src/shared/api-responses/ or the error envelope) — the single source of `GET /v1/openapi.json`
 * (./openapi-document.ts builds the document from it, zod 4's toJSONSchema turning each schema into JSON
 * Schema, so no shape is written twice). Tests compare it with the routes the app serves (both ways), validate
 * the document with an OpenAPI validator, and parse real replies with the schemas named here. The entries
 * live by route family (./*-catalog.ts), in the shape of ./catalog-entry.ts; the order here is the order of
 * the document's paths.
 *
 * Defends: a client generated from the document meeting routes, replies or errors it does not describe.
 * Does not defend: the details an error code adds beside the envelope's four keys (they vary per code).
 */
import type { CatalogEntry } from './catalog-entry.js';
import { IDENTITY_CATALOG, PAT_CATALOG } from './identity-catalog.js';
import { LEDGER_CATALOG } from '../../sellers/ledger/ledger-catalog.js';
import { OPERATIONS_CATALOG } from './operations-catalog.js';
import { SELLER_CATALOG } from '../../sellers/seller-catalog.js';
import { AGENT_CATALOG, WALLET_CATALOG } from './wallet-catalog.js';

export type { Auth, CatalogEntry, RawReply, Reply } from './catalog-entry.js';

export const API_CATALOG: CatalogEntry[] = [
  ...OPERATIONS_CATALOG,
  ...WALLET_CATALOG,
  ...IDENTITY_CATALOG,
  ...AGENT_CATALOG,
  ...PAT_CATALOG,
  ...SELLER_CATALOG,
  ...LEDGER_CATALOG,
];
