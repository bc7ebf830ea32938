/**
 * Who a request's bearer is, as the authenticator resolves it (./authenticator.ts): the operator, or a
 * token with its kind, scope, account, daily cap, what a session was made from, and the credentials above it
 * (./credential-lineage.ts). Types only, shared by the credential store and chain below the authenticator
 * and by the routes and services above it.
 */
export type ScopeType = 'treasury' | 'agent' | 'service' | 'account' | 'gate';

export type Principal =
  | { kind: 'admin'; actor: 'admin' }
  | {
      kind: 'token';
      actor: string;
      tokenId: string;
      tokenKind: 'api_key' | 'pat' | 'session';
      scopeType: ScopeType;
      scopeId: string;
      /** The PAT carries the gate scope (its account's gate: catalogue and ledger reports; docs/gate.md). */
      gate: boolean;
      /** The platform account that owns the token (sessions and account-minted PATs). */
      accountId: string | null;
      /** Buyer (agent) PATs and the sessions exchanged from them: the PAT's daily cap in micro-USD, if any. */
      dailyCapMicro: bigint | null;
      /** Sessions: a SIWE / SIWS sign-in, or an exchanged agent PAT. Null for PATs and api keys. */
      sessionOrigin: SessionOrigin | null;
      /** The credential this one was made with (credential-lineage.ts); an exchanged session's PAT. */
      parentTokenId: string | null;
      /**
       * The agent PAT whose daily cap and daily total this bearer's spending counts against: the PAT itself,
       * or the topmost agent PAT above it (an exchanged session's PAT, a handoff PAT's parent).
       */
      spendingPatId: string | null;
    };

export type SessionOrigin = 'sign_in' | 'pat_exchange';
