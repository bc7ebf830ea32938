/**
 * A seller the public catalogue lists (or, by choice, does not): registered by an owner's session with its origin
 * on a loopback server that serves its verification token (and its OpenAPI document, and whatever else the test
 * answers), its endpoints, its origin verified and a fresh pay-to address proven — each step optional.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { TestTreasury } from './api-harness.js';
import type { LoopbackServers } from './loopback-servers.js';
import { provePayTo } from './seller-pay-to.js';

export interface ListedSeller {
  seller_id: string;
  pat: string;
  origin: string;
  payTo: `0x${string}`;
  endpoints: Record<string, string>;
}

/**
 * Registers a seller whose origin is a loopback server serving its verification token, with `endpoints`
 * (`METHOD path` → price); `verify` verifies the origin, `prove` proves a fresh pay-to address.
 */
export async function registerSeller(
  t: TestTreasury,
  servers: LoopbackServers,
  session: string,
  name: string,
  opts: {
    endpoints: Record<string, string>;
    verify?: boolean;
    prove?: boolean;
    payout_mode?: string;
    protocol?: 'x402' | 'mpp';
    openapi?: Record<string, unknown>;
    /** Answers every other request of the origin (404 without it). */
    serve?: http.RequestListener;
  },
): Promise<ListedSeller> {
  let token = '';
  const origin = await servers.listen((req, res) => {
    if (req.url === '/.well-known/xx-verification.txt') return res.writeHead(200).end(`${token}\n`);
    if (req.url === '/openapi.json' && opts.openapi)
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(opts.openapi));
    if (opts.serve) return opts.serve(req, res);
    res.writeHead(404).end();
  });
  const created = await t.request('POST', '/v1/sellers', {
    token: session,
    body: {
      name,
      origin,
      ...(opts.payout_mode ? { payout_mode: opts.payout_mode } : {}),
      ...(opts.protocol ? { protocol: opts.protocol } : {}),
      ...(opts.openapi ? { openapi_url: `${origin}/openapi.json` } : {}),
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const { seller_id, pat } = created.body as { seller_id: string; pat: string };
  const endpoints: Record<string, string> = {};
  for (const [route, price] of Object.entries(opts.endpoints)) {
    const [method, path] = route.split(' ') as [string, string];
    const ep = await t.request('POST', `/v1/sellers/${seller_id}/endpoints`, {
      token: pat,
      body: { method, path, price },
    });
    assert.equal(ep.status, 201, JSON.stringify(ep.body));
    endpoints[route] = ep.body.endpoint_id;
  }
  if (opts.verify !== false) {
    token = (await t.request('GET', `/v1/sellers/${seller_id}/verify`, { token: pat })).body.token;
    const ok = await t.request('POST', `/v1/sellers/${seller_id}/verify`, { token: pat });
    assert.equal(ok.body.origin_verified, true, JSON.stringify(ok.body));
  }
  const payTo = privateKeyToAccount(generatePrivateKey());
  if (opts.prove !== false) await provePayTo(t, session, seller_id, payTo);
  return { seller_id, pat, origin, payTo: payTo.address, endpoints };
}
