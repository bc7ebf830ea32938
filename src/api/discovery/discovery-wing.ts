/**
 * The discovery wing's routers, built in one place for the composition root (../app.ts): the public catalogue
 * (./discovery-routes.ts), a seller's view of it (./seller-discovery-routes.ts), the gates' uptime reports it
 * shows (../sellers/uptime/uptime-routes.ts) and the gates' public addresses it lists managed-proxy sellers at
 * (../sellers/gate-address/gate-address-routes.ts). Defends: nothing by itself (wiring); each router says what it
 * defends.
 */
import type Router from '@koa/router';
import type { Knex } from 'knex';
import type { Authenticator } from '../auth/authenticator.js';
import type { AppConfig } from '../config/app-config.js';
import type { ChainRegistry } from '../../shared/chain-registry.js';
import type { HostResolver } from '../net/vetted-fetch.js';
import { gateAddressRoutes } from '../sellers/gate-address/gate-address-routes.js';
import { GateAddressService } from '../sellers/gate-address/gate-address-service.js';
import { PgGateAddressStore } from '../sellers/gate-address/gate-address-store.js';
import { uptimeRoutes } from '../sellers/uptime/uptime-routes.js';
import { UptimeService } from '../sellers/uptime/uptime-service.js';
import { PgUptimeStore } from '../sellers/uptime/uptime-store.js';
import { catalogueChain, createDiscoveryService } from './create-discovery-service.js';
import { discoveryRoutes } from './discovery-routes.js';
import { sellerDiscoveryRoutes, type SellerDiscoveryRouteDeps } from './seller-discovery-routes.js';

export function discoveryWingRoutes(
  core: {
    config: Pick<
      AppConfig,
      'defaultChain' | 'discoveryCacheMs' | 'verifyAllowPrivate' | 'outboundAllowedPorts' | 'production'
    >;
    knex: Knex;
    chains: ChainRegistry;
    clock: () => Date;
    /** How tenant-supplied host names are resolved (a test seam; src/api/net/vetted-fetch.ts). */
    resolveHost?: HostResolver | undefined;
  },
  auth: Authenticator,
  profiles: SellerDiscoveryRouteDeps['profiles'],
): Router[] {
  const { config, knex, chains, clock } = core;
  const addresses = new GateAddressService({
    store: new PgGateAddressStore(knex),
    clock,
    outbound: {
      allowPrivate: config.verifyAllowPrivate,
      allowedPorts: config.outboundAllowedPorts,
      resolveHost: core.resolveHost,
    },
    requireHttps: config.production,
  });
  return [
    gateAddressRoutes({ auth, addresses }),
    uptimeRoutes({ auth, uptime: new UptimeService({ store: new PgUptimeStore(knex), now: clock }) }),
    discoveryRoutes({ discovery: createDiscoveryService({ config, knex, chains, clock }) }),
    sellerDiscoveryRoutes({ auth, profiles, knex, chain: catalogueChain(config, chains), clock }),
  ];
}
