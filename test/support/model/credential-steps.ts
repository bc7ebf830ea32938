/**
 * The model's credential steps: the owner mints agent PATs (capped, expiring or not) and PATs within them
 * (single-use, as `xx dashboard` hands one over), a Treasury PAT asks for a Treasury PAT, a PAT is exchanged
 * for a session, the owner changes a PAT's daily cap, revokes a PAT or ends every session. Each says what the
 * API must answer, given what the model holds (docs/security-model.md, Credential lineage).
 */
import assert from 'node:assert/strict';
import { signInBody } from '../sign-in.js';
import {
  alive,
  capHolder,
  depth,
  newBearer,
  pick,
  refusedAsDead,
  Step,
  use,
  type Model,
  type Real,
} from './model-world.js';

/** Mints an agent PAT with the owner's session. */
export class MintAgentPat extends Step {
  constructor(
    readonly tenant: number,
    readonly capCents: number | null,
    readonly expiresInSeconds: number | null,
  ) {
    super();
  }
  async act(m: Model, { t }: Real): Promise<void> {
    const tenant = m.tenants[this.tenant]!;
    const body = {
      scope_type: 'agent',
      ...(this.capCents === null ? {} : { daily_cap_usd: (this.capCents / 100).toFixed(2) }),
      ...(this.expiresInSeconds === null ? {} : { expires_in_seconds: this.expiresInSeconds }),
    };
    const res = await t.request('POST', '/v1/pats', { token: tenant.owner.token, body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    tenant.bearers.push(
      newBearer('agent_pat', res.body.id, res.body.pat, {
        capMicro: this.capCents === null ? null : BigInt(this.capCents) * 10_000n,
      }),
    );
  }
  override toString = () => `MintAgentPat(${this.tenant}, ${this.capCents}¢, ${this.expiresInSeconds}s)`;
}

/** A Treasury PAT asks for a Treasury PAT of its own account: refused, whatever it asks (it mints nothing). */
export class MintFromTreasuryPat extends Step {
  constructor(
    readonly tenant: number,
    readonly expiresInSeconds: number | null,
  ) {
    super();
  }
  async act(m: Model, { t }: Real): Promise<void> {
    const tenant = m.tenants[this.tenant]!;
    const pat = tenant.bearers.find((b) => b.kind === 'treasury_pat')!;
    const res = await t.request('POST', `/v1/treasuries/${tenant.treasuryAccountId}/pats`, {
      token: pat.token,
      body: this.expiresInSeconds === null ? {} : { expires_in_seconds: this.expiresInSeconds },
    });
    const refused = alive(pat) ? res.status === 403 : refusedAsDead(res);
    assert.ok(refused, `a Treasury PAT minting: ${res.status} ${JSON.stringify(res.body)}`);
  }
  override toString = () => `MintFromTreasuryPat(${this.tenant}, ${this.expiresInSeconds}s)`;
}

/**
 * The owner mints a PAT within one of the account's agent PATs (`parent_pat_id`; single-use or not): it acts as
 * the parent's agent, spends from the parent's cap and day total, and ends with it. Within a dead parent, or
 * past the deepest lineage, nothing is made.
 */
export class MintWithin extends Step {
  constructor(
    readonly tenant: number,
    readonly bearer: number,
    readonly singleUse: boolean,
  ) {
    super();
  }
  async act(m: Model, { t }: Real): Promise<void> {
    const tenant = m.tenants[this.tenant]!;
    const parent = pick(
      tenant.bearers.filter((b) => b.kind === 'agent_pat' || b.kind === 'child_pat'),
      this.bearer,
    );
    if (!parent) return;
    const res = await t.request('POST', '/v1/pats', {
      token: tenant.owner.token,
      body: { scope_type: 'agent', parent_pat_id: parent.id, ...(this.singleUse ? { single_use: true } : {}) },
    });
    if (!alive(parent) || depth(parent) >= 3) {
      assert.ok([403, 404].includes(res.status), `within a dead or deep parent: ${JSON.stringify(res.body)}`);
      return;
    }
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.parent_token_id, parent.id);
    tenant.bearers.push(
      newBearer('child_pat', res.body.id, res.body.pat, {
        parent,
        ...(this.singleUse ? { singleUse: { used: false } } : {}),
      }),
    );
  }
  override toString = () => `MintWithin(${this.tenant}, ${this.bearer}${this.singleUse ? ', single use' : ''})`;
}

/** Exchanges a PAT for a session: only a live PAT acting as an agent may; at most three live sessions per PAT. */
export class Exchange extends Step {
  constructor(
    readonly tenant: number,
    readonly bearer: number,
  ) {
    super();
  }
  async act(m: Model, { t }: Real): Promise<void> {
    const tenant = m.tenants[this.tenant]!;
    const from = pick(tenant.bearers, this.bearer);
    if (!from) return;
    const res = await t.request('POST', '/v1/identity/exchange-pat', { token: from.token });
    const wasAlive = alive(from);
    use(from);
    if (!(from.kind === 'agent_pat' || from.kind === 'child_pat') || !wasAlive) {
      assert.ok(refusedAsDead(res) || res.status === 403, `exchange from ${from.kind}: ${res.status}`);
      return;
    }
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const live = tenant.bearers.filter((b) => b.kind === 'exchanged_session' && b.parent === from && alive(b));
    if (live.length >= 3) live[0]!.revoked = true; // the oldest beyond three ends
    tenant.bearers.push(newBearer('exchanged_session', `session of ${from.id}`, res.body.session, { parent: from }));
  }
  override toString = () => `Exchange(${this.tenant}, ${this.bearer})`;
}

/**
 * The owner changes the daily cap a PAT spends under (null: none): that of the agent PAT it is or was made
 * within, which holds for that PAT and everything made within it, whose rows show it too. Asked of the PAT made
 * within another itself (`atChild`), it is 403 `lineage_exceeds_parent`: its cap is its parent's. A revoked
 * PAT's cap still changes (its row is the account's to keep honest).
 */
export class SetPatCap extends Step {
  constructor(
    readonly tenant: number,
    readonly bearer: number,
    readonly capCents: number | null,
    readonly atChild: boolean,
  ) {
    super();
  }
  async act(m: Model, { t }: Real): Promise<void> {
    const tenant = m.tenants[this.tenant]!;
    const chosen = pick(
      tenant.bearers.filter((b) => b.kind === 'agent_pat' || b.kind === 'child_pat'),
      this.bearer,
    );
    if (!chosen) return;
    const target = this.atChild ? chosen : capHolder(chosen)!;
    const daily_cap_usd = this.capCents === null ? null : (this.capCents / 100).toFixed(2);
    const res = await t.request('PATCH', `/v1/pats/${target.id}`, {
      token: tenant.owner.token,
      body: { daily_cap_usd },
    });
    if (target.kind === 'child_pat') {
      assert.deepEqual([res.status, res.body.error_code], [403, 'lineage_exceeds_parent'], JSON.stringify(res.body));
      return;
    }
    assert.equal(res.status, 200, JSON.stringify(res.body));
    target.capMicro = this.capCents === null ? null : BigInt(this.capCents) * 10_000n;
    target.spentAtCapChangeMicro = target.spentMicro;
  }
  override toString = () =>
    `SetPatCap(${this.tenant}, ${this.bearer}, ${this.capCents}¢${this.atChild ? ', at the child' : ''})`;
}

/** The owner revokes one of the account's PATs: it and everything made within it stop working at once. */
export class Revoke extends Step {
  constructor(
    readonly tenant: number,
    readonly bearer: number,
  ) {
    super();
  }
  async act(m: Model, { t }: Real): Promise<void> {
    const tenant = m.tenants[this.tenant]!;
    const kinds = ['agent_pat', 'child_pat', 'treasury_pat'];
    const target = pick(
      tenant.bearers.filter((b) => kinds.includes(b.kind)),
      this.bearer,
    );
    if (!target) return;
    const res = await t.request('DELETE', `/v1/pats/${target.id}`, { token: tenant.owner.token });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    target.revoked = true;
  }
  override toString = () => `Revoke(${this.tenant}, ${this.bearer})`;
}

/**
 * The owner ends every session of the account (and what was made within them), then signs in again with the
 * same key: the PATs it minted stay.
 */
export class RevokeAllSessions extends Step {
  constructor(readonly tenant: number) {
    super();
  }
  async act(m: Model, r: Real): Promise<void> {
    const tenant = m.tenants[this.tenant]!;
    const res = await r.t.request('POST', '/v1/auth/sessions/revoke-all', { token: tenant.owner.token });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    for (const b of tenant.bearers) if (b.kind === 'exchanged_session') b.revoked = true;
    tenant.owner.revoked = true;
    const { checkInvariants } = await import('./invariants.js');
    await checkInvariants(m, r);
    const again = await r.t.request('POST', '/v1/identity/init', {
      body: await signInBody(r.t, undefined, tenant.who),
    });
    assert.ok(again.status < 300, JSON.stringify(again.body));
    assert.equal(again.body.account_id, tenant.owner.id, 'the same account');
    tenant.owner = { ...tenant.owner, token: again.body.session, revoked: false };
  }
  override toString = () => `RevokeAllSessions(${this.tenant})`;
}
