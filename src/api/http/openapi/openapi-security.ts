/**
 * The bearer kinds of the OpenAPI document and which of them each route takes. Every kind is an HTTP bearer
 * token; they differ by what issued them and what they may do (docs/security-model.md): the operator token,
 * a Treasury PAT or legacy api key, an agent PAT, an account session (`as_…`), a seller's service PAT.
 * A route's `security` lists the kinds it admits (any one of them); `none` routes list none.
 *
 * Defends: a client sending a bearer of a kind the route refuses. Does not defend: which account's objects
 * the bearer reaches (that is the route's own check).
 */
import type { Auth } from './catalog-entry.js';

export const SECURITY_SCHEMES = {
  operatorToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'The operator token (TREASURY_ADMIN_TOKEN): mints Treasury accounts, verifies banking.',
  },
  treasuryToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'A Treasury-scoped PAT (xx_pat_…) or the legacy account api key (xx_treasury_sk_…).',
  },
  agentPat: {
    type: 'http',
    scheme: 'bearer',
    description: "An agent's PAT (xx_pat_…, agent scope): acts as that agent only, within its daily cap.",
  },
  session: {
    type: 'http',
    scheme: 'bearer',
    description:
      'An account session (as_…): from a SIWE / SIWS sign-in (the owner), or exchanged from an agent PAT (acts as that agent).',
  },
  servicePat: {
    type: 'http',
    scheme: 'bearer',
    description: "A seller's service PAT (xx_pat_…, service scope): the seller middleware's credential.",
  },
  gatePat: {
    type: 'http',
    scheme: 'bearer',
    description:
      "A PAT carrying the gate scope (gate-only, or a Treasury PAT with gate: true): the managed proxy's credential for its account's mpp sellers.",
  },
} as const;

type Scheme = keyof typeof SECURITY_SCHEMES;

const ADMITS: Record<Auth, Scheme[]> = {
  none: [],
  operator: ['operatorToken'],
  treasury: ['treasuryToken'],
  treasury_or_operator: ['treasuryToken', 'operatorToken'],
  treasury_or_agent: ['treasuryToken', 'agentPat', 'session'],
  session: ['session'],
  owner_session: ['session'],
  owner_session_or_service: ['session', 'servicePat'],
  session_or_agent: ['session', 'agentPat'],
  service: ['servicePat'],
  gate: ['gatePat'],
  agent: ['agentPat'],
  any: ['operatorToken', 'treasuryToken', 'agentPat', 'session', 'servicePat', 'gatePat'],
};

/** The route's security requirements: one alternative per admitted bearer kind (empty: no bearer). */
export function securityOf(auth: Auth): Array<Record<string, string[]>> {
  return ADMITS[auth].map((scheme) => ({ [scheme]: [] }));
}
