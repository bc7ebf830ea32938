/**
 * What a pay-path decision writes, and the statement that writes any number of them: a denial (its
 * policy_decisions row + audit row) or an allowed payment (its authorization — reserved with no signature
 * yet, or already signed — the spend it adds to the wallet's windows and to the paying buyer PAT's day, and
 * its audit row). Rows are named objects; each table lists once which field fills which column with which
 * type (`*_COLUMNS`, typed so that a field without a column, or a column without a field, does not compile),
 * and that list builds the statement's recordset and the JSON document it reads (./json-rows.ts). The
 * statement inserts only into the tables its writes have rows for (decisionWriteStatement: one prepared shape
 * per combination of tables, at most 16).
 *
 * Defends: a value written into the wrong column — nothing is patched or read by position. A buyer PAT's day
 * counted past a cap that was lowered (or set) after its payment's bearer was cached or its day remembered —
 * through this process or another: the cap a PAT's total is written with, and which CHECK
 * pat_spend_totals_within_cap holds it to, is the one api_tokens holds when the statement runs, read by the
 * statement itself, not one its writes carry.
 * Does not defend: values PostgreSQL cannot hold (the route schemas bound them; ./is-row-error.ts isolates a
 * row that slips through).
 */
import type { buildAuditRow } from '../../audit/audit-ledger.js';
import { jsonTextOnce } from '../../http/json-answer.js';
import { jsonRowsEncoder, recordsetColumns } from './json-rows.js';

/** A denial's policy_decisions row. */
export interface DecisionRow {
  id: string;
  walletId: string;
  outcome: 'allow' | 'deny';
  kind: string;
  amountMicro: string;
  to: string;
  capability: string | null;
  /** JSON text. */
  violations: string;
  /** JSON text. */
  headroom: string;
  at: Date;
}

/** An authorizations row: `reserved` with no signature, or `signed` with its signature and time. */
export interface AuthorizationRow {
  id: string;
  walletId: string;
  decisionId: string;
  kind: string;
  scheme: string;
  network: string;
  asset: string;
  from: string;
  to: string;
  valueRaw: string;
  amountMicro: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
  capability: string | null;
  resource: string | null;
  idempotencyKey: string | null;
  requestHash: string | null;
  /** The payment the endpoint answers: an object, serialised when the write is sent (a payment signed in place replaces it first). */
  response: string | object;
  actor: string;
  at: Date;
  status: 'reserved' | 'signed';
  signature: string | null;
  signedAt: Date | null;
}

/** An audit_events row, as ../../audit/audit-ledger.ts builds it (its fields are its column names). */
export type AuditRow = ReturnType<typeof buildAuditRow>;

/** What a statement adds to one spend total: the wallet's window (day, week or month starting on `start`). */
interface SpendRow {
  walletId: string;
  kind: 'day' | 'week' | 'month';
  start: string;
  /** Decimal (JSON has no bigint). */
  amountMicro: string;
  count: number;
}

/** What a statement adds to the paying buyer PAT's total that UTC day (its cap is read by the statement). */
interface PatSpendRow {
  tokenId: string;
  day: string;
  /** Decimal (JSON has no bigint). */
  amountMicro: string;
}

export interface DecisionWrite {
  /** The wallet's advisory-lock key (decimal bigint): taken in shared mode for the statement. */
  lockKey: string;
  /**
   * A denial's `pd_…` row (policy_decisions holds denials: the decision a 403 names). An allowed payment's
   * decision is recorded by its authorization row and its audit row, which carry the same decision id.
   */
  decision?: DecisionRow;
  /** Present when the decision allowed the payment. */
  authorization?: AuthorizationRow;
  /** The spend counted in the wallet's day, week and month windows (window starts as YYYY-MM-DD). */
  spend?: { walletId: string; windowStarts: { day: string; week: string; month: string }; amountMicro: bigint };
  /**
   * The paying buyer PAT's spend that UTC day (YYYY-MM-DD), added to its daily total. The total is written
   * with the PAT's daily cap as the statement reads it (api_tokens.daily_cap_micro; null: none), and a total
   * above it fails the statement (CHECK pat_spend_totals_within_cap).
   */
  patSpend?: { tokenId: string; day: string; amountMicro: bigint };
  audit: AuditRow;
}

/**
 * `write`'s authorization as signed: its response (holding the signature; serialised here, once — the same
 * text answers the request, ../../http/json-answer.ts), status `signed`, the signature and when.
 */
export function signedWrite(write: DecisionWrite, response: object, signature: string, at: Date): DecisionWrite {
  if (!write.authorization) throw new Error('only an allowed decision takes a signature');
  const authorization = { ...write.authorization, response: jsonTextOnce(response), status: 'signed' as const };
  return { ...write, authorization: { ...authorization, signature, signedAt: at } };
}

/** For each field of a row: its column and PostgreSQL type, in the order the statement lists them. */
type Columns<R> = { readonly [K in keyof R]-?: readonly [column: string, type: string] };

const DECISION_COLUMNS: Columns<DecisionRow> = {
  id: ['id', 'text'],
  walletId: ['wallet_id', 'text'],
  outcome: ['outcome', 'text'],
  kind: ['kind', 'text'],
  amountMicro: ['amount_micro', 'bigint'],
  to: ['to_address', 'text'],
  capability: ['capability', 'text'],
  violations: ['violations', 'jsonb'],
  headroom: ['headroom', 'jsonb'],
  at: ['created_at', 'timestamptz'],
};
const AUTHORIZATION_COLUMNS: Columns<AuthorizationRow> = {
  id: ['id', 'text'],
  walletId: ['wallet_id', 'text'],
  decisionId: ['decision_id', 'text'],
  kind: ['kind', 'text'],
  scheme: ['scheme', 'text'],
  network: ['network', 'text'],
  asset: ['asset', 'text'],
  from: ['from_address', 'text'],
  to: ['to_address', 'text'],
  valueRaw: ['value_raw', 'numeric'],
  amountMicro: ['amount_micro', 'bigint'],
  validAfter: ['valid_after', 'bigint'],
  validBefore: ['valid_before', 'bigint'],
  nonce: ['nonce', 'text'],
  capability: ['capability', 'text'],
  resource: ['resource', 'text'],
  idempotencyKey: ['idempotency_key', 'text'],
  requestHash: ['request_hash', 'text'],
  response: ['response', 'jsonb'],
  actor: ['actor', 'text'],
  at: ['created_at', 'timestamptz'],
  status: ['status', 'text'],
  signature: ['signature', 'text'],
  signedAt: ['signed_at', 'timestamptz'],
};
const AUDIT_COLUMNS: Columns<AuditRow> = {
  chain_key: ['chain_key', 'text'],
  seq: ['seq', 'integer'],
  event_type: ['event_type', 'text'],
  actor: ['actor', 'text'],
  payload: ['payload', 'jsonb'],
  prev_hash: ['prev_hash', 'text'],
  hash: ['hash', 'text'],
  created_at: ['created_at', 'timestamptz'],
};
const SPEND_COLUMNS: Columns<SpendRow> = {
  walletId: ['wallet_id', 'text'],
  kind: ['window_kind', 'text'],
  start: ['window_start', 'date'],
  amountMicro: ['spent_micro', 'bigint'],
  count: ['payment_count', 'integer'],
};
const PAT_SPEND_COLUMNS: Columns<PatSpendRow> = {
  tokenId: ['token_id', 'text'],
  day: ['day', 'date'],
  amountMicro: ['spent_micro', 'bigint'],
};

/** A table's column list, its recordset, and the encoder of its rows, worked out once. */
function table<R>(spec: Columns<R>) {
  const fields = Object.keys(spec) as Array<keyof R & string>;
  const columns = fields.map((f) => spec[f][0]);
  const types = fields.map((f) => spec[f][1]);
  return {
    /** `(<column>, …)` of the INSERT. */
    columns: columns.join(', '),
    /** `SELECT <columns> FROM jsonb_to_recordset(?::jsonb) AS v(<column type>, …)`: one parameter per table (./json-rows.ts). */
    recordset: `SELECT ${columns.join(', ')} FROM jsonb_to_recordset(?::jsonb) AS v(${recordsetColumns(columns, types)})`,
    rows: jsonRowsEncoder(columns, types, fields) as (rows: ReadonlyArray<R>) => string,
  };
}

const decisions = table(DECISION_COLUMNS);
const authorizations = table(AUTHORIZATION_COLUMNS);
const spends = table(SPEND_COLUMNS);
const patSpends = table(PAT_SPEND_COLUMNS);
const audits = table(AUDIT_COLUMNS);

/** The tables a statement may write besides audit_events, in the statement's order (decisionWriteParams' too). */
const OPTIONAL_TABLES = [
  { cte: `d AS (INSERT INTO policy_decisions (${decisions.columns}) ${decisions.recordset})` },
  { cte: `a AS (INSERT INTO authorizations (${authorizations.columns}) ${authorizations.recordset})` },
  {
    cte: `t AS (INSERT INTO wallet_spend_totals (${spends.columns})
        ${spends.recordset}
        ON CONFLICT (wallet_id, window_kind, window_start)
        DO UPDATE SET spent_micro = wallet_spend_totals.spent_micro + EXCLUDED.spent_micro,
                      payment_count = wallet_spend_totals.payment_count + EXCLUDED.payment_count)`,
  },
  {
    cte: `p AS (INSERT INTO pat_spend_totals (${patSpends.columns}, cap_micro)
        SELECT v.*, (SELECT c.daily_cap_micro FROM api_tokens c WHERE c.id = v.token_id) FROM (${patSpends.recordset}) v
        ON CONFLICT (token_id, day) DO UPDATE SET spent_micro = pat_spend_totals.spent_micro + EXCLUDED.spent_micro, cap_micro = EXCLUDED.cap_micro)`,
  },
] as const;

/**
 * The statement writing the tables of `present` (one flag per OPTIONAL_TABLES entry) and audit_events. The
 * audit rows are its main query, joined to `l` (every wallet's shared advisory lock, taken in key order
 * before the first row is produced); the other inserts are CTEs, run to completion after it. Spend totals
 * arrive summed per (wallet, window) and PAT totals per (PAT, day), so ON CONFLICT touches each row once; a
 * PAT total is written, inserted or added to, with the PAT's cap as committed when the statement runs (one
 * primary-key lookup of api_tokens per PAT), so a cap lowered through any process binds from the next
 * statement, whatever cap the payments' bearers were cached with. A table without rows has no CTE:
 * PostgreSQL sets up every INSERT of a statement at each execution (its relation, indexes and triggers), rows
 * or none, and most statements write neither a denial nor a capped PAT's total.
 */
function decisionWriteSql(present: readonly boolean[]): string {
  const ctes = OPTIONAL_TABLES.flatMap((t, i) => (present[i] ? [`,\n  ${t.cte}`] : [])).join('');
  return `WITH l AS (SELECT count(*) AS locked FROM (SELECT pg_advisory_xact_lock_shared(k) FROM (SELECT DISTINCT unnest(?::bigint[]) AS k ORDER BY 1) s) x)${ctes}
INSERT INTO audit_events (${audits.columns}) SELECT v.* FROM (${audits.recordset}) v CROSS JOIN l`;
}

/** Each shape's statement and its prepared-statement name, by the bits of its tables (built once, at most 16). */
const SHAPES = new Map<number, { sql: string; name: string }>();
function shape(present: readonly boolean[]): { sql: string; name: string } {
  const bits = present.reduce((acc, on, i) => (on ? acc | (1 << i) : acc), 0);
  let found = SHAPES.get(bits);
  if (!found) {
    found = { sql: decisionWriteSql(present), name: `treasury_pay_decisions_v7_${bits}` };
    SHAPES.set(bits, found);
  }
  return found;
}

/** A decision write statement: its SQL, its prepared-statement name and its parameters. */
export interface DecisionWriteStatement {
  sql: string;
  name: string;
  params: unknown[];
}

/**
 * The statement writing `writes` (wallets' writes, each wallet's in chain order): lock keys, then one JSON
 * document per table that has rows (in the statement's order), then the audit rows.
 */
export function decisionWriteStatement(writes: ReadonlyArray<DecisionWrite>): DecisionWriteStatement {
  const [lockKeys, ...documents] = decisionWriteParams(writes);
  const tables = documents.slice(0, OPTIONAL_TABLES.length);
  const present = tables.map((doc) => doc !== '[]');
  const { sql, name } = shape(present);
  return { sql, name, params: [lockKeys, ...tables.filter((_, i) => present[i]), documents[OPTIONAL_TABLES.length]] };
}

/** Lock keys, then one JSON document per table — OPTIONAL_TABLES' order, audit_events last — for `writes`. */
function decisionWriteParams(writes: ReadonlyArray<DecisionWrite>): unknown[] {
  const spend = new Map<
    string,
    { walletId: string; kind: SpendRow['kind']; start: string; amountMicro: bigint; count: number }
  >();
  const patSpend = new Map<string, { tokenId: string; day: string; amountMicro: bigint }>();
  for (const w of writes) {
    if (w.patSpend) {
      const { tokenId, day, amountMicro } = w.patSpend;
      const key = `${tokenId}|${day}`;
      const row = patSpend.get(key) ?? { tokenId, day, amountMicro: 0n };
      row.amountMicro += amountMicro;
      patSpend.set(key, row);
    }
    if (!w.spend) continue;
    for (const kind of ['day', 'week', 'month'] as const) {
      const start = w.spend.windowStarts[kind];
      const key = `${w.spend.walletId}|${kind}|${start}`;
      const row = spend.get(key) ?? { walletId: w.spend.walletId, kind, start, amountMicro: 0n, count: 0 };
      row.amountMicro += w.spend.amountMicro;
      row.count += 1;
      spend.set(key, row);
    }
  }
  return [
    writes.map((w) => w.lockKey),
    decisions.rows(writes.flatMap((w) => (w.decision ? [w.decision] : []))),
    authorizations.rows(writes.flatMap((w) => (w.authorization ? [w.authorization] : []))),
    spends.rows([...spend.values()].map((r): SpendRow => ({ ...r, amountMicro: r.amountMicro.toString() }))),
    patSpends.rows([...patSpend.values()].map((r): PatSpendRow => ({ ...r, amountMicro: r.amountMicro.toString() }))),
    audits.rows(writes.map((w) => w.audit)),
  ];
}
