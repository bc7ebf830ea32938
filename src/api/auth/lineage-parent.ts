/**
 * The I/O edge of credential-lineage.ts: reads the parent credential a child is to be made with (its row and
 * chain, credential-chain.ts) and turns the pure decision into the child or an AppError. A parent that is
 * not live (revoked, expired, or below a dead ancestor) makes nothing: `invalid_token`. A child reaching
 * further than its parent: 403 `lineage_exceeds_parent` with `refused` (`scope`, `expiry`, `daily_cap`,
 * `depth`).
 *
 * Defends: a credential minted with an authority that has already ended. Does not defend: who may mint at
 * all, which each route decides before calling this.
 */
import type { Knex } from 'knex';
import { AppError, REAUTHENTICATE } from '../errors/app-error.js';
import { chainIsLive, readChain, type ChainRow } from './credential-chain.js';
import { boundChild, type BoundedChild, type ChildRequest, type ParentCredential } from './credential-lineage.js';

/** The live credential `id` as a lineage parent, with its row; `invalid_token` when it is not live. */
export async function readParent(
  knex: Knex | Knex.Transaction,
  id: string,
  now: Date,
): Promise<{ parent: ParentCredential; row: ChainRow }> {
  const chain = await readChain(knex, { id });
  const row = chain[0];
  if (!row || !chainIsLive(chain, now)) throw new AppError('invalid_token', { recovery: REAUTHENTICATE });
  return {
    row,
    parent: {
      id: row.id,
      scopeType: row.scope_type,
      scopeId: row.scope_id,
      gate: row.gate,
      expiresAt: row.expires_at,
      dailyCapMicro: row.daily_cap_micro === null ? null : BigInt(row.daily_cap_micro),
      depth: chain.length,
    },
  };
}

/** The bounded child, or 403 `lineage_exceeds_parent` naming what the request asked beyond its parent. */
export function requireBoundChild(parent: ParentCredential | null, request: ChildRequest, now: Date): BoundedChild {
  const decision = boundChild(parent, request, now);
  if (decision.ok) return decision.child;
  if (decision.refusal === 'expiry') throw new AppError('invalid_token', { recovery: REAUTHENTICATE });
  throw new AppError('lineage_exceeds_parent', {
    fields: { refused: decision.refusal, parent_token_id: parent?.id ?? null },
  });
}
