/**
 * The sandbox's demo seller: a Koa app with one paid route (`GET /joke`, 0.01 USDC) behind our x402
 * middleware, settled by the sandbox facilitator on the local chain and reported to the local Treasury
 * platform. The platform is its merchant of record (`platform_mor`, docs/adr/0011-merchant-of-record.md): buyers
 * pay the collection wallet Treasury holds for it (the middleware's 402 terms name it), and a payout flush moves
 * what was collected to its proven pay-to address (a public anvil dev key signs the claim). On first start it
 * signs in with a fresh key (SIWE), registers the seller and its endpoint, proves its pay-to address, and keeps
 * the service PAT and the owner's sandbox key (it signs in again to flush) in `<dataDir>/demo-seller.json`
 * (0600) for the next start. Loopback only.
 */
import http from 'node:http';
import path from 'node:path';
import Koa from 'koa';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { x402Koa } from '../../src/x402/koa/index.js';
import { payToClaimMessage } from '../../src/api/sellers/seller-pay-to-service.js';
import { bearerAccepted, reuseOrRegister } from './demo-state-file.js';

interface DemoSellerState {
  seller_id: string;
  pat: string;
  pay_to: string;
  /** The pay-to address is proven for the seller (payouts go there). */
  pay_to_proven?: boolean;
  /** The owner's sandbox key: signs in again for owner-only calls (a payout flush). */
  owner_key?: `0x${string}`;
  payout_mode?: 'platform_mor';
}

export interface DemoSeller {
  url: string;
  sellerId: string;
  payTo: string;
  /** Where its buyers pay: the collection wallet Treasury holds for it on the sandbox network. */
  collectTo: string;
  /** Signs the owner in and flushes the seller's payouts: what was collected moves to `payTo` on chain. */
  flushPayouts(): Promise<Record<string, unknown>>;
  /** Stops serving, then sends its pending ledger reports (for at most 3 s): call it while the API is still up. */
  stop(): Promise<void>;
}

export async function call(apiUrl: string, method: string, route: string, token: string | undefined, body?: unknown) {
  const res = await fetch(apiUrl + route, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok)
    throw new Error(`demo seller setup: ${method} ${route} → ${res.status} ${String(json.error_code ?? '')}`);
  return json;
}

/** Signs in with a fresh key (SIWE); the account session and the key's address. */
export async function signInFresh(
  apiUrl: string,
  publicUrl: string,
  chainId: number,
  ownerKey: `0x${string}` = generatePrivateKey(),
): Promise<{ session: string; address: string }> {
  const owner = privateKeyToAccount(ownerKey);
  const { nonce } = (await call(apiUrl, 'POST', '/v1/identity/nonce', undefined)) as { nonce: string };
  const url = new URL(publicUrl);
  const message = createSiweMessage({
    domain: url.host,
    address: owner.address,
    uri: url.origin,
    version: '1',
    chainId,
    nonce,
    issuedAt: new Date(),
  });
  const { session } = (await call(apiUrl, 'POST', '/v1/identity/init', undefined, {
    message,
    signature: await owner.signMessage({ message }),
    chain: 'evm',
  })) as { session: string };
  return { session, address: owner.address };
}

/**
 * Signs in with a fresh key and registers a seller (its slug `<slugPrefix>-<owner address prefix>`) with one
 * paid endpoint, GET /<endpoint> at $0.01, and a pay-to address proven with `payToKey`'s signature. The demo
 * seller and the gate's demo seller both start this way.
 */
export async function registerPaidSeller(
  api: { apiUrl: string; publicUrl: string; chainId: number; payToKey: `0x${string}` },
  profile: { name: string; slugPrefix: string; protocol?: 'mpp'; origin?: string; payout_mode?: 'platform_mor' },
  endpoint: string,
  ownerKey: `0x${string}` = generatePrivateKey(),
): Promise<{ session: string; seller: { seller_id: string; slug: string; pat: string }; payTo: string }> {
  const { apiUrl } = api;
  const payTo = privateKeyToAccount(api.payToKey);
  const { session, address } = await signInFresh(apiUrl, api.publicUrl, api.chainId, ownerKey);
  const { slugPrefix, ...rest } = profile;
  const seller = (await call(apiUrl, 'POST', '/v1/sellers', session, {
    ...rest,
    slug: `${slugPrefix}-${address.slice(2, 10).toLowerCase()}`,
  })) as { seller_id: string; slug: string; pat: string };
  await call(apiUrl, 'POST', `/v1/sellers/${seller.seller_id}/endpoints`, seller.pat, {
    slug: endpoint,
    path: `/${endpoint}`,
    method: 'GET',
    price: '0.01',
  });
  const signature = await payTo.signMessage({ message: payToClaimMessage(seller.seller_id, payTo.address) });
  await call(apiUrl, 'POST', `/v1/sellers/${seller.seller_id}/pay-to`, session, { address: payTo.address, signature });
  return { session, seller, payTo: payTo.address };
}

/** Registers the demo seller and its paid endpoint; returns what the middleware needs. */
async function register(
  apiUrl: string,
  publicUrl: string,
  chainId: number,
  payToKey: `0x${string}`,
): Promise<DemoSellerState> {
  const ownerKey = generatePrivateKey();
  const { seller, payTo } = await registerPaidSeller(
    { apiUrl, publicUrl, chainId, payToKey },
    { name: 'Sandbox demo seller', slugPrefix: 'demo', payout_mode: 'platform_mor' },
    'joke',
    ownerKey,
  );
  return {
    seller_id: seller.seller_id,
    pat: seller.pat,
    pay_to: payTo,
    pay_to_proven: true,
    owner_key: ownerKey,
    payout_mode: 'platform_mor',
  };
}

export async function startDemoSeller(options: {
  apiUrl: string;
  publicUrl: string;
  facilitatorUrl: string;
  chainId: number;
  network: string;
  /** The key of the pay-to address (a public anvil dev key): it signs the pay-to claim. */
  payToKey: `0x${string}`;
  dataDir: string;
  port?: number;
}): Promise<DemoSeller> {
  const payTo = privateKeyToAccount(options.payToKey).address;
  // The database may have been reset since: keep the stored seller only while its PAT still verifies.
  const { state } = await reuseOrRegister<DemoSellerState>(
    path.join(options.dataDir, 'demo-seller.json'),
    async (stored) =>
      (await bearerAccepted(`${options.apiUrl}/v1/auth/verify`, stored.pat, { method: 'POST' })) &&
      stored.pay_to === payTo &&
      stored.pay_to_proven === true &&
      stored.payout_mode === 'platform_mor' &&
      stored.owner_key !== undefined,
    () => register(options.apiUrl, options.publicUrl, options.chainId, options.payToKey),
  );

  // Where its buyers pay on the sandbox network: its collection wallet, created on this first ask.
  const { collect_to: collectTo } = (await call(options.apiUrl, 'POST', '/v1/auth/verify', state.pat, {
    network: options.network,
  })) as { collect_to: string };

  const app = new Koa();
  const paywall = x402Koa({
    token: state.pat,
    price: '0.01',
    pay_to: state.pay_to,
    facilitator_url: options.facilitatorUrl,
    api_url: options.apiUrl,
    network: options.network,
    description: 'A joke, paid per call',
    env: {},
  });
  app.use(paywall);
  app.use((ctx) => {
    if (ctx.path === '/health') {
      ctx.body = { ok: true };
      return;
    }
    if (ctx.method === 'GET' && ctx.path === '/joke') {
      ctx.body = { joke: 'Why did the agent pay 0.01 USDC? Because the server said 402.', paid: true };
      return;
    }
    ctx.status = 404;
    ctx.body = { error_code: 'not_found' };
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    sellerId: state.seller_id,
    payTo: state.pay_to,
    collectTo,
    async flushPayouts() {
      const { session } = await signInFresh(options.apiUrl, options.publicUrl, options.chainId, state.owner_key);
      return call(options.apiUrl, 'POST', `/v1/sellers/${state.seller_id}/payouts/flush`, session);
    },
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      // The paid calls' ledger reports go out in batches; send the last ones while the API is still up. A
      // terminal's Ctrl-C reaches every process of the group at once, the database too: then a report still
      // queued cannot be recorded, and the stop does not wait out the reporter's retries for it.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([paywall.flush(), new Promise<void>((resolve) => (timer = setTimeout(resolve, 3_000)))]);
      clearTimeout(timer);
    },
  };
}
