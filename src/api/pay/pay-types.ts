/**
 * The words of the pay wing: what a caller asks (`CallContext`, `SpendPlan`), what a decision is taken on
 * (./pay-snapshot.ts) and what it yields (`Decided`: an outcome, the write that records it, and how the
 * wallet's snapshot changes once it is written). Types only.
 */
import type { PolicyDecision } from '../../../policy/policy-types.js';
import type { policyWindows } from '../../../policy/policy-windows.js';
import type { AuditHead } from '../audit/audit-ledger.js';
import type { AnyChainInfo } from '../../shared/chain-registry.js';
import type { AuthorizationTerms } from './pay-schemas.js';
import type { PaymentAuthorization } from './payment-authorization.js';
import type { DecisionWrite } from './store/decision-write.js';

export interface CallContext {
  accountId: string;
  walletId: string;
  actor: string;
  /**
   * When the bearer is a buyer (agent) PAT, or a session exchanged from one: the PAT it spends as, and its daily
   * cap as the bearer was read (perhaps cached: it picks the way the payment is decided). The cap enforced is
   * the one committed when the payment is decided under the PAT's lock or written (./store/decision-write.ts).
   */
  pat?: { tokenId: string; dailyCapMicro: bigint | null } | undefined;
  idempotencyKey: string | undefined;
  /** The route and body, for idempotency comparison. */
  request: unknown;
  /** The text the request's body was parsed from (its canonical JSON is remembered by it: ./request-hash.ts). */
  bodyText?: string | undefined;
}

/** A buyer PAT with a daily cap (spanning wallets). */
export interface CappedPat {
  tokenId: string;
  dailyCapMicro: bigint;
}

/** One payment or transfer, as the routes ask for it and before any wallet state is read. */
export interface SpendPlan {
  kind: 'pay' | 'transfer';
  scheme: 'exact' | 'upto';
  /** upto: the facilitator address the Permit2 witness binds the settlement to. */
  facilitator?: string | undefined;
  /** The chain the payment asks for; a transfer uses the wallet's own. */
  chain: AnyChainInfo | undefined;
  /** The token's EIP-712 domain from the challenge; a transfer uses the chain's configured USDC domain. */
  domain: { name: string; version: string } | undefined;
  to: string;
  amountMicro: bigint;
  capability: string | undefined;
  resource: string | undefined;
  validForSeconds: number;
  /** Nonce and window proposed by the caller (pay only), checked against validForSeconds. */
  terms?: AuthorizationTerms | undefined;
  /**
   * A Solana `exact` payment: the message built for it (./solana/build-exact-message.ts), its fee payer, and
   * the wallet address it was built for (the wallet's key must still be that one when it is decided).
   */
  solana?: { message: string; messageHash: string; feePayer: string; from: string } | undefined;
}

/** An earlier attempt with the same Idempotency-Key: signed (replay it) or reserved (sign it now). */
export interface PreviousAttempt {
  id: string;
  status: 'reserved' | 'signed';
  request_hash: string;
  response: PaymentAuthorization;
}

/** A reservation decided (and, once its write committed, counted), to be signed. */
export interface Reservation {
  kind: 'reserved';
  /** False when an earlier attempt with the same Idempotency-Key reserved it (this request resumes it). */
  fresh: boolean;
  payment: PaymentAuthorization;
  accountKeyRef: string;
  walletKeyRef: string;
  /** The EIP-712 domain of an EVM payment (none on Solana). */
  domain: { name: string; version: string; chainId: number; verifyingContract: `0x${string}` } | undefined;
  windows: ReturnType<typeof policyWindows>;
}

/** What a decision comes to: a denial, the replay of a signed attempt, or a reservation to sign. */
export type DecisionOutcome =
  | { kind: 'denied'; decisionId: string; decision: PolicyDecision }
  | { kind: 'replayed'; payment: PaymentAuthorization }
  | Reservation;

/** How a wallet's snapshot changes once a decision's write committed: its new audit head, and a payment's amount and time. */
export interface SnapshotChange {
  auditHead: AuditHead;
  spentMicro?: bigint;
  at: Date;
}

/** A decision taken on a snapshot, before it is written. */
export interface Decided {
  outcome: DecisionOutcome;
  /** What records it (none for a replay or a resumed reservation). */
  write?: DecisionWrite;
  change?: SnapshotChange;
}
