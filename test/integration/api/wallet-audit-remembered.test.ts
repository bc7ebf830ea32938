/**
 * GET /v1/wallets/{id}/audit recomputes a wallet's chain from its start once, then from the newest row it held
 * (src/api/wallets/wallet-history-service.ts): the work is counted as the audit rows the app reads to hash
 * (every query of the verifier selects `payload::text AS payload_text`), not timed. A second request over a
 * 3,000-row chain recomputes one row (the remembered one), a request after five new rows six; and an edit since
 * then — to a row after the remembered one, to the remembered row (its hash left, or recomputed), or the chain
 * cut short below it — is still reported broken.
 */
import assert from 'node:assert/strict';
import { useTestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { buildAuditRow, type AuditHead } from '../../../src/api/audit/audit-ledger.js';
import { computeAuditHash } from '../../../src/api/audit/audit-ledger.js';

describe('wallet audit: a chain verified once is recomputed from its remembered row (HTTP, PostgreSQL)', function () {
  this.timeout(180_000);
  const t = useTestTreasury();
  let hashedRows = 0;
  const countHashed = (response: unknown, query: { sql?: string }) => {
    if (query.sql?.includes('payload_text') && Array.isArray(response)) hashedRows += response.length;
  };
  before(() => t.db.knex.on('query-response', countHashed));
  after(() => t.db.knex.off('query-response', countHashed));

  async function walletWithChain(rows: number) {
    const { session } = await signInWithNewKey(t);
    const treasury = (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'treasury' } })).body
      .pat as string;
    const wallet = (
      await t.request('POST', '/v1/wallets', { token: treasury, body: { label: 'a', policy: { per_tx_cap_usd: '1' } } })
    ).body;
    await append(wallet.id, rows);
    return { treasury, walletId: wallet.id as string };
  }

  /** `count` policy.denied rows at the chain's head, as the pay path writes them. */
  async function append(walletId: string, count: number) {
    let head = (await t.db
      .knex('audit_events')
      .where({ chain_key: walletId })
      .orderBy('seq', 'desc')
      .first('seq', 'hash')) as AuditHead | undefined;
    const rows = [];
    for (let i = 0; i < count; i++) {
      const row = buildAuditRow(head ?? null, {
        chainKey: walletId,
        eventType: 'policy.denied',
        actor: 'agent',
        payload: { amount_micro: '900000', i },
      });
      rows.push(row);
      head = { seq: row.seq, hash: row.hash };
    }
    for (let i = 0; i < rows.length; i += 500) await t.db.knex('audit_events').insert(rows.slice(i, i + 500));
  }

  async function audit(treasury: string, walletId: string) {
    hashedRows = 0;
    const res = await t.request('GET', `/v1/wallets/${walletId}/audit?limit=1`, { token: treasury });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return { verification: res.body.verification, hashed: hashedRows, newest: res.body.events[0].seq as number };
  }

  async function behindTrigger(work: () => Promise<unknown>) {
    await t.db.knex.raw('ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_update');
    try {
      await work();
    } finally {
      await t.db.knex.raw('ALTER TABLE audit_events ENABLE TRIGGER audit_events_no_update');
    }
  }

  it('recomputes the whole chain once, then only the remembered row and what follows it', async () => {
    const { treasury, walletId } = await walletWithChain(3_000);
    const first = await audit(treasury, walletId);
    assert.deepEqual(first.verification, { state: 'verified', rows: first.newest });
    assert.ok(first.newest >= 3_000);
    assert.equal(first.hashed, first.newest, 'the whole chain, once');

    const second = await audit(treasury, walletId);
    assert.deepEqual(second.verification, { state: 'verified', rows: first.newest }, 'the whole chain still counted');
    assert.equal(second.hashed, 1, 'only the remembered row');

    await append(walletId, 5);
    const third = await audit(treasury, walletId);
    assert.deepEqual(third.verification, { state: 'verified', rows: first.newest + 5 });
    assert.equal(third.hashed, 6, 'the remembered row and the five after it');
  });

  it('reports an edit after the remembered row', async () => {
    const { treasury, walletId } = await walletWithChain(50);
    const { newest } = await audit(treasury, walletId);
    await append(walletId, 3);
    await behindTrigger(() =>
      t.db
        .knex('audit_events')
        .where({ chain_key: walletId, seq: newest + 2 })
        .update({ actor: 'mallory' }),
    );
    const broken = await audit(treasury, walletId);
    assert.deepEqual(broken.verification, {
      state: 'broken',
      rows: newest + 2,
      seq: newest + 2,
      reason: 'hash_mismatch',
    });
    assert.equal((await audit(treasury, walletId)).verification.state, 'broken', 'and keeps reporting it');
  });

  it('reports an edit to the remembered row, its hash left or recomputed', async () => {
    const { treasury, walletId } = await walletWithChain(50);
    const { newest } = await audit(treasury, walletId);
    await behindTrigger(() =>
      t.db.knex('audit_events').where({ chain_key: walletId, seq: newest }).update({ actor: 'mallory' }),
    );
    assert.deepEqual((await audit(treasury, walletId)).verification, {
      state: 'broken',
      rows: newest,
      seq: newest,
      reason: 'hash_mismatch',
    });
    const row = await t.db.knex('audit_events').where({ chain_key: walletId, seq: newest }).first();
    const hash = computeAuditHash({ ...row, seq: Number(row.seq) });
    await behindTrigger(() => t.db.knex('audit_events').where({ id: row.id }).update({ hash }));
    assert.deepEqual((await audit(treasury, walletId)).verification, {
      state: 'broken',
      rows: newest,
      seq: newest,
      reason: 'anchor_mismatch',
    });
  });

  it('reports the chain cut short below the remembered row', async () => {
    const { treasury, walletId } = await walletWithChain(50);
    const { newest } = await audit(treasury, walletId);
    await behindTrigger(() =>
      t.db
        .knex('audit_events')
        .where({ chain_key: walletId })
        .andWhere('seq', '>=', newest - 1)
        .delete(),
    );
    hashedRows = 0;
    const res = await t.request('GET', `/v1/wallets/${walletId}/audit?limit=1`, { token: treasury });
    assert.deepEqual(res.body.verification, {
      state: 'broken',
      rows: newest - 1,
      seq: newest,
      reason: 'anchor_missing',
    });
  });
});
