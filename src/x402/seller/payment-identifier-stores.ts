/**
 * Which `payment-identifier` store a paywall uses, from its resolved options (./payment-identifier-options.ts):
 * `memory` (./payment-identifier-memory-store.ts, bounded as configured), `platform`
 * (./payment-identifier-platform-store.ts, with the paywall's PAT and platform URL) or the seller's own object.
 *
 * Defends against: nothing by itself (the stores say what they defend). Does not defend against: a seller's
 * own store breaking the store's promises.
 */
import type { FetchLike } from '../bounded-fetch.js';
import { MemoryPaymentIdentifierStore } from './payment-identifier-memory-store.js';
import { PlatformPaymentIdentifierStore, type PlatformStoreOptions } from './payment-identifier-platform-store.js';
import type { PaymentIdentifierStore } from './payment-identifier-store.js';
import type { ResolvedX402Config } from './seller-options.js';

export function createPaymentIdentifierStore(
  config: Pick<ResolvedX402Config, 'paymentIdentifier' | 'apiUrl' | 'token' | 'platformTimeoutMs'>,
  platform: { fetch: FetchLike | undefined; routes: PlatformStoreOptions['routes']; scopeIsEndpoint?: boolean },
): PaymentIdentifierStore {
  const { store, retention_seconds, max_entries, max_total_bytes } = config.paymentIdentifier;
  if (store === 'memory')
    return new MemoryPaymentIdentifierStore({
      retentionSeconds: retention_seconds,
      maxEntries: max_entries,
      maxTotalBytes: max_total_bytes,
    });
  if (store === 'platform')
    return new PlatformPaymentIdentifierStore({
      apiUrl: config.apiUrl,
      token: config.token,
      fetch: platform.fetch,
      timeoutMs: config.platformTimeoutMs,
      routes: platform.routes,
      scopeIsEndpoint: platform.scopeIsEndpoint ?? false,
    });
  return store;
}
