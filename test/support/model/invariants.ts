/**
 * The invariants the trust-invariants model checks after every step, over everything the model and the
 * database hold (docs/security-model.md):
 * - no credential outlives or outranks its parent: each bearer authenticates exactly while the model says it
 *   is alive, and no row of `api_tokens` is live under a dead parent, later than its parent's expiry, above
 *   its parent's daily cap, or of another scope than its parent (src/api/auth/credential-lineage.ts: the same
 *   scope type and id — the gate scope only under a parent carrying it — or, under the owner's account-scoped
 *   sign-in session, any scope but an account's of that account); a PAT within an agent PAT shows exactly its
 *   cap (it spends under it), and each PAT's row shows the cap the model says it spends under;
 * - spend stays within every cap: each agent PAT's day total is what the model allowed, never above its cap
 *   (or, when the owner lowered the cap below it, above what it had spent then);
 * - what is priced is what the owner set: each seller's price is the one the model let through;
 * - nobody is owed money the platform did not collect: what a seller is owed, and what the platform books as
 *   collected and not paid out, is never more than its collection wallet holds on chain; every USDC that
 *   reached a seller's pay-to is a payout the platform recorded or a buyer's payment around the platform;
 * - no signature without its record: the signer's signature count is the recorded authorizations' and payouts'.
 */
import assert from 'node:assert/strict';
import { readTokenBalance } from '../chain-harness.js';
import { readMetric } from '../../integration/signer/signer-test-helpers.js';
import { alive, capHolder, type Model, type Real, type Tenant } from './model-world.js';

async function checkBearers({ t }: Real, tenant: Tenant): Promise<void> {
  for (const b of [tenant.owner, ...tenant.bearers]) {
    if (b.singleUse && !b.singleUse.used) continue; // asking would spend it
    const res = await t.request('GET', '/v1/auth/whoami', { token: b.token });
    assert.equal(res.status === 200, alive(b), `${tenant.name} ${b.kind} ${b.id}: whoami ${res.status}`);
  }
  for (const b of tenant.bearers.filter((x) => x.kind === 'child_pat')) {
    const row = await t.db.knex('api_tokens').where({ id: b.id }).first('parent_token_id');
    assert.equal(row.parent_token_id, b.parent!.id, `${b.id}: its parent is recorded`);
  }
}

async function checkSpendAndPrice({ t }: Real, tenant: Tenant): Promise<void> {
  for (const b of tenant.bearers.filter((x) => x.kind === 'agent_pat')) {
    const rows = await t.db.knex('pat_spend_totals').where({ token_id: b.id }).sum('spent_micro as s');
    const spent = BigInt((rows[0]?.s as string | null) ?? '0');
    assert.equal(spent, b.spentMicro, `${b.id}: the day's total is what the model allowed`);
    if (b.capMicro !== null)
      assert.ok(spent <= b.capMicro || spent <= b.spentAtCapChangeMicro, `${b.id}: within its cap`);
  }
  for (const b of tenant.bearers.filter((x) => x.kind === 'agent_pat' || x.kind === 'child_pat')) {
    const row = await t.db.knex('api_tokens').where({ id: b.id }).first('daily_cap_micro');
    const cap = capHolder(b)!.capMicro;
    assert.equal(row.daily_cap_micro, cap === null ? null : cap.toString(), `${b.id}: shows the cap it spends under`);
  }
  const endpoint = await t.db.knex('endpoints').where({ id: tenant.endpointId }).first('price_micro');
  assert.equal(BigInt(endpoint.price_micro), tenant.priceMicro, `${tenant.name}: the price only its owner set`);
}

async function checkMoney({ t, chain }: Real, tenant: Tenant): Promise<void> {
  const held = await readTokenBalance(chain, tenant.collectTo);
  const payables = await t.db
    .knex('seller_payables')
    .where({ seller_id: tenant.sellerId })
    .first('earned_micro', 'paid_micro');
  const owed = payables ? BigInt(payables.earned_micro) - BigInt(payables.paid_micro) : 0n;
  assert.ok(owed <= held, `${tenant.name}: owed ${owed} but its collection wallet holds ${held}`);
  const booked = await t.db
    .knex('platform_collection_wallets')
    .where({ seller_id: tenant.sellerId })
    .first('collected_micro', 'paid_micro');
  if (booked) {
    const unpaid = BigInt(booked.collected_micro) - BigInt(booked.paid_micro);
    assert.ok(unpaid <= held, `${tenant.name}: booked ${unpaid} as held, the chain shows ${held}`);
  }
  const received = await readTokenBalance(chain, tenant.payTo.address);
  const payouts = await t.db
    .knex('payout_flushes')
    .where({ seller_id: tenant.sellerId })
    .select('status', 'amount_micro');
  const sum = (statuses: string[]) =>
    payouts.filter((p) => statuses.includes(p.status)).reduce((a, p) => a + BigInt(p.amount_micro), 0n);
  const fromPlatform = received - tenant.paidAroundRaw;
  assert.ok(fromPlatform >= sum(['settled']), `${tenant.name}: a settled payout the chain does not show`);
  assert.ok(fromPlatform <= sum(['settled', 'submitted']), `${tenant.name}: USDC reached the pay-to with no payout`);
}

export async function checkInvariants(m: Model, r: Real): Promise<void> {
  for (const tenant of m.tenants) {
    await checkBearers(r, tenant);
    await checkSpendAndPrice(r, tenant);
    await checkMoney(r, tenant);
  }
  const violations = await r.t.db.knex.raw(`
    SELECT c.id, CASE
             WHEN c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > now())
                  AND (p.revoked_at IS NOT NULL OR p.expires_at <= now()) THEN 'live under a dead parent'
             WHEN p.expires_at IS NOT NULL AND (c.expires_at IS NULL OR c.expires_at > p.expires_at)
                  AND c.revoked_at IS NULL THEN 'outlives its parent'
             WHEN p.scope_type = 'account' THEN 'outside its parent account'
             WHEN c.kind = 'pat' AND p.scope_type = 'agent' THEN 'a cap other than its agent parent''s'
             WHEN c.gate AND NOT p.gate THEN 'the gate scope its parent lacks'
             WHEN c.scope_type <> p.scope_type OR c.scope_id <> p.scope_id THEN 'another scope than its parent'
             WHEN c.account_id IS DISTINCT FROM p.account_id THEN 'another account than its parent'
             ELSE 'above its parent''s daily cap'
           END AS broken
      FROM api_tokens c JOIN api_tokens p ON p.id = c.parent_token_id
     WHERE (c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > now())
            AND (p.revoked_at IS NOT NULL OR p.expires_at <= now()))
        OR (p.expires_at IS NOT NULL AND (c.expires_at IS NULL OR c.expires_at > p.expires_at)
            AND c.revoked_at IS NULL)
        OR (p.scope_type = 'account' AND (c.scope_type = 'account' OR c.account_id IS DISTINCT FROM p.scope_id))
        OR (c.kind = 'pat' AND p.scope_type = 'agent' AND c.daily_cap_micro IS DISTINCT FROM p.daily_cap_micro)
        OR (p.scope_type <> 'account' AND ((c.gate AND NOT p.gate)
            OR c.scope_type <> p.scope_type OR c.scope_id <> p.scope_id
            OR (p.account_id IS NOT NULL AND c.account_id IS DISTINCT FROM p.account_id)))
        OR (p.daily_cap_micro IS NOT NULL AND c.daily_cap_micro > p.daily_cap_micro)`);
  assert.deepEqual(violations.rows, [], 'credentials that outlive or outrank their parent');
  const signed = await readMetric(r.signerMetricsPort, 'treasury_signer_signatures_total');
  const [{ n }] = (await r.t.db.knex('authorizations').count('* as n')) as [{ n: string }];
  assert.equal(signed, Number(n), 'every signature the signer made has its record');
}
