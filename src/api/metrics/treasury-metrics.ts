/**
 * Prometheus metrics of treasury-api (`treasury_*`, seconds and `_total`), one registry per app
 * instance so tests can build several apps in one process.
 */
import { Registry, collectDefaultMetrics } from 'prom-client';
import { metricMakers } from '../../shared/metric-makers.js';

type Makers = ReturnType<typeof metricMakers>;

const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export function createTreasuryMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'treasury_' });
  const makers = metricMakers(registry);
  return {
    registry,
    ...frontMetrics(makers),
    ...admissionMetrics(makers),
    ...moneyMetrics(makers),
    ...chainMetrics(makers),
  };
}

/** The pay admission's refusals and its waiting payments (src/api/pay/pay-admission.ts). */
function admissionMetrics({ counter, gauge }: Makers) {
  /** What the pay admission counts, read at scrape time; it sets `read` once built. */
  const payAdmissionWaiting = { read: (): number => 0 };
  return {
    payAdmissionWaitingSource: payAdmissionWaiting,
    payAdmissionRefusals: counter({
      name: 'treasury_pay_admission_refusals_total',
      help: 'Payments refused before any decision by the pay admission (src/api/pay/pay-admission.ts), by reason: tenant_queue_full (429 pay_concurrency_exceeded), queue_full and waited_too_long (503 pay_overloaded), abandoned (the client went away while it waited).',
      labelNames: ['reason'],
    }),
    chainReadRefusals: counter({
      name: 'treasury_chain_read_refusals_total',
      help: "Reads of a chain's RPC refused before they were made (src/api/chain/chain-read-admission.ts), by reason: tenant_queue_full (429 chain_reads_exceeded), queue_full and waited_too_long (503 chain_busy).",
      labelNames: ['reason'],
    }),
    signerCallRefusals: counter({
      name: 'treasury_signer_call_refusals_total',
      help: "Signer calls other than a payment's refused before reaching the signer (src/api/signing/signer-call-admission.ts), by reason: tenant_queue_full (429 signer_calls_exceeded), queue_full and waited_too_long (503 signer_overloaded).",
      labelNames: ['reason'],
    }),
    payAdmissionWaiting: gauge({
      name: 'treasury_pay_admission_waiting',
      help: 'Payments waiting for their place in this process (over every tenant), counted when scraped.',
      collect() {
        this.set(payAdmissionWaiting.read());
      },
    }),
  };
}

/** Requests, errors, the signer and the database, wallets, accounts and tokens, rate limits. */
function frontMetrics({ counter, histogram }: Makers) {
  return {
    httpRequests: counter({
      name: 'treasury_http_requests_total',
      help: 'HTTP requests answered, by route template, method and status.',
      labelNames: ['method', 'route', 'status'],
    }),
    httpDuration: histogram({
      name: 'treasury_http_request_duration_seconds',
      help: 'HTTP request latency by route template and method.',
      labelNames: ['method', 'route'],
      buckets: latencyBuckets,
    }),
    errors: counter({
      name: 'treasury_errors_total',
      help: 'Error responses by stable error code.',
      labelNames: ['error_code'],
    }),
    signerCalls: counter({
      name: 'treasury_signer_calls_total',
      help: 'Signer RPC calls by method and outcome.',
      labelNames: ['method', 'outcome'],
    }),
    signerDuration: histogram({
      name: 'treasury_signer_call_duration_seconds',
      help: 'Signer RPC latency by method.',
      labelNames: ['method'],
      buckets: latencyBuckets,
    }),
    dbTransactionDuration: histogram({
      name: 'treasury_db_transaction_duration_seconds',
      help: 'Duration of the database work that guards key operations: operation="pay"|"transfer" the decision (its write too where the reservation is committed before signing), "…_record" the write that stores the signature.',
      labelNames: ['operation'],
      buckets: latencyBuckets,
    }),
    walletOperations: counter({
      name: 'treasury_wallet_operations_total',
      help: 'Wallet lifecycle operations (create, rotate, revoke) by outcome.',
      labelNames: ['operation', 'outcome'],
    }),
    payDecisions: counter({
      name: 'treasury_pay_decisions_total',
      help: 'Pay and transfer requests by kind and outcome (allow, deny, replayed, resumed, released; release_failed: a reservation not given back after its retries; expired_released: an expired reservation nobody recorded, given back by the sweep).',
      labelNames: ['kind', 'outcome'],
    }),
    accountsMinted: counter({
      name: 'treasury_accounts_minted_total',
      help: 'Treasury accounts minted.',
    }),
    tokensIssued: counter({
      name: 'treasury_tokens_issued_total',
      help: 'Bearer tokens issued by kind.',
      labelNames: ['kind'],
    }),
    rateLimited: counter({
      name: 'treasury_rate_limited_total',
      help: 'Requests refused with 429 rate_limited, by bucket (nonce, init, discovery, auth_failure: per client address; token, pay: per token; account, pay_account, policy, receipt: per account; auth_failure_token: per presented bearer).',
      labelNames: ['bucket'],
    }),
    authFailures: counter({
      name: 'treasury_auth_failures_total',
      help: 'Requests refused at authentication, by error code.',
      labelNames: ['error_code'],
    }),
  };
}

/** Caps, the pay path's snapshots, writes and conflicts, settlements, the ledger, the signer's health. */
function moneyMetrics({ counter, gauge, histogram }: Makers) {
  return {
    patCapChecks: counter({
      name: 'treasury_pat_cap_checks_total',
      help: "Payments through a buyer PAT with a daily cap by where their cap check took the day's total: remembered by this process (group commit, no PAT lock) or read under the PAT's lock.",
      labelNames: ['source'],
    }),
    paySnapshots: counter({
      name: 'treasury_pay_snapshots_total',
      help: "Where an optimistic reservation took its wallet snapshot: read from PostgreSQL, or remembered from the wallet's last write in this process; prefetched: read ahead of a wallet's first payment (at its creation); velocity_read_on: remembered, with its velocity window read on once every payment time it knew had left it.",
      labelNames: ['source'],
    }),
    uptoSettlements: counter({
      name: 'treasury_upto_settlements_total',
      help: 'Reported settlements of upto authorizations by outcome: recorded (verified on chain, unsettled part given back), replayed (reported again), or the error code.',
      labelNames: ['outcome'],
    }),
    exactSettlements: counter({
      name: 'treasury_exact_settlements_total',
      help: 'Reported settlements of exact (EIP-3009 or Solana) authorizations by outcome: recorded (verified on chain), replayed (reported again), or the error code.',
      labelNames: ['outcome'],
    }),
    ledgerVerifications: counter({
      name: 'treasury_ledger_verifications_total',
      help: 'On-chain checks of seller ledger rows by outcome: verified, rejected, pending (not yet decidable: confirmations, RPC, transaction not seen yet) or error.',
      labelNames: ['outcome'],
    }),
    ledgerRejectedDeleted: counter({
      name: 'treasury_ledger_rejected_deleted_total',
      help: 'Rejected seller ledger rows deleted once older than TREASURY_LEDGER_REJECTED_RETENTION_DAYS (the revenue summary keeps their days counted).',
    }),
    proofRechecks: counter({
      name: 'treasury_proof_rechecks_total',
      help: 'Re-checks of proofs of control (proof: seller_origin, gate_url, gate_base_domain) by outcome: proven (timestamp refreshed), kept (fetch failed within TREASURY_PROOF_GRACE_SECONDS) or withdrawn.',
      labelNames: ['proof', 'outcome'],
    }),
    ledgerPendingRows: gauge({
      name: 'treasury_ledger_pending_rows',
      help: "Seller ledger rows waiting for on-chain verification, as last counted by this process's verifier.",
    }),
    payConflicts: counter({
      name: 'treasury_pay_conflict_retries_total',
      help: 'Reservations taken again: the wallet changed between the read and the write (another process), or the shared statement holding the write failed.',
      labelNames: ['kind'],
    }),
    payWriteIsolation: counter({
      name: 'treasury_pay_write_isolation_total',
      help: 'Pay decision writes sent apart after their shared statement failed because of one row: refused (that row — a value PostgreSQL cannot store, answered 400 unstorable_value, or a constraint it breaks, decided again alone) or committed (the other writes of that statement).',
      labelNames: ['outcome'],
    }),
    decisionWriteBatch: histogram({
      name: 'treasury_pay_decision_write_batch_size',
      help: 'Pay decisions (reservations and denials) written per statement (payments arriving together share one INSERT).',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    }),
    signatureRecordBatch: histogram({
      name: 'treasury_pay_signature_record_batch_size',
      help: 'Signatures recorded per statement (payments arriving together share one UPDATE).',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    }),
    payConnectionsOpened: counter({
      name: 'treasury_pay_statement_connections_opened_total',
      help: "Connections opened by the pay path's group-commit writers (one each at start; more mean a connection broke and was replaced).",
      labelNames: ['writer'],
    }),
    signerUp: gauge({
      name: 'treasury_signer_up',
      help: '1 when the last signer health check succeeded.',
    }),
  };
}

/** What the API reads from chains: balances, Permit2 allowances, Solana blockhashes. */
function chainMetrics({ counter, histogram }: Makers) {
  return {
    balanceReads: counter({
      name: 'treasury_balance_reads_total',
      help: 'Wallet balance reads by network and outcome (fresh, stale, unavailable).',
      labelNames: ['network', 'outcome'],
    }),
    solanaBlockhashes: counter({
      name: 'treasury_solana_blockhashes_total',
      help: "The blockhashes Solana payment messages were built on, by source: read (the payment's read of the RPC), shared (a read under way for another payment), reused (read within TREASURY_SOLANA_BLOCKHASH_MAX_AGE_MS), failed (the read failed: 503 chain_unavailable).",
      labelNames: ['source'],
    }),
    permit2AllowanceChecks: counter({
      name: 'treasury_permit2_allowance_checks_total',
      help: 'On-chain Permit2 allowance reads before an upto payment, by network and outcome (sufficient, insufficient, unavailable; eip2612_permit: paid with an EIP-2612 permit instead).',
      labelNames: ['network', 'outcome'],
    }),
    balanceReadDuration: histogram({
      name: 'treasury_balance_read_seconds',
      help: "Time of a wallet's balance read, by network: its wait for a place among the chain reads (src/api/chain/chain-read-admission.ts) and the on-chain read.",
      labelNames: ['network'],
      buckets: latencyBuckets,
    }),
  };
}

export type TreasuryMetrics = ReturnType<typeof createTreasuryMetrics>;
