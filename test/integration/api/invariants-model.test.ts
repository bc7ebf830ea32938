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
import { signInWithNewKey } from '../../support/sign-in.js';
import { findFreePort } from '../../support/signer-harness.js';
import { readMetric } from '../signer/signer-test-helpers.js';

/** A bearer the model holds, and what it expects of it. */
interface Bearer {
  kind: 'owner_session' | 'treasury_pat' | 'agent_pat' | 'exchanged_session';
  id: string;
  token: string;
  /** The credential it was made from (its revocation ends this one), if any. */
  parent: Bearer | undefined;
  revoked: boolean;
  /** Agent PATs: the daily cap in micro-USD (null: none) and what the model let them spend today. */
  capMicro: bigint | null;
  spentMicro: bigint;
}

interface Tenant {
  name: string;
  treasuryAccountId: string;
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

const alive = (b: Bearer): boolean => !b.revoked && (b.parent === undefined || alive(b.parent));
/** The PAT whose cap a bearer spends against (an agent PAT, or the PAT a session was exchanged from). */
const capHolder = (b: Bearer): Bearer | undefined =>
  b.kind === 'agent_pat' ? b : b.kind === 'exchanged_session' ? b.parent : undefined;

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
    if (from.kind !== 'agent_pat' || !alive(from)) {
      assert.ok(res.status === 401 || res.status === 403, `exchange from ${from.kind}: ${res.status}`);
      return;
    }
    assert.equal(res.status, 200, JSON.stringify(res.body));
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
    if (!alive(by)) {
      assert.equal(res.status, 401, `${by.kind} is dead: ${JSON.stringify(res.body)}`);
      return;
    }
    if (this.across) {
      assert.ok([403, 404].includes(res.status), `across tenants: ${res.status} ${JSON.stringify(res.body)}`);
      return;
    }
    if (by.kind === 'owner_session') {
      assert.equal(res.status, 403, 'an owner sign-in session does not pay; its PATs do');
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
      const res = await t.request('GET', '/v1/auth/whoami', { token: b.token });
      assert.equal(res.status === 200, alive(b), `${tenant.name} ${b.kind} ${b.id}: whoami ${res.status}`);
    }
    for (const b of tenant.bearers.filter((x) => x.kind === 'agent_pat')) {
      const rows = await t.db.knex('pat_spend_totals').where({ token_id: b.id }).sum('spent_micro as s');
      const spent = BigInt((rows[0]?.s as string | null) ?? '0');
      assert.equal(spent, b.spentMicro, `${b.id}: the day's total is what the model allowed`);
      if (b.capMicro !== null) assert.ok(spent <= b.capMicro, `${b.id}: within its cap`);
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
  const owner = await signInWithNewKey(t);
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
  return {
    name,
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
