/**
 * Credential lineage, decided in one place (docs/security-model.md, "Credential lineage"): given the
 * authority a new credential is made with — a parent credential, or a root (the account's owner signing
 * in, the operator) — and what is asked for, returns the bounded child or a typed refusal. Pure: no clock
 * but the one passed, no I/O.
 *
 * Rules for a parent credential (a root bounds nothing):
 * - scope: the child's scope is the parent's (same scope type and id); the gate scope only if the parent
 *   carries it. An account-scoped parent (the owner's sign-in session) holds every scope of its own account:
 *   its child names that account (`accountId`, the account the caller resolved the child's scope in). A wider
 *   scope is refused (`scope`).
 * - expiry: a parent that expires gives its child at most that expiry; a longer or open-ended request is
 *   cut to the parent's (the child is bounded, not refused). A parent already past its expiry makes nothing.
 * - daily cap: none asked inherits the parent's. A child of an agent PAT spends from its parent's daily
 *   total (credential-chain.ts `spendingPatOf`), so it has exactly its parent's cap and children cannot
 *   multiply it; under any other parent with a cap, the child's is at most that cap. Otherwise `daily_cap`.
 * - depth: at most MAX_LINEAGE_DEPTH credentials from a root; deeper is refused (`depth`).
 *
 * Defends: a credential outliving or outranking what made it. Does not defend: a root's choices (an owner
 * or the operator may mint any credential of their account), nor a revocation, which the authenticator and
 * revoke-lineage.ts enforce over the whole chain.
 */
import type { ScopeType } from './principal.js';

/** Credentials from a root to the deepest allowed descendant (root → PAT → handoff PAT → session). */
export const MAX_LINEAGE_DEPTH = 4;

export interface LineageScope {
  scopeType: ScopeType;
  scopeId: string;
  gate: boolean;
}

/** The credential whose authority the child is made with. `depth`: 1 for a credential without parent. */
export interface ParentCredential extends LineageScope {
  id: string;
  expiresAt: Date | null;
  dailyCapMicro: bigint | null;
  depth: number;
}

export interface ChildRequest extends LineageScope {
  /** The account the child's scope belongs to; what an account-scoped parent is checked against. */
  accountId?: string | undefined;
  expiresAt: Date | null;
  /** undefined: not asked (inherits the parent's cap); null: explicitly none. */
  dailyCapMicro: bigint | null | undefined;
}

export interface BoundedChild extends LineageScope {
  parentId: string | null;
  expiresAt: Date | null;
  dailyCapMicro: bigint | null;
}

export type LineageRefusal = 'scope' | 'expiry' | 'daily_cap' | 'depth';

export type LineageDecision = { ok: true; child: BoundedChild } | { ok: false; refusal: LineageRefusal };

const earlier = (a: Date | null, b: Date | null): Date | null => {
  if (a === null) return b;
  if (b === null) return a;
  return a <= b ? a : b;
};

function withinScope(parent: LineageScope, child: ChildRequest): boolean {
  if (parent.scopeType === 'account') return child.scopeType !== 'account' && child.accountId === parent.scopeId;
  if (child.gate && !parent.gate) return false;
  if (child.scopeType === parent.scopeType) return child.scopeId === parent.scopeId;
  return false;
}

/**
 * A child of an agent credential spends from its parent's daily total, under its parent's cap: it may ask
 * for no other cap. Any other parent with a cap gives at most that cap; one without gives any.
 */
function capWithin(parent: ParentCredential, cap: bigint | null): boolean {
  if (parent.scopeType === 'agent') return cap === parent.dailyCapMicro;
  if (parent.dailyCapMicro === null) return true;
  return cap !== null && cap <= parent.dailyCapMicro;
}

/** The child a parent credential (or a root, `null`) may make, or why not. */
export function boundChild(parent: ParentCredential | null, request: ChildRequest, now: Date): LineageDecision {
  if (parent === null) {
    return {
      ok: true,
      child: {
        ...scopeOf(request),
        parentId: null,
        expiresAt: request.expiresAt,
        dailyCapMicro: request.dailyCapMicro ?? null,
      },
    };
  }
  if (parent.depth >= MAX_LINEAGE_DEPTH) return { ok: false, refusal: 'depth' };
  if (!withinScope(parent, request)) return { ok: false, refusal: 'scope' };
  if (parent.expiresAt !== null && parent.expiresAt <= now) return { ok: false, refusal: 'expiry' };
  const dailyCapMicro = request.dailyCapMicro === undefined ? parent.dailyCapMicro : request.dailyCapMicro;
  if (!capWithin(parent, dailyCapMicro)) return { ok: false, refusal: 'daily_cap' };
  return {
    ok: true,
    child: {
      ...scopeOf(request),
      parentId: parent.id,
      expiresAt: earlier(request.expiresAt, parent.expiresAt),
      dailyCapMicro,
    },
  };
}

const scopeOf = (s: LineageScope): LineageScope => ({ scopeType: s.scopeType, scopeId: s.scopeId, gate: s.gate });
