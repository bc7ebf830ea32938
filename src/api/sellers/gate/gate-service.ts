/**
 * What the gate asks of the platform (docs/gate.md), for the account of its gate PAT: the catalogue of the
 * account's managed-proxy (`mpp`) sellers, and ledger rows of paid requests the gate settled, each stored as
 * that endpoint's seller's middleware report would be (../ledger/seller-ledger-service.ts). Reads through
 * `GateCatalogueStore` (../store/seller-stores.ts); routes in ./gate-routes.ts.
 *
 * Defends: a gate reading or reporting for another account's sellers, or for a seller that did not choose the
 * managed proxy (`endpoint_not_found`, the same answer as an endpoint that does not exist); a row that names
 * no endpoint (`invalid_request`); a platform_mor seller's buyers paying anywhere but its collection wallet;
 * one account's catalogue holding the API's memory — it reads only what selling takes, and declarations within
 * MAX_GATE_DECLARATION_BYTES (../../../shared/api-responses/gate-responses.ts). Does not defend: a false row of
 * the right shape — the ledger verifies every row on chain before it counts; endpoints' `route_prices`, read
 * whole (bounded by the endpoint routes' request schemas only).
 */
import { getAddress } from 'viem';
import { AppError } from '../../errors/app-error.js';
import type { LedgerReportBody } from '../../../shared/ledger-report-schema.js';
import type { LedgerBatchResult } from '../../../shared/api-responses/seller-ledger-responses.js';
import type { LedgerEntryView } from '../../../shared/api-responses/seller-ledger-responses.js';
import {
  MAX_GATE_DECLARATION_BYTES,
  MAX_GATE_ENDPOINTS,
  MAX_GATE_SELLERS,
  type GateCatalogue,
  type GateEndpoint,
} from '../../../shared/api-responses/gate-responses.js';
import { reportLedgerBatch } from '../ledger/ledger-batch.js';
import type { LedgerPendingCap } from '../ledger/ledger-pending-cap.js';
import type { SellerLedgerService } from '../ledger/seller-ledger-service.js';
import type { PlatformWallets } from '../payouts/platform-wallets.js';
import { endpointTerms, type SellerRow } from '../seller-views.js';
import type { GateCatalogueStore, GateEndpointRow } from '../store/seller-stores.js';

export interface GateServiceDeps {
  store: GateCatalogueStore;
  ledger: Pick<SellerLedgerService, 'report'>;
  pendingCap: Pick<LedgerPendingCap, 'admit'>;
  collections: Pick<PlatformWallets, 'payToFor'>;
  /** CAIP-2 network of the API's default chain. */
  defaultNetwork: string;
}

/** One endpoint as the catalogue answers it: its terms, and its declarations when the store read them. */
const gateEndpoint = (e: GateEndpointRow): GateEndpoint => ({
  ...endpointTerms(e),
  ...(e.capabilities ? { capabilities: e.capabilities } : {}),
  discovery: e.discovery ?? null,
});

export class GateService {
  constructor(private readonly deps: GateServiceDeps) {}

  /** The account's `mpp` sellers with their endpoints and where their buyers pay on `network`. */
  async catalogue(accountId: string, network: string | undefined): Promise<GateCatalogue> {
    const { store, collections } = this.deps;
    const sellers = await store.managedSellersOf(accountId, MAX_GATE_SELLERS);
    const ids = sellers.map((s) => s.id);
    const endpointsOf = new Map<string, GateEndpoint[]>(ids.map((id) => [id, []]));
    for (const e of await store.endpointsOf(ids, MAX_GATE_ENDPOINTS, MAX_GATE_DECLARATION_BYTES))
      endpointsOf.get(e.seller_id)?.push(gateEndpoint(e));
    // The oldest proven pay-to of each chain family: 0x (EVM) and base58 (Solana).
    const firstPayTo = new Map<string, string>();
    const firstSolanaPayTo = new Map<string, string>();
    for (const p of await store.payToOf(ids)) {
      const address = p.address.trim();
      const evm = address.startsWith('0x');
      const first = evm ? firstPayTo : firstSolanaPayTo;
      if (!first.has(p.seller_id)) first.set(p.seller_id, evm ? getAddress(address) : address);
    }
    // A platform_mor seller's buyers pay its collection wallet on the gate's network (created on first use).
    const collectTo = new Map<string, string | null>();
    for (const s of sellers)
      if (s.payout_mode === 'platform_mor')
        collectTo.set(s.id, await collections.payToFor(s, network ?? this.deps.defaultNetwork));
    return {
      account_id: accountId,
      sellers: sellers.map((s) => ({
        seller_id: s.id,
        slug: s.slug,
        name: s.name,
        status: s.status,
        origin: s.origin,
        origin_verified: s.origin !== null && s.verified_at !== null,
        pay_to: collectTo.has(s.id) ? (collectTo.get(s.id) ?? null) : (firstPayTo.get(s.id) ?? null),
        solana_pay_to: collectTo.has(s.id) ? null : (firstSolanaPayTo.get(s.id) ?? null),
        endpoints: endpointsOf.get(s.id) ?? [],
      })),
    };
  }

  /** Stores one row for its endpoint's seller (after the seller's pending-row cap admits it). */
  async report(accountId: string, row: LedgerReportBody): Promise<{ created: boolean; entry: LedgerEntryView }> {
    const seller = await this.sellerOfRow(accountId, row);
    await this.deps.pendingCap.admit([{ seller, row }]);
    return this.deps.ledger.report(seller, row);
  }

  /** Stores up to a batch of rows, each with its own outcome (../ledger/ledger-batch.ts). */
  async reportBatch(accountId: string, rows: readonly LedgerReportBody[]): Promise<LedgerBatchResult['results']> {
    return reportLedgerBatch(this.deps.ledger, this.deps.pendingCap, rows, (row) => this.sellerOfRow(accountId, row));
  }

  /** The `mpp` seller of `accountId` that owns the row's endpoint; `endpoint_not_found` for any other. */
  private async sellerOfRow(accountId: string, row: LedgerReportBody): Promise<SellerRow> {
    if (!row.endpoint_id)
      throw new AppError('invalid_request', { message: 'A gate ledger row must name its endpoint_id.' });
    const seller = await this.deps.store.managedSellerOfEndpoint(accountId, row.endpoint_id);
    if (!seller) throw new AppError('endpoint_not_found');
    return seller;
  }
}
