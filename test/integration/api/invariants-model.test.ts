/**
 * The trust invariants as a model-based test (fast-check commands), against the real API, PostgreSQL and the
 * SoftHSM signer process: random sequences of operations by two tenants with every kind of bearer they can
 * hold — mint, exchange, revoke, pay, pay across tenants — and after every step:
 * - no credential outlives or outranks its parent (docs/security-model.md, Credential lineage): each bearer
 *   the model holds authenticates exactly while the model says it is alive, and no row of `api_tokens` has a
 *   later expiry, a looser daily cap or a longer life than its parent;
 * - spend stays within every cap: each agent PAT's day total is what the model allowed, never above its cap;
 * - no signature exists without its record: the signer's signature count equals the recorded authorizations;
 * - a bearer of one tenant never moves the other tenant's money.
 *
 * Seeded and replayable (a fixed seed by default, so every run plays the same sequences): the seed and the
 * path of a failure are printed; run again with
 * TREASURY_MODEL_SEED=<seed> (and TREASURY_MODEL_PATH=<path> to replay the shrunk case only).
 * TREASURY_MODEL_RUNS sets the number of runs (default 4, each up to 30 operations).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { signInBody } from '../../support/sign-in.js';
import { findFreePort } from '../../support/signer-harness.js';
import { readMetric } from '../signer/signer-test-helpers.js';

/** A bearer the model holds, and what it expects of it. */
interface Bearer {
  kind: 'owner_session' | 'treasury_pat' | 'agent_pat' | 'child_pat' | 'exchanged_session' | 'service_pat';
  id: string;
  token: string;
  /** The credential it was made from (its revocation ends this one), if any. */
  parent: Bearer | undefined;
  revoked: boolean;
  /** Agent PATs: the daily cap in micro-USD (null: none) and what the model let them spend today. */
  capMicro: bigint | null;
  spentMicro: bigint;
  /** A single-use PAT (as `xx dashboard` hands over): spent by its first request. */
  singleUse?: { used: boolean };
}

interface Tenant {
  name: string;
  /** The owner's key: signing in again after revoke-all reaches the same account. */
  who: PrivateKeyAccount;
  treasuryAccountId: string;
  sellerId: string;
  endpointId: string;
  /** The endpoint's price as the model says it must be, in micro-USD. */
  priceMicro: bigint;
  owner: Bearer;
  walletId: string;
  bearers: Bearer[];
}

interface Model {
  tenants: Tenant[];
}

interface Real {
  t: TestTreasury;
}

const alive = (b: Bearer): boolean =>
  !b.revoked && !(b.singleUse?.used ?? false) && (b.parent === undefined || alive(b.parent));
/** The agent PAT whose cap and day total a bearer spends against: its own, or the one it was made within. */
const capHolder = (b: Bearer): Bearer | undefined =>
  b.kind === 'agent_pat'
    ? b
    : b.kind === 'exchanged_session' || b.kind === 'child_pat'
      ? capHolder(b.parent!)
      : undefined;
/** A request with `b` spends it if it is single-use. */
const used = (b: Bearer): void => {
  if (b.singleUse) b.singleUse.used = true;
};
/** Bearers that act as an agent (pay with its wallets, exchange for a session). */
const actsAsAgent = (b: Bearer): boolean => capHolder(b) !== undefined;

const pick = <T>(items: readonly T[], index: number): T | undefined =>
  items.length === 0 ? undefined : items[index % items.length];

let t: TestTreasury;
let metricsPort: number;

/** One operation of the model: what it does and expects (`act`), then the invariants over everything. */
abstract class Step implements fc.AsyncCommand<Model, Real> {
  abstract act(m: Model): Promise<void>;
  check(): boolean {
    return true;
  }
  async run(m: Model): Promise<void> {
    await this.act(m);
    await checkInvariants(m);
  }
}

/** Mints an agent PAT with the owner's session. */
class MintAgentPat extends Step {
  constructor(
    readonly tenant: number,
    readonly capCents: number | null,
    readonly expiresInSeconds: number | null,
  ) {
    super();
  }
  async act(m: Model): Promise<void> {
    const tenant = m.tenants[this.tenant]!;
    const body = {
      scope_type: 'agent',
      ...(this.capCents === null ? {} : { daily_cap_usd: (this.capCents / 100).toFixed(2) }),
      ...(this.expiresInSeconds === null ? {} : { expires_in_seconds: this.expiresInSeconds }),
    };
    const res = await t.request('POST', '/v1/pats', { token: tenant.owner.token, body });
    if (!alive(tenant.owner)) {
      assert.equal(res.status, 401, JSON.stringify(res.body));
      return;
    }
    assert.equal(res.status, 201, JSON.stringify(res.body));
    tenant.bearers.push({
      kind: 'agent_pat',
      id: res.body.id,
      token: res.body.pat,
      parent: undefined,
      revoked: false,
      capMicro: this.capCents === null ? null : BigInt(this.capCents) * 10_000n,
      spentMicro: 0n,
    });
  }
  toString = () => `MintAgentPat(${this.tenant}, ${this.capCents}¢, ${this.expiresInSeconds}s)`;
}

/**
 * A Treasury PAT asks for a Treasury PAT of its own account: refused, whatever it asks (a Treasury PAT mints
 * nothing; docs/security-model.md, Credential lineage).
 */
class MintFromTreasuryPat extends Step {
  constructor(
    readonly tenant: number,
    readonly expiresInSeconds: number | null,
  ) {
    super();
  }
  async act(m: Model): Promise<void> {
    const tenant = m.tenants[this.tenant]!;
    const pat = tenant.bearers.find((b) => b.kind === 'treasury_pat')!;
    const res = await t.request('POST', `/v1/treasuries/${tenant.treasuryAccountId}/pats`, {
      token: pat.token,
      body: this.expiresInSeconds === null ? {} : { expires_in_seconds: this.expiresInSeconds },
    });
    assert.equal(res.status, alive(pat) ? 403 : 401, `a Treasury PAT minting: ${JSON.stringify(res.body)}`);
  }
  toString = () => `MintFromTreasuryPat(${this.tenant}, ${this.expiresInSeconds}s)`;
}

/** Exchanges a PAT for a session: only a live agent PAT may, and the session is its child. */
class Exchange extends Step {
  constructor(
    readonly tenant: number,
    readonly bearer: number,
  ) {
    super();
  }
  async act(m: Model): Promise<void> {
    const tenant = m.tenants[this.tenant]!;
    const from = pick(tenant.bearers, this.bearer);
    if (!from) return;
    const res = await t.request('POST', '/v1/identity/exchange-pat', { token: from.token });
    const wasAlive = alive(from);
    used(from);
    if (!(from.kind === 'agent_pat' || from.kind === 'child_pat') || !wasAlive) {
      assert.ok(res.status === 401 || res.status === 403, `exchange from ${from.kind}: ${res.status}`);
      return;
    }
    assert.equal(res.status, 200, JSON.stringify(res.body));
    // At most three live sessions per PAT: the oldest beyond that ends.
    const live = tenant.bearers.filter((b) => b.kind === 'exchanged_session' && b.parent === from && alive(b));
    if (live.length >= 3) live[0]!.revoked = true;
    tenant.bearers.push({
      kind: 'exchanged_session',
      id: `session of ${from.id}`,
      token: res.body.session,
      parent: from,
      revoked: false,
      capMicro: null,
      spentMicro: 0n,
    });
  }
  toString = () => `Exchange(${this.tenant}, ${this.bearer})`;
}

/** The owner revokes one of the account's PATs: it and everything made from it stop working at once. */
class Revoke extends Step {
  constructor(
    readonly tenant: number,
    readonly bearer: number,
  ) {
    super();
  }
  async act(m: Model): Promise<void> {
    const tenant = m.tenants[this.tenant]!;
    const pats = tenant.bearers.filter((b) => b.kind === 'agent_pat' || b.kind === 'treasury_pat');
    const target = pick(pats, this.bearer);
    if (!target) return;
    const res = await t.request('DELETE', `/v1/pats/${target.id}`, { token: tenant.owner.token });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    target.revoked = true;
  }
  toString = () => `Revoke(${this.tenant}, ${this.bearer})`;
}

/**
 * The owner mints a PAT within one of the account's PATs (`parent_pat_id`; single-use as `xx dashboard` hands
 * one over, or not): it acts as the parent's agent, spends from the parent's cap and day total, and ends
 * with it. Within a dead parent, nothing is made.
 */
class MintWithin extends Step {
  constructor(
    readonly tenant: number,
    readonly bearer: number,
    readonly singleUse: boolean,
  ) {
    super();
  }
  async act(m: Model): Promise<void> {
    const tenant = m.tenants[this.tenant]!;
    const parents = tenant.bearers.filter((b) => b.kind === 'agent_pat' || b.kind === 'child_pat');
    const parent = pick(parents, this.bearer);
    if (!parent) return;
    const res = await t.request('POST', '/v1/pats', {
      token: tenant.owner.token,
      body: { scope_type: 'agent', parent_pat_id: parent.id, ...(this.singleUse ? { single_use: true } : {}) },
    });
    if (!alive(tenant.owner)) {
      assert.equal(res.status, 401, JSON.stringify(res.body));
      return;
    }
    if (!alive(parent) || depth(parent) >= 3) {
      assert.ok([403, 404].includes(res.status), `within a dead or deep parent: ${JSON.stringify(res.body)}`);
      return;
    }
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.parent_token_id, parent.id);
    tenant.bearers.push({
      kind: 'child_pat',
      id: res.body.id,
      token: res.body.pat,
      parent,
      revoked: false,
      capMicro: null,
      spentMicro: 0n,
      ...(this.singleUse ? { singleUse: { used: false } } : {}),
    });
  }
  toString = () => `MintWithin(${this.tenant}, ${this.bearer}${this.singleUse ? ', single use' : ''})`;
}

/** Credentials from a root to `b`, `b` included. */
const depth = (b: Bearer): number => 1 + (b.parent ? depth(b.parent) : 0);

/**
 * The owner ends every session of the account (and what was made within them), then signs in again with
 * the same key: the PATs it minted stay.
 */
class RevokeAllSessions extends Step {
  constructor(readonly tenant: number) {
    super();
  }
  async act(m: Model): Promise<void> {
    const tenant = m.tenants[this.tenant]!;
    const res = await t.request('POST', '/v1/auth/sessions/revoke-all', { token: tenant.owner.token });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    for (const b of tenant.bearers) if (b.kind === 'exchanged_session') b.revoked = true;
    tenant.owner.revoked = true;
    await checkInvariants(m);
    const again = await t.request('POST', '/v1/identity/init', { body: await signInBody(t, undefined, tenant.who) });
    assert.equal(again.status < 300, true, JSON.stringify(again.body));
    assert.equal(again.body.account_id, tenant.owner.id, 'the same account');
    tenant.owner = { ...tenant.owner, token: again.body.session, revoked: false };
  }
  toString = () => `RevokeAllSessions(${this.tenant})`;
}

/**
 * A bearer sets the price of a tenant's endpoint (its own tenant's, or across): only the owner's sign-in
 * session and the seller's service PAT may; everything else is refused and the price stays.
 */
class SetPrice extends Step {
  constructor(
    readonly tenant: number,
    readonly bearer: number,
    readonly cents: number,
    readonly across: boolean,
  ) {
    super();
  }
  async act(m: Model): Promise<void> {
    const owner = m.tenants[this.tenant]!;
    const caller = m.tenants[this.across ? 1 - this.tenant : this.tenant]!;
    const by = this.bearer === 0 ? caller.owner : pick(caller.bearers, this.bearer - 1);
    if (!by) return;
    const price = (this.cents / 100).toFixed(2);
    const res = await t.request('PATCH', `/v1/sellers/${owner.sellerId}/endpoints/${owner.endpointId}`, {
      token: by.token,
      body: { price },
    });
    const wasAlive = alive(by);
    used(by);
    const may = wasAlive && !this.across && (by.kind === 'owner_session' || by.kind === 'service_pat');
    if (!may) {
      assert.ok(res.status >= 400 && res.status < 500, `${by.kind} set a price: ${JSON.stringify(res.body)}`);
      if (!wasAlive) assert.equal(res.status, 401);
      return;
    }
    assert.equal(res.status, 200, JSON.stringify(res.body));
    owner.priceMicro = BigInt(this.cents) * 10_000n;
  }
  toString = () => `SetPrice(${this.tenant}, ${this.bearer}, ${this.cents}¢${this.across ? ', across' : ''})`;
}

/** A payment of `cents` from the tenant's wallet with one of its bearers (or the other tenant's, across). */
class Pay extends Step {
  constructor(
    readonly tenant: number,
    readonly bearer: number,
    readonly cents: number,
    readonly across: boolean,
  ) {
    super();
  }
  async act(m: Model): Promise<void> {
    const owner = m.tenants[this.tenant]!;
    const payer = m.tenants[this.across ? 1 - this.tenant : this.tenant]!;
    const by = pick(payer.bearers, this.bearer);
    if (!by) return;
    const amountMicro = BigInt(this.cents) * 10_000n;
    const res = await t.request('POST', `/v1/wallets/${owner.walletId}/pay`, {
      token: by.token,
      body: { payment_requirements: paymentRequirements({ amount: amountMicro.toString() }) },
    });
    const wasAlive = alive(by);
    used(by);
    if (!wasAlive) {
      assert.equal(res.status, 401, `${by.kind} is dead: ${JSON.stringify(res.body)}`);
      return;
    }
    if (this.across) {
      assert.ok([403, 404].includes(res.status), `across tenants: ${res.status} ${JSON.stringify(res.body)}`);
      return;
    }
    if (by.kind === 'owner_session' || by.kind === 'service_pat') {
      assert.equal(res.status, 403, `a ${by.kind} does not pay: ${JSON.stringify(res.body)}`);
      return;
    }
    const holder = capHolder(by);
    if (holder?.capMicro != null && holder.spentMicro + amountMicro > holder.capMicro) {
      assert.equal(res.status, 429, JSON.stringify(res.body));
      assert.equal(res.body.error_code, 'MGMT_6014');
      return;
    }
    assert.equal(res.status, 200, `${by.kind} pays: ${JSON.stringify(res.body)}`);
    if (holder) holder.spentMicro += amountMicro;
  }
  toString = () => `Pay(${this.tenant}, ${this.bearer}, ${this.cents}¢${this.across ? ', across' : ''})`;
}

/** After every step: the invariants over everything the model and the database hold. */
async function checkInvariants(m: Model): Promise<void> {
  for (const tenant of m.tenants) {
    for (const b of [tenant.owner, ...tenant.bearers]) {
      if (b.singleUse && !b.singleUse.used) continue; // asking would spend it
      const res = await t.request('GET', '/v1/auth/whoami', { token: b.token });
      assert.equal(res.status === 200, alive(b), `${tenant.name} ${b.kind} ${b.id}: whoami ${res.status}`);
    }
    for (const b of tenant.bearers.filter((x) => x.kind === 'agent_pat')) {
      const rows = await t.db.knex('pat_spend_totals').where({ token_id: b.id }).sum('spent_micro as s');
      const spent = BigInt((rows[0]?.s as string | null) ?? '0');
      assert.equal(spent, b.spentMicro, `${b.id}: the day's total is what the model allowed`);
      if (b.capMicro !== null) assert.ok(spent <= b.capMicro, `${b.id}: within its cap`);
    }
    const endpoint = await t.db.knex('endpoints').where({ id: tenant.endpointId }).first('price_micro');
    assert.equal(BigInt(endpoint.price_micro), tenant.priceMicro, `${tenant.name}: the price only its owner set`);
  }
  for (const tenant of m.tenants) {
    for (const b of tenant.bearers.filter((x) => x.kind === 'child_pat')) {
      const row = await t.db.knex('api_tokens').where({ id: b.id }).first('parent_token_id');
      assert.equal(row.parent_token_id, b.parent!.id, `${b.id}: its parent is recorded`);
    }
  }
  // Lineage in the table itself: no live child of a revoked or expired parent, no child that outlives or
  // outranks its parent's expiry or daily cap.
  const violations = await t.db.knex.raw(`
    SELECT c.id FROM api_tokens c JOIN api_tokens p ON p.id = c.parent_token_id
    WHERE (c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > now())
           AND (p.revoked_at IS NOT NULL OR p.expires_at <= now()))
       OR (p.expires_at IS NOT NULL AND (c.expires_at IS NULL OR c.expires_at > p.expires_at)
           AND c.revoked_at IS NULL)
       OR (p.daily_cap_micro IS NOT NULL AND c.daily_cap_micro > p.daily_cap_micro)`);
  assert.deepEqual(violations.rows, [], 'credentials that outlive or outrank their parent');
  const signed = await readMetric(metricsPort, 'treasury_signer_signatures_total');
  const [{ n }] = (await t.db.knex('authorizations').count('* as n')) as [{ n: string }];
  assert.equal(signed, Number(n), 'every signature the signer made has its record');
}

async function newTenant(name: string): Promise<Tenant> {
  const who = privateKeyToAccount(generatePrivateKey());
  const signedIn = await t.request('POST', '/v1/identity/init', { body: await signInBody(t, undefined, who) });
  assert.equal(signedIn.status < 300, true, JSON.stringify(signedIn.body));
  const owner = signedIn.body as { session: string; account_id: string };
  const ownerBearer: Bearer = {
    kind: 'owner_session',
    id: owner.account_id,
    token: owner.session,
    parent: undefined,
    revoked: false,
    capMicro: null,
    spentMicro: 0n,
  };
  const treasury = await t.request('POST', '/v1/pats', { token: owner.session, body: { scope_type: 'treasury' } });
  assert.equal(treasury.status, 201, JSON.stringify(treasury.body));
  const wallet = await t.request('POST', '/v1/wallets', { token: treasury.body.pat, body: { label: name } });
  assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
  const seller = await t.request('POST', '/v1/sellers', { token: owner.session, body: { name: `seller ${name}` } });
  assert.equal(seller.status, 201, JSON.stringify(seller.body));
  const endpoint = await t.request('POST', `/v1/sellers/${seller.body.seller_id}/endpoints`, {
    token: owner.session,
    body: { path: '/data', price: '0.01' },
  });
  assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
  const servicePat: Bearer = {
    kind: 'service_pat',
    id: seller.body.pat_id,
    token: seller.body.pat,
    parent: undefined,
    revoked: false,
    capMicro: null,
    spentMicro: 0n,
  };
  return {
    name,
    who,
    sellerId: seller.body.seller_id,
    endpointId: endpoint.body.endpoint_id,
    priceMicro: 10_000n,
    treasuryAccountId: treasury.body.scope_id,
    owner: ownerBearer,
    walletId: wallet.body.id,
    bearers: [
      {
        kind: 'treasury_pat',
        id: treasury.body.id,
        token: treasury.body.pat,
        parent: undefined,
        revoked: false,
        capMicro: null,
        spentMicro: 0n,
      },
      servicePat,
    ],
  };
}

const commands = [
  fc
    .tuple(
      fc.nat(1),
      fc.option(fc.integer({ min: 1, max: 300 }), { nil: null }),
      fc.option(fc.constant(3600), { nil: null }),
    )
    .map(([i, cap, ttl]) => new MintAgentPat(i, cap, ttl)),
  fc.tuple(fc.nat(1), fc.option(fc.constant(600), { nil: null })).map(([i, ttl]) => new MintFromTreasuryPat(i, ttl)),
  fc.tuple(fc.nat(1), fc.nat(20)).map(([i, b]) => new Exchange(i, b)),
  fc.tuple(fc.nat(1), fc.nat(20)).map(([i, b]) => new Revoke(i, b)),
  fc.tuple(fc.nat(1), fc.nat(20), fc.boolean()).map(([i, b, once]) => new MintWithin(i, b, once)),
  fc.nat(1).map((i) => new RevokeAllSessions(i)),
  fc
    .tuple(fc.nat(1), fc.nat(20), fc.integer({ min: 0, max: 500 }), fc.boolean())
    .map(([i, b, c, x]) => new SetPrice(i, b, c, x)),
  fc
    .tuple(fc.nat(1), fc.nat(20), fc.integer({ min: 1, max: 120 }), fc.boolean())
    .map(([i, b, c, x]) => new Pay(i, b, c, x)),
];

describe('trust invariants, model-based (HTTP, PostgreSQL, SoftHSM; fast-check)', function () {
  this.timeout(900_000);

  before(async () => {
    metricsPort = await findFreePort();
    t = await startTestTreasury({ signerEnv: { TREASURY_SIGNER_METRICS_PORT: String(metricsPort) } });
  });
  after(async () => {
    await t?.stop();
  });

  it('no credential outlives or outranks its parent, spend stays within every cap, every signature has its record', async () => {
    const seed = Number(process.env.TREASURY_MODEL_SEED ?? 20261128);
    const path = process.env.TREASURY_MODEL_PATH;
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 30 }), async (cmds) => {
        const model: Model = { tenants: [await newTenant('a'), await newTenant('b')] };
        await fc.asyncModelRun(() => ({ model, real: { t } }), cmds);
      }),
      { seed, numRuns: Number(process.env.TREASURY_MODEL_RUNS ?? 4), ...(path ? { path } : {}), endOnFailure: true },
    );
  });
});
