/**
 * What the pay wing's steps are given (wired once in ./pay-service.ts): the two stores, the process's memory
 * between payments, the signer, the chains, metrics, the clock, where fresh identifiers come from, and the
 * fault-injection hooks the crash tests use.
 */
import type { ChainRegistry } from '../../shared/chain-registry.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import type { SignerGateway } from '../services/signer-gateway.js';
import type { DecisionMint } from './decide-payment.js';
import type { SnapshotCache } from './snapshot-cache.js';
import type { PaySnapshotStore, PayWriteStore } from './store/pay-stores.js';

/** Fault-injection hooks (tests only): after a reservation committed; after a signature was made for a decision not yet written; after a signature was recorded. */
export interface PayFaults {
  afterReserve?: (() => void) | undefined;
  afterSign?: (() => void) | undefined;
  afterCommit?: (() => void) | undefined;
}

export interface PayDeps {
  snapshots: PaySnapshotStore;
  writes: PayWriteStore;
  memory: SnapshotCache;
  signer: Pick<SignerGateway, 'call'>;
  chains: Pick<ChainRegistry, 'resolve'>;
  metrics: TreasuryMetrics;
  clock: () => Date;
  mint: DecisionMint;
  /** The dashboard's base URL (the PAT cap's recovery names its settings page). */
  dashboardUrl: string;
  faults: PayFaults;
}
