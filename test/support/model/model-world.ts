/**
 * The world of the trust-invariants model (test/integration/api/invariants-model.test.ts): what the model
 * believes about two tenants — their bearers and how each was made, their seller's prices, what their buyers
 * paid and where — and the real parts the steps act on (the API, the chain, a gate per tenant, the seller's
 * origin). A step acts on the real parts and updates the model; ./invariants.ts compares the two after every
 * step.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type fc from 'fast-check';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { TestTreasury } from '../api-harness.js';
import type { TestChain } from '../chain-harness.js';
import { provePayTo } from '../seller-pay-to.js';
import { signInBody } from '../sign-in.js';
import { startTestGate, type TestGate } from '../../integration/gate/gate-fakes.js';

/** A bearer the model holds, and what it expects of it. */
export interface Bearer {
  kind: 'owner_session' | 'treasury_pat' | 'agent_pat' | 'child_pat' | 'exchanged_session' | 'service_pat';
  id: string;
  token: string;
  /** The credential it was made from (its revocation or expiry ends this one), if any. */
  parent: Bearer | undefined;
  revoked: boolean;
  /** Agent PATs: the daily cap in micro-USD (null: none) and what the model let them spend today. */
  capMicro: bigint | null;
  spentMicro: bigint;
  /** Agent PATs: what they had spent when the owner last changed their cap (a lowered cap may be below it). */
  spentAtCapChangeMicro: bigint;
  /** A single-use PAT (as `xx dashboard` hands over): spent by its first request. */
  singleUse?: { used: boolean };
}

/** The seller's origin behind the tenant's gate: what it was asked, request line by request line. */
export interface SellerOrigin {
  url: string;
  token: string;
  served: string[];
  server: http.Server;
}

export interface Tenant {
  name: string;
  /** The owner's key: signing in again after revoke-all reaches the same account. */
  who: PrivateKeyAccount;
  owner: Bearer;
  treasuryAccountId: string;
  walletId: string;
  bearers: Bearer[];
  sellerId: string;
  slug: string;
  /** The priced endpoint `/data`: its price as the model says it must be, in micro-USD. `/free` is free. */
  endpointId: string;
  priceMicro: bigint;
  /** The seller's proven pay-to and the collection wallet Treasury holds for it on the test network. */
  payTo: PrivateKeyAccount;
  collectTo: Address;
  /** USDC buyers sent straight to the seller's pay-to (never through the platform), raw. */
  paidAroundRaw: bigint;
  origin: SellerOrigin;
  gate: TestGate;
}

export interface Model {
  tenants: Tenant[];
}

/** The real parts every step reaches. */
export interface Real {
  t: TestTreasury;
  chain: TestChain;
  signerMetricsPort: number;
}

/** One operation of the model: what it does and expects (`act`), then the invariants over everything. */
export abstract class Step implements fc.AsyncCommand<Model, Real> {
  abstract act(m: Model, r: Real): Promise<void>;
  check(): boolean {
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    await this.act(m, r);
    const { checkInvariants } = await import('./invariants.js');
    await checkInvariants(m, r);
  }
}

/** Neither the bearer nor any credential it was made from is revoked. */
const unrevoked = (b: Bearer): boolean => !b.revoked && (b.parent === undefined || unrevoked(b.parent));

/**
 * The bearer authenticates: nothing in its lineage is revoked, and it is not a spent single-use PAT (a session
 * exchanged from a single-use PAT lives on: spending the PAT is how the dashboard's handoff signs in).
 */
export const alive = (b: Bearer): boolean => !(b.singleUse?.used ?? false) && unrevoked(b);

/** The agent PAT whose cap and day total a bearer spends against: its own, or the one it was made within. */
export const capHolder = (b: Bearer): Bearer | undefined =>
  b.kind === 'agent_pat'
    ? b
    : b.kind === 'exchanged_session' || b.kind === 'child_pat'
      ? capHolder(b.parent!)
      : undefined;

/** A request with `b` spends it if it is single-use. */
export const use = (b: Bearer): void => {
  if (b.singleUse) b.singleUse.used = true;
};

/**
 * How a dead bearer is refused: 401, or 429 `rate_limited` once that bearer spent its refusals in the window
 * (docs/security-model.md, Rate limits: a presented bearer refused again and again is throttled).
 */
export const refusedAsDead = (res: { status: number; body: any }): boolean =>
  res.status === 401 || (res.status === 429 && res.body?.error_code === 'rate_limited');

/** Credentials from a root to `b`, `b` included. */
export const depth = (b: Bearer): number => 1 + (b.parent ? depth(b.parent) : 0);

export const pick = <T>(items: readonly T[], index: number): T | undefined =>
  items.length === 0 ? undefined : items[index % items.length];

export const newBearer = (kind: Bearer['kind'], id: string, token: string, extra: Partial<Bearer> = {}): Bearer => ({
  kind,
  id,
  token,
  parent: undefined,
  revoked: false,
  capMicro: null,
  spentMicro: 0n,
  spentAtCapChangeMicro: 0n,
  ...extra,
});

async function startSellerOrigin(): Promise<SellerOrigin> {
  const origin: SellerOrigin = { url: '', token: '', served: [], server: http.createServer() };
  origin.server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.url === '/.well-known/xx-verification.txt') return void res.end(origin.token);
    origin.served.push(`${req.method} ${req.url}`);
    res.end('served');
  });
  await new Promise<void>((resolve) => origin.server.listen(0, '127.0.0.1', resolve));
  origin.url = `http://127.0.0.1:${(origin.server.address() as AddressInfo).port}`;
  return origin;
}

/** The body of a created thing, or a failed assertion naming what was being made. */
async function made(what: string, res: Promise<{ status: number; body: any }>): Promise<any> {
  const answer = await res;
  assert.ok(answer.status === 200 || answer.status === 201, `${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/**
 * A tenant as a new owner makes it: a sign-in, a Treasury PAT and a wallet, a `platform_mor` gate seller on its
 * own verified origin with a priced `/data` and a free `/free`, a proven pay-to, its collection wallet, and a
 * gate with the account's gate PAT.
 */
export async function newTenant(r: Real, name: string): Promise<Tenant> {
  const { t, chain } = r;
  const who = privateKeyToAccount(generatePrivateKey());
  const owner = await made(
    'sign-in',
    t.request('POST', '/v1/identity/init', { body: await signInBody(t, undefined, who) }),
  );
  const session = owner.session as string;
  const treasury = await made(
    'Treasury PAT',
    t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'treasury' } }),
  );
  const wallet = await made('wallet', t.request('POST', '/v1/wallets', { token: treasury.pat, body: { label: name } }));
  const origin = await startSellerOrigin();
  const seller = await made(
    'seller',
    t.request('POST', '/v1/sellers', {
      token: session,
      body: { name: `seller ${name}`, protocol: 'mpp', payout_mode: 'platform_mor', origin: origin.url },
    }),
  );
  const sellerId = seller.seller_id as string;
  const endpoints = `/v1/sellers/${sellerId}/endpoints`;
  const data = await made(
    'endpoint',
    t.request('POST', endpoints, { token: session, body: { path: '/data', price: '0.01' } }),
  );
  await made('free endpoint', t.request('POST', endpoints, { token: session, body: { path: '/free', price: '0' } }));
  const payTo = privateKeyToAccount(generatePrivateKey());
  await provePayTo(t, session, sellerId, payTo);
  const verify = `/v1/sellers/${sellerId}/verify`;
  origin.token = (await made('verification token', t.request('GET', verify, { token: seller.pat }))).token;
  await made('origin verification', t.request('POST', verify, { token: seller.pat }));
  const terms = await made(
    'paywall terms',
    t.request('POST', '/v1/auth/verify', { token: seller.pat, body: { network: chain.network } }),
  );
  const gatePat = await made(
    'gate PAT',
    t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'gate' } }),
  );
  const gate = await startTestGate(
    { url: t.baseUrl },
    { GATE_TOKEN: gatePat.pat, FACILITATOR_URL: chain.facilitatorUrl, GATE_NETWORK: chain.network },
  );
  return {
    name,
    who,
    owner: newBearer('owner_session', owner.account_id, session),
    treasuryAccountId: treasury.scope_id,
    walletId: wallet.id,
    bearers: [
      newBearer('treasury_pat', treasury.id, treasury.pat),
      newBearer('service_pat', seller.pat_id, seller.pat),
    ],
    sellerId,
    slug: seller.slug,
    endpointId: data.endpoint_id,
    priceMicro: 10_000n,
    payTo,
    collectTo: terms.collect_to as Address,
    paidAroundRaw: 0n,
    origin,
    gate,
  };
}

/** Stops what a tenant started (its gate and its origin). */
export async function closeTenant(tenant: Tenant): Promise<void> {
  await tenant.gate.stop();
  tenant.origin.server.closeAllConnections();
  await new Promise<void>((resolve) => tenant.origin.server.close(() => resolve()));
}
