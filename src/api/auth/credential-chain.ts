/**
 * Reads a credential together with its ancestors (`parent_token_id`, up to a root) in one statement: a
 * recursive CTE bounded at MAX_LINEAGE_DEPTH + 1 rows, so a chain longer than the lineage allows is seen as
 * such and never walked further. The authenticator judges a bearer by the whole chain, and a new child is
 * bounded by its parent's row (credential-lineage.ts).
 *
 * Defends: a credential used after any credential above it was revoked or expired. Does not defend: a
 * chain it is not asked about; revocation itself (revoke-lineage.ts).
 */
import type { Knex } from 'knex';
import { MAX_LINEAGE_DEPTH } from './credential-lineage.js';
import type { ScopeType, SessionOrigin } from './principal.js';

export interface ChainRow {
  id: string;
  kind: 'api_key' | 'pat' | 'session';
  scope_type: ScopeType;
  scope_id: string;
  gate: boolean;
  single_use: boolean;
  expires_at: Date | null;
  used_at: Date | null;
  revoked_at: Date | null;
  account_id: string | null;
  daily_cap_micro: string | null;
  session_origin: SessionOrigin | null;
  parent_token_id: string | null;
  /** 0 for the credential asked about, 1 for its parent, … */
  depth: number;
}

const COLUMNS =
  'id, kind, scope_type, scope_id, gate, single_use, expires_at, used_at, revoked_at, account_id, daily_cap_micro, session_origin, parent_token_id';

/** The credential matching `where` (by token hash and kind, or by id) and its ancestors, nearest first. */
export async function readChain(
  knex: Knex | Knex.Transaction,
  where: { tokenHash: string; kind: ChainRow['kind'] } | { id: string },
): Promise<ChainRow[]> {
  const start =
    'id' in where
      ? { sql: 'id = ?', params: [where.id] }
      : { sql: 'token_hash = ? AND kind = ?', params: [where.tokenHash, where.kind] };
  const result = (await knex.raw(
    `WITH RECURSIVE chain AS (
       SELECT ${COLUMNS}, 0 AS depth FROM api_tokens WHERE ${start.sql}
       UNION ALL
       SELECT ${COLUMNS.split(', ')
         .map((c) => `p.${c}`)
         .join(', ')}, c.depth + 1
         FROM api_tokens p JOIN chain c ON p.id = c.parent_token_id
        WHERE c.depth < ?
     )
     SELECT * FROM chain ORDER BY depth`,
    [...start.params, MAX_LINEAGE_DEPTH],
  )) as { rows: ChainRow[] };
  return result.rows;
}

/** Whether every credential of the chain is live at `now` and the chain ends at a root within the bound. */
export function chainIsLive(chain: readonly ChainRow[], now: Date): boolean {
  if (chain.length === 0 || chain.length > MAX_LINEAGE_DEPTH) return false;
  const top = chain[chain.length - 1]!;
  if (top.parent_token_id !== null) return false; // deeper than the lineage allows, or a parent row gone
  return chain.every((row) => row.revoked_at === null && (row.expires_at === null || row.expires_at > now));
}

/**
 * The agent PAT whose daily cap and daily total a credential's spending counts against: the topmost agent
 * PAT of the unbroken run of agent-scoped credentials starting at the credential. Undefined when none.
 */
export function spendingPatOf(chain: readonly ChainRow[]): ChainRow | undefined {
  let found: ChainRow | undefined;
  for (const row of chain) {
    if (row.scope_type !== 'agent' || row.scope_id !== chain[0]!.scope_id) break;
    if (row.kind === 'pat') found = row;
  }
  return found;
}
