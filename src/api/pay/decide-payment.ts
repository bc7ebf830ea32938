/**
 * The pay wing's decision: snapshot + request + clock → decision, with no I/O. On the wallet's snapshot it
 * settles an earlier attempt with the same Idempotency-Key (replay it, resume its reservation, or 409),
 * checks the wallet's chain and key, evaluates the policy (policy/evaluate-policy.ts — nothing of the policy
 * is decided here) and builds what records the outcome: a denial's decision and audit rows, or the
 * reservation's authorization (nonce and window fixed, no signature yet), spend and audit row at the
 * snapshot's head + 1 — and how the snapshot changes once that is written.
 *
 * Defends: a signature under another wallet's key or chain (the chain asked for must be the wallet's); an
 * Idempotency-Key reused for another body or after a rotation (409); a decision that cannot be repeated —
 * the identifiers, nonce and validity window it fixes come from `mint`, so the same inputs and mint give the
 * same decision (test/unit/pay/decide-payment.test.ts).
 * Does not defend: a stale snapshot — the audit row at head + 1 fails the write then, and the caller decides
 * again on a fresh read (docs/adr/0006).
 */
import { x402UptoPermit2ProxyAddress } from '@x402/evm';
import { counterpartyKey } from '../../../policy/counterparty-address.js';
import { evaluateParsedPolicy } from '../../../policy/evaluate-policy.js';
import { formatUsd } from '../../../policy/money.js';
import type { PolicyDecision, SpendRequest } from '../../../policy/policy-types.js';
import { policyWindows } from '../../../policy/policy-windows.js';
import { buildAuditRow } from '../audit/audit-ledger.js';
import type { AnyChainInfo, ChainRegistry } from '../../shared/chain-registry.js';
import { AppError } from '../errors/app-error.js';
import type { PaySnapshot } from './pay-snapshot.js';
import type { CallContext, Decided, PreviousAttempt, Reservation, SpendPlan } from './pay-types.js';
import { paymentTerms, type PaymentAuthorization } from './payment-authorization.js';
import type { DecisionRow } from './store/decision-write.js';
import { isoDate } from './store/pay-statements.js';
import { parsedPolicyOf } from './snapshot-policy.js';

/** Where a decision's fresh identifiers and signed terms come from (randomness and the wall clock in production). */
export interface DecisionMint {
  /** A new identifier with this prefix (`pd_` decisions, `auth_` authorizations). */
  id(prefix: 'pd_' | 'auth_'): string;
  /** The signed message's validity window and nonce (./authorization-terms.ts): the caller's, checked, or new ones. */
  window(plan: SpendPlan): { validAfter: string; validBefore: string; nonce: string };
}

export interface DecisionInput {
  snapshot: PaySnapshot;
  plan: SpendPlan;
  /** Who pays and under which Idempotency-Key. */
  payer: Pick<CallContext, 'actor' | 'idempotencyKey' | 'pat'>;
  /** SHA-256 of the route and body when there is an Idempotency-Key (compared with an earlier attempt's). */
  requestHash: string | null;
  /** The wallet's advisory-lock key (decimal), carried by the write. */
  lockKey: string;
  chains: Pick<ChainRegistry, 'resolveAny'>;
  now: Date;
  mint: DecisionMint;
}

/** The signing keys, domain and windows of a reservation: what `Reservation` carries beside the payment. */
type SigningKeys = Omit<Reservation, 'kind' | 'fresh' | 'payment'>;

/** The outcome, the write that records it, and what the snapshot becomes once it is written. */
export function decidePayment(input: DecisionInput): Decided {
  const { snapshot, plan, now, mint } = input;
  const { wallet, state, previous } = snapshot;
  const { chain, keys } = signingKeys(input);
  if (previous) return { outcome: resumePrevious(previous, input, keys) };

  const request: SpendRequest = {
    kind: plan.kind,
    amountMicro: plan.amountMicro,
    to: plan.to,
    capability: plan.capability,
  };
  // Parsed once per snapshot read, not per payment (./snapshot-policy.ts); the same rules decide.
  const decision = evaluateParsedPolicy(parsedPolicyOf(wallet.policy), request, state, now);
  const decisionId = mint.id('pd_');
  if (!decision.allowed) return denied(input, decisionId, decision);
  return reserved(input, { decisionId, decision, chain, keys });
}

/**
 * The wallet's chain (the one asked for must be it), its keys and, on an EVM chain, the EIP-712 domain; a
 * revoked wallet signs nothing. A Solana wallet signs only the message built for its payment: a transfer (no
 * message) is refused with `transfer_not_supported`.
 */
function signingKeys({ snapshot, plan, chains, now }: DecisionInput): { chain: AnyChainInfo; keys: SigningKeys } {
  const { wallet } = snapshot;
  const walletChain = chains.resolveAny(wallet.network);
  if (!walletChain) throw new AppError('network_not_supported', { fields: { network: wallet.network } });
  const chain = plan.chain ?? walletChain;
  if (chain.network !== wallet.network) {
    throw new AppError('network_not_supported', {
      message: `This wallet is on ${wallet.network}; the payment asks for ${chain.network}.`,
      fields: { network: chain.network, wallet_network: wallet.network },
    });
  }
  if (!wallet.wallet_key_ref) throw new AppError('wallet_revoked');
  if (chain.family === 'svm' && !plan.solana)
    throw new AppError('transfer_not_supported', { fields: { network: chain.network } });
  // The message names the address it was built for as the transfer's authority: a key rotated since cannot sign it.
  if (plan.solana && plan.solana.from !== wallet.address)
    throw new AppError('wallet_key_rotated', { fields: { wallet_id: wallet.id } });
  const domain =
    chain.family === 'evm'
      ? {
          name: plan.domain?.name ?? chain.usdcName,
          version: plan.domain?.version ?? chain.usdcVersion,
          chainId: chain.chainId,
          verifyingContract: chain.usdc,
        }
      : undefined;
  const windows = policyWindows(now);
  return {
    chain,
    keys: { accountKeyRef: wallet.account_key_ref, walletKeyRef: wallet.wallet_key_ref, domain, windows },
  };
}

/** An earlier attempt with the same Idempotency-Key: replayed when signed, resumed when only reserved, else 409. */
function resumePrevious(
  previous: PreviousAttempt,
  { snapshot, payer, requestHash }: DecisionInput,
  keys: SigningKeys,
): Decided['outcome'] {
  if (previous.request_hash !== requestHash)
    throw new AppError('idempotency_key_conflict', { fields: { idempotency_key: payer.idempotencyKey } });
  if (previous.status === 'signed') return { kind: 'replayed', payment: previous.response };
  // Reserved by an attempt whose response was lost before signing: sign the same message now — only for the same
  // key (an EVM address compares without case, a base58 one exactly: its case names another key).
  if (counterpartyKey(paymentTerms(previous.response).from) !== counterpartyKey(snapshot.wallet.address)) {
    throw new AppError('idempotency_key_conflict', {
      message: 'The wallet was rotated since this Idempotency-Key was first used.',
      fields: { idempotency_key: payer.idempotencyKey },
    });
  }
  return { kind: 'reserved', fresh: false, payment: previous.response, ...keys } satisfies Reservation;
}

/** A denial: its decision row and `policy.denied` audit row at the head + 1. */
function denied(
  { snapshot, plan, payer, lockKey, now }: DecisionInput,
  decisionId: string,
  decision: PolicyDecision,
): Decided {
  const { wallet, auditHead } = snapshot;
  const decisionRow: DecisionRow = {
    id: decisionId,
    walletId: wallet.id,
    outcome: 'deny',
    kind: plan.kind,
    amountMicro: plan.amountMicro.toString(),
    to: plan.to,
    capability: plan.capability ?? null,
    violations: JSON.stringify(decision.violations),
    headroom: JSON.stringify(decision.headroom),
    at: now,
  };
  const audit = buildAuditRow(auditHead, {
    chainKey: wallet.id,
    eventType: 'policy.denied',
    actor: payer.actor,
    payload: {
      decision_id: decisionId,
      kind: plan.kind,
      to: plan.to,
      amount_usd: formatUsd(plan.amountMicro),
      capability: plan.capability ?? null,
      rules: decision.violations.map((v) => v.rule),
    },
    at: now,
  });
  return {
    outcome: { kind: 'denied', decisionId, decision },
    write: { lockKey, decision: decisionRow, audit },
    change: { auditHead: { seq: audit.seq, hash: audit.hash }, at: now },
  };
}

interface Allowed {
  decisionId: string;
  decision: PolicyDecision;
  chain: AnyChainInfo;
  keys: SigningKeys;
}

/**
 * The payment to sign (EIP-3009 for exact, Permit2 for upto, the built message for a Solana exact transfer,
 * its hash as nonce), its nonce and window fixed, no signature yet.
 */
function unsignedPayment(
  { snapshot, plan, mint }: DecisionInput,
  { decisionId, decision, chain }: Allowed,
): PaymentAuthorization {
  const { wallet } = snapshot;
  const window = mint.window(plan);
  const common = {
    signature: '',
    authorization_id: mint.id('auth_'),
    decision_id: decisionId,
    wallet_id: wallet.id,
    network: chain.network,
    asset: chain.usdc,
    amount_usd: formatUsd(plan.amountMicro),
    headroom: decision.headroom,
  };
  if (plan.solana) {
    const { message, messageHash, feePayer } = plan.solana;
    const solana_transfer = {
      from: wallet.address,
      to: plan.to,
      amount: plan.amountMicro.toString(),
      fee_payer: feePayer,
      message,
      message_hash: messageHash,
      valid_after: window.validAfter,
      valid_before: window.validBefore,
    };
    return { scheme: 'exact', solana_transfer, transaction: '', ...common };
  }
  return plan.scheme === 'upto'
    ? {
        scheme: 'upto',
        permit2_authorization: {
          from: wallet.address,
          permitted: { token: chain.usdc, amount: plan.amountMicro.toString() },
          spender: x402UptoPermit2ProxyAddress,
          nonce: BigInt(window.nonce).toString(),
          deadline: window.validBefore,
          witness: { to: plan.to, facilitator: plan.facilitator!, validAfter: window.validAfter },
        },
        ...common,
      }
    : {
        scheme: 'exact',
        authorization: { from: wallet.address, to: plan.to, value: plan.amountMicro.toString(), ...window },
        ...common,
      };
}

/** A reservation: the authorization row, the spend (wallet windows and the PAT's day) and the audit row. */
function reserved(input: DecisionInput, allowed: Allowed): Decided {
  const { snapshot, plan, payer, requestHash, lockKey, now } = input;
  const { wallet, auditHead } = snapshot;
  const { decisionId, chain, keys } = allowed;
  const payment = unsignedPayment(input, allowed);
  const authorizationId = payment.authorization_id;
  const authorization = paymentTerms(payment);
  const audit = buildAuditRow(auditHead, {
    chainKey: wallet.id,
    eventType: plan.kind === 'pay' ? 'payment.reserved' : 'transfer.reserved',
    actor: payer.actor,
    payload: {
      authorization_id: authorizationId,
      decision_id: decisionId,
      scheme: plan.scheme,
      ...(plan.facilitator ? { facilitator: plan.facilitator } : {}),
      to: plan.to,
      amount_usd: payment.amount_usd,
      network: chain.network,
      nonce: authorization.nonce,
      valid_before: authorization.validBefore,
      capability: plan.capability ?? null,
      resource: plan.resource ?? null,
    },
    at: now,
  });
  const { windows } = keys;
  return {
    outcome: { kind: 'reserved', fresh: true, payment, ...keys } satisfies Reservation,
    write: {
      lockKey,
      authorization: {
        id: authorizationId,
        walletId: wallet.id,
        decisionId,
        kind: plan.kind,
        scheme: plan.scheme,
        network: chain.network,
        asset: chain.usdc,
        from: wallet.address,
        to: plan.to,
        valueRaw: authorization.value,
        amountMicro: plan.amountMicro.toString(),
        validAfter: authorization.validAfter,
        validBefore: authorization.validBefore,
        nonce: authorization.nonce,
        capability: plan.capability ?? null,
        resource: plan.resource ?? null,
        idempotencyKey: payer.idempotencyKey ?? null,
        requestHash,
        // The payment object, serialised when the write is sent: a payment signed in place replaces it first.
        response: payment,
        actor: payer.actor,
        at: now,
        status: 'reserved',
        signature: null,
        signedAt: null,
      },
      spend: {
        walletId: wallet.id,
        windowStarts: {
          day: isoDate(windows.dayStart),
          week: isoDate(windows.weekStart),
          month: isoDate(windows.monthStart),
        },
        amountMicro: plan.amountMicro,
      },
      ...(payer.pat ? { patSpend: patSpend(payer.pat, windows.dayStart, plan.amountMicro) } : {}),
      audit,
    },
    change: { auditHead: { seq: audit.seq, hash: audit.hash }, spentMicro: plan.amountMicro, at: now },
  };
}

/**
 * The PAT's spend today, added to its daily total by the write's statement, which holds the total to the
 * PAT's cap as committed when it runs (./store/decision-write.ts) — not to the cap the bearer was cached with.
 */
function patSpend(pat: NonNullable<CallContext['pat']>, dayStart: Date, amountMicro: bigint) {
  return { tokenId: pat.tokenId, day: isoDate(dayStart), amountMicro };
}
