/**
 * Revocation over a whole subtree: revoking credentials revokes, in the same transaction, every credential
 * made with their authority (`parent_token_id`, recursively). A recursive CTE collects the subtree (bounded:
 * the lineage is at most MAX_LINEAGE_DEPTH deep, the walk goes one further) and one UPDATE ends what is still
 * live, keeping an earlier revocation's time. Returns every id of the subtree, for the bearer cache.
 *
 * Defends: a descendant outliving its ancestor's revocation in the database (the authenticator refuses it
 * anyway by reading the chain; this keeps the rows honest for lists and audits). Does not defend: a credential
 * with no recorded parent, which is a root by definition.
 */
import type { Knex } from 'knex';
import { MAX_LINEAGE_DEPTH } from './credential-lineage.js';

/** Revokes `rootIds` and all their descendants at `at`; returns the ids of the whole subtree. */
export async function revokeSubtree(trx: Knex.Transaction, rootIds: readonly string[], at: Date): Promise<string[]> {
  if (rootIds.length === 0) return [];
  const result = (await trx.raw(
    `WITH RECURSIVE subtree AS (
       SELECT id, 0 AS depth FROM api_tokens WHERE id = ANY(?::text[])
       UNION ALL
       SELECT t.id, s.depth + 1 FROM api_tokens t JOIN subtree s ON t.parent_token_id = s.id
        WHERE s.depth < ?
     ), ended AS (
       UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?)
        WHERE id IN (SELECT id FROM subtree) RETURNING id
     )
     SELECT id FROM ended`,
    [[...rootIds], MAX_LINEAGE_DEPTH, at],
  )) as { rows: Array<{ id: string }> };
  return result.rows.map((r) => r.id);
}
