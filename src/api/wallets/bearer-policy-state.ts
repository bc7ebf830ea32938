/**
 * The `policy_state` GET /v1/auth/whoami shows a bearer (docs/adr/0012-owner-signed-policies.md):
 * `owner_signed` when every active wallet it reaches — a Treasury bearer's account, an agent bearer's
 * agent's account, an owner session's agents' accounts — holds an owner-signed policy the signer accepted
 * (and there is at least one); `ceilings_only` otherwise. Read from the API's copy of the accepted documents
 * (wallets.policy_version), in one query; other bearers (operator, service, gate) have none.
 *
 * Defends: nothing — it is a summary for people and tools. What the signer holds for one wallet is
 * GET /v1/wallets/{id}/policy (`owner_policy`, asked of the signer itself).
 */
import type { Knex } from 'knex';
import type { Principal } from '../auth/principal.js';
import type { PolicyState } from '../../shared/api-responses/wallet-responses.js';

/** The Treasury accounts a bearer's wallets are in, as a subquery; undefined for a bearer that has none. */
function accountsOf(knex: Knex, p: Extract<Principal, { kind: 'token' }>): Knex.QueryBuilder | string[] | undefined {
  if (p.scopeType === 'treasury') return [p.scopeId];
  if (p.scopeType === 'agent') return knex('agents').where({ id: p.scopeId }).select('treasury_account_id');
  if (p.scopeType === 'account' && p.accountId !== null)
    return knex('agents').where({ account_id: p.accountId }).select('treasury_account_id');
  return undefined;
}

export function bearerPolicyState(knex: Knex): (principal: Principal) => Promise<PolicyState | undefined> {
  return async (principal) => {
    if (principal.kind !== 'token') return undefined;
    const accounts = accountsOf(knex, principal);
    if (!accounts) return undefined;
    const row = (await knex('wallets')
      .where({ status: 'active' })
      .whereIn('account_id', accounts)
      .first(
        knex.raw('count(*)::int AS total'),
        knex.raw('(count(*) FILTER (WHERE policy_version IS NULL))::int AS unsigned'),
      )) as { total: number; unsigned: number };
    return row.total > 0 && row.unsigned === 0 ? 'owner_signed' : 'ceilings_only';
  };
}
