/**
 * The decision write's statement (src/api/pay/store/decision-write.ts) inserts into the tables its writes have
 * rows for, and only those: a reservation's statement names no policy_decisions or pat_spend_totals insert, a
 * denial's no authorization or spend, a PAT-capped reservation's its PAT total too. Each shape is one
 * prepared statement (same SQL, same name whenever the same tables are written), and its parameters are the
 * lock keys, one document per table written, then the audit rows — as many as the statement has placeholders.
 * A PAT's total carries no cap from the process: the statement reads the PAT's cap from api_tokens
 * (test/integration/api/pay-pat-cap-changed-elsewhere.test.ts races a cap changed through another process).
 */
import assert from 'node:assert/strict';
import { buildAuditRow } from '../../../src/api/audit/audit-ledger.js';
import { decisionWriteStatement, type DecisionWrite } from '../../../src/api/pay/store/decision-write.js';

const AT = new Date('2026-11-29T07:00:00Z');
const WALLET = 'w_statement';
const audit = buildAuditRow(null, {
  chainKey: WALLET,
  eventType: 'payment.reserved',
  actor: 'test',
  payload: {},
  at: AT,
});
const spend = {
  walletId: WALLET,
  windowStarts: { day: '2026-11-29', week: '2026-11-23', month: '2026-11-01' },
  amountMicro: 10n,
};

const reservation: DecisionWrite = {
  lockKey: '42',
  audit,
  spend,
  authorization: {
    id: 'auth_1',
    walletId: WALLET,
    decisionId: 'pd_1',
    kind: 'pay',
    scheme: 'exact',
    network: 'eip155:84532',
    asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    from: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
    to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
    valueRaw: '10',
    amountMicro: '10',
    validAfter: '0',
    validBefore: '9999999999',
    nonce: `0x${'ab'.repeat(32)}`,
    capability: null,
    resource: null,
    idempotencyKey: null,
    requestHash: null,
    response: {},
    actor: 'test',
    at: AT,
    status: 'reserved',
    signature: null,
    signedAt: null,
  },
};
const capped: DecisionWrite = {
  ...reservation,
  patSpend: { tokenId: 'pat_1', day: '2026-11-29', amountMicro: 10n },
};
const denial: DecisionWrite = {
  lockKey: '43',
  audit,
  decision: {
    id: 'pd_2',
    walletId: WALLET,
    outcome: 'deny',
    kind: 'pay',
    amountMicro: '10',
    to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
    capability: null,
    violations: '[]',
    headroom: '{}',
    at: AT,
  },
};

/** The tables a statement inserts into, in its order. */
const insertsInto = (sql: string) => [...sql.matchAll(/INSERT INTO (\w+)/g)].map((m) => m[1]);
const placeholders = (sql: string) => sql.split('?').length - 1;

describe('decision write statement', () => {
  it('inserts into the tables its writes have rows for, and only those', () => {
    assert.deepEqual(insertsInto(decisionWriteStatement([reservation]).sql), [
      'authorizations',
      'wallet_spend_totals',
      'audit_events',
    ]);
    assert.deepEqual(insertsInto(decisionWriteStatement([denial]).sql), ['policy_decisions', 'audit_events']);
    assert.deepEqual(insertsInto(decisionWriteStatement([capped, denial]).sql), [
      'policy_decisions',
      'authorizations',
      'wallet_spend_totals',
      'pat_spend_totals',
      'audit_events',
    ]);
  });

  it('passes the lock keys, one document per table written and the audit rows, one per placeholder', () => {
    for (const writes of [[reservation], [denial], [capped, denial], [reservation, capped]]) {
      const { sql, params } = decisionWriteStatement(writes);
      assert.equal(params.length, placeholders(sql));
      assert.deepEqual(
        params[0],
        writes.map((w) => w.lockKey),
      );
      assert.equal((JSON.parse(params.at(-1) as string) as unknown[]).length, writes.length, 'one audit row per write');
      for (const doc of params.slice(1)) assert.notEqual(doc, '[]', 'no table is sent without rows');
    }
  });

  it("writes a PAT's total with the cap api_tokens holds when the statement runs, not one its writes carry", () => {
    const { sql, params } = decisionWriteStatement([capped, { ...capped, lockKey: '44' }]);
    assert.match(
      sql,
      /INSERT INTO pat_spend_totals \(token_id, day, spent_micro, cap_micro\)\s+SELECT v\.\*, \(SELECT c\.daily_cap_micro FROM api_tokens c WHERE c\.id = v\.token_id\)/,
    );
    assert.match(
      sql,
      /DO UPDATE SET spent_micro = pat_spend_totals\.spent_micro \+ EXCLUDED\.spent_micro, cap_micro = EXCLUDED\.cap_micro/,
    );
    const patDocument = params.find((p) => typeof p === 'string' && p.includes('pat_1'));
    assert.deepEqual(JSON.parse(patDocument as string), [{ token_id: 'pat_1', day: '2026-11-29', spent_micro: '20' }]);
  });

  it('names one prepared statement per shape', () => {
    const [a, b, c] = [[reservation], [reservation, reservation], [denial]].map((w) => decisionWriteStatement(w));
    assert.equal(a!.name, b!.name);
    assert.equal(a!.sql, b!.sql);
    assert.notEqual(a!.name, c!.name);
  });
});
