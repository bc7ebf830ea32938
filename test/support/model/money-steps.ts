/**
 * The model's money steps: a bearer pays from a tenant's wallet (its own tenant's or, across, the other's), a
 * bearer sets the price of a tenant's endpoint, a buyer pays a seller on chain — through the collection wallet
 * its paywall names, or around it to the seller's own pay-to — and the seller reports it, and a bearer asks for
 * a payout flush. Each says what the API must answer (docs/security-model.md: credential lineage, who may call
 * what, the merchant-of-record money flow).
 */
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { anvilDevAccount, transferUsdc } from '../chain-harness.js';
import {
  alive,
  capHolder,
  pick,
  refusedAsDead,
  Step,
  use,
  type Bearer,
  type Model,
  type Real,
  type Tenant,
} from './model-world.js';

/** The anvil accounts the model's buyers pay from (funded once by the suite). */
export const BUYER_ACCOUNTS = [5, 6] as const;

/** A bearer of the tenant (0: the owner's session, then its bearers in order). */
const bearerOf = (tenant: Tenant, index: number): Bearer | undefined =>
  index === 0 ? tenant.owner : pick(tenant.bearers, index - 1);

/**
 * A step one bearer takes on a tenant's wallet or seller: a bearer of that tenant, or of the other one
 * (`across`); `actAs` says what it must get, given whether the bearer was alive when it asked.
 */
abstract class BearerStep extends Step {
  constructor(
    readonly tenant: number,
    readonly bearer: number,
    readonly across: boolean,
  ) {
    super();
  }
  abstract actAs(target: Tenant, by: Bearer, wasAlive: boolean, r: Real): Promise<void>;
  async act(m: Model, r: Real): Promise<void> {
    const by = bearerOf(m.tenants[this.across ? 1 - this.tenant : this.tenant]!, this.bearer);
    if (!by) return;
    const wasAlive = alive(by);
    use(by);
    await this.actAs(m.tenants[this.tenant]!, by, wasAlive, r);
  }
}

/** A payment of `cents` from the tenant's wallet with one of its bearers (or the other tenant's, across). */
export class Pay extends BearerStep {
  constructor(
    tenant: number,
    bearer: number,
    readonly cents: number,
    across: boolean,
  ) {
    super(tenant, bearer, across);
  }
  async actAs(owner: Tenant, by: Bearer, wasAlive: boolean, { t }: Real): Promise<void> {
    const amountMicro = BigInt(this.cents) * 10_000n;
    const res = await t.request('POST', `/v1/wallets/${owner.walletId}/pay`, {
      token: by.token,
      body: { payment_requirements: paymentRequirements({ amount: amountMicro.toString() }) },
    });
    if (!wasAlive) return assert.ok(refusedAsDead(res), `${by.kind} is dead: ${JSON.stringify(res.body)}`);
    if (this.across) {
      assert.ok([403, 404].includes(res.status), `across tenants: ${res.status} ${JSON.stringify(res.body)}`);
      return;
    }
    if (by.kind === 'owner_session' || by.kind === 'service_pat') {
      return assert.equal(res.status, 403, `a ${by.kind} does not pay: ${JSON.stringify(res.body)}`);
    }
    const holder = capHolder(by);
    if (holder?.capMicro != null && holder.spentMicro + amountMicro > holder.capMicro) {
      assert.equal(res.status, 429, JSON.stringify(res.body));
      return assert.equal(res.body.error_code, 'MGMT_6014');
    }
    assert.equal(res.status, 200, `${by.kind} pays: ${JSON.stringify(res.body)}`);
    if (holder) holder.spentMicro += amountMicro;
  }
  override toString = () => `Pay(${this.tenant}, ${this.bearer}, ${this.cents}¢${this.across ? ', across' : ''})`;
}

/**
 * A bearer sets the price of a tenant's `/data` (its own tenant's, or across): only the owner's sign-in session
 * and the seller's service PAT may; everything else is refused and the price stays.
 */
export class SetPrice extends BearerStep {
  constructor(
    tenant: number,
    bearer: number,
    readonly cents: number,
    across: boolean,
  ) {
    super(tenant, bearer, across);
  }
  async actAs(owner: Tenant, by: Bearer, wasAlive: boolean, { t }: Real): Promise<void> {
    const res = await t.request('PATCH', `/v1/sellers/${owner.sellerId}/endpoints/${owner.endpointId}`, {
      token: by.token,
      body: { price: (this.cents / 100).toFixed(2) },
    });
    if (!wasAlive || this.across || !(by.kind === 'owner_session' || by.kind === 'service_pat')) {
      assert.ok(res.status >= 400 && res.status < 500, `${by.kind} set a price: ${JSON.stringify(res.body)}`);
      if (!wasAlive) assert.ok(refusedAsDead(res), JSON.stringify(res.body));
      return;
    }
    assert.equal(res.status, 200, JSON.stringify(res.body));
    owner.priceMicro = BigInt(this.cents) * 10_000n;
  }
  override toString = () => `SetPrice(${this.tenant}, ${this.bearer}, ${this.cents}¢${this.across ? ', across' : ''})`;
}

/**
 * A buyer sends `cents` of USDC on chain — to the collection wallet the seller's paywall names, or around it to
 * the seller's own pay-to — and the seller reports the transaction to its ledger (accepted for checking).
 */
export class BuyerPays extends Step {
  constructor(
    readonly tenant: number,
    readonly buyer: number,
    readonly cents: number,
    readonly around: boolean,
  ) {
    super();
  }
  async act(m: Model, { t, chain }: Real): Promise<void> {
    const seller = m.tenants[this.tenant]!;
    const buyer = anvilDevAccount(BUYER_ACCOUNTS[this.buyer % BUYER_ACCOUNTS.length]!);
    const to: Address = this.around ? seller.payTo.address : seller.collectTo;
    const amount = BigInt(this.cents) * 10_000n;
    const hash = await transferUsdc(chain, buyer, to, amount);
    if (this.around) seller.paidAroundRaw += amount;
    const service = seller.bearers.find((b) => b.kind === 'service_pat')!;
    const res = await t.request('POST', '/v1/ledger', {
      token: service.token,
      body: { network: chain.network, tx_hash: hash, payer: buyer.address, amount: amount.toString() },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  }
  override toString = () =>
    `BuyerPays(${this.tenant}, buyer ${this.buyer}, ${this.cents}¢${this.around ? ', around' : ''})`;
}

/** A bearer asks for a payout flush of a tenant's seller: the owner's sign-in session only. */
export class Flush extends BearerStep {
  async actAs(seller: Tenant, by: Bearer, wasAlive: boolean, { t }: Real): Promise<void> {
    const res = await t.request('POST', `/v1/sellers/${seller.sellerId}/payouts/flush`, { token: by.token });
    if (!wasAlive || this.across || by.kind !== 'owner_session') {
      assert.ok(res.status >= 400 && res.status < 500, `${by.kind} flushed: ${JSON.stringify(res.body)}`);
      return;
    }
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
  override toString = () => `Flush(${this.tenant}, ${this.bearer}${this.across ? ', across' : ''})`;
}

/** The platform's verifier catches up: the seller's reported rows leave `pending` (within 15 s). */
export class AwaitVerification extends Step {
  constructor(readonly tenant: number) {
    super();
  }
  async act(m: Model, { t }: Real): Promise<void> {
    const seller = m.tenants[this.tenant]!;
    const deadline = Date.now() + 15_000;
    for (;;) {
      const [{ n }] = (await t.db
        .knex('ledger_entries')
        .where({ seller_id: seller.sellerId, status: 'pending' })
        .count('* as n')) as [{ n: string }];
      if (Number(n) === 0) return;
      assert.ok(Date.now() < deadline, `${seller.name}: ${n} ledger rows still pending`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  override toString = () => `AwaitVerification(${this.tenant})`;
}
