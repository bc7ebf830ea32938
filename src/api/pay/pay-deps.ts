/**
 * What the pay wing's steps are given (wired once in ./pay-service.ts): the two stores, the process's memory
 * between payments, the signer, the chains, metrics, the clock, where fresh identifiers come from, and the
 * fault-injection hooks the crash tests use.
 */
import type { ChainRegistry } from '../../shared/chain-registry.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import type { SignerGateway } from '../signing/signer-gateway.js';
import type { DecisionMint } from './decide-payment.js';
import type { PayFaultHooks } from './pay-fault-hooks.js';
import type { SnapshotCache } from './snapshot-cache.js';
import type { PaySnapshotStore, PayWriteStore } from './store/pay-stores.js';

/** Fault-injection hooks (tests only; ./pay-fault-hooks.ts). */
export type PayFaults = Readonly<PayFaultHooks>;

export interface PayDeps {
  snapshots: PaySnapshotStore;
  writes: PayWriteStore;
  memory: SnapshotCache;
  signer: Pick<SignerGateway, 'call'>;
  chains: Pick<ChainRegistry, 'resolveAny'>;
  metrics: TreasuryMetrics;
  clock: () => Date;
  mint: DecisionMint;
  /** The dashboard's base URL (the PAT cap's recovery names its settings page). */
  dashboardUrl: string;
  faults: PayFaults;
}
