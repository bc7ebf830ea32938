/**
 * Builds the public catalogue's service from the app's config (./discovery-service.ts): its store over the
 * app's PostgreSQL pool, the API's default chain as the network buyers are asked to pay on, and the answer
 * cache's lifetime (TREASURY_DISCOVERY_CACHE_MS).
 *
 * Defends: a catalogue started on a chain the registry does not know (it throws at start, not per request).
 * Does not defend: anything at run time (the service and store do).
 */
import type { Knex } from 'knex';
import type { ChainInfo, ChainRegistry } from '../../shared/chain-registry.js';
import type { AppConfig } from '../config/app-config.js';
import { DiscoveryService } from './discovery-service.js';
import { DiscoveryStore } from './discovery-store.js';

export function createDiscoveryService(deps: {
  config: Pick<AppConfig, 'defaultChain' | 'discoveryCacheMs'>;
  knex: Knex;
  chains: ChainRegistry;
  clock: () => Date;
}): DiscoveryService {
  const chain = catalogueChain(deps.config, deps.chains);
  return new DiscoveryService({
    store: new DiscoveryStore(deps.knex),
    chain,
    clock: deps.clock,
    cacheMs: deps.config.discoveryCacheMs,
  });
}

/** The catalogue's chain: the API's default one (TREASURY_DEFAULT_CHAIN). */
export function catalogueChain(config: Pick<AppConfig, 'defaultChain'>, chains: ChainRegistry): ChainInfo {
  const chain = chains.resolve(config.defaultChain);
  if (!chain) throw new Error(`TREASURY_DEFAULT_CHAIN ${config.defaultChain} is not a configured chain`);
  return chain;
}
