/**
 * The pay path through HTTP with the real signer and PostgreSQL: each policy rule's allow and deny,
 * decision ids found in the audit ledger, UTC window boundaries with an injected clock, idempotency,
 * atomicity under a race, the dry run, transfers and the refusals of unsupported terms.
 */
import assert from 'node:assert/strict';
import { verifyAuditChain } from '../../../src/api/audit/audit-ledger.js';
import { recoverAuthorizationSigner } from '../../support/recover-authorization.js';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { daySpentMicro } from '../../support/spend-totals.js';

const SELLER = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const OTHER = '0x857b06519E91e3A54538791bDbb0E22373e36b66';

function requirements(amountRaw: string, overrides: Record<string, unknown> = {}) {
  return paymentRequirements({
    amount: amountRaw,
    maxTimeoutSeconds: 300,
    resource: 'https://api.example.com/search',
    description: 'search',
    mimeType: 'application/json',
    ...overrides,
  });
}
const usd = (n: number) => String(Math.round(n * 1_000_000));

/** These wallets are on a network with no RPC configured here: their balance cannot be read, so rotating or revoking them is an explicit abandon. */
const ABANDON = { abandon_balance: true };

describe('pay path (HTTP, SoftHSM, PostgreSQL)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let token: string;
  let now = new Date('2026-11-22T12:00:00Z');

  before(async () => {
    t = await startTestTreasury({ clock: () => now });
    token = await mintAgentKey(t, 'payer');
  });
  after(async () => {
    await t?.stop();
  });

  async function wallet(policy: Record<string, unknown> = {}) {
    const res = await t.request('POST', '/v1/wallets', { token, body: { policy } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: string; address: string };
  }
  const pay = (
    walletId: string,
    amountRaw: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token,
      body: {
        payment_requirements: requirements(amountRaw, extra.requirements as Record<string, unknown>),
        ...(extra.capability ? { capability: extra.capability } : {}),
      },
      headers,
    });

  /** treasury_pay_snapshots_total{source}: wallet snapshots read from the database or remembered from the last write. */
  const snapshots = async (source: 'read' | 'remembered') =>
    Number(
      (await t.request('GET', '/metrics')).body.match(
        new RegExp(`treasury_pay_snapshots_total\\{source="${source}"\\} (\\d+)`),
      )?.[1] ?? 0,
    );

  async function expectDenied(res: { status: number; body: any }, rule: string, walletId: string) {
    assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.equal(res.body.reason, 'policy_denied');
    assert.ok(res.body.rules.includes(rule), `${rule} not in ${res.body.rules}`);
    assert.match(res.body.decision_id, /^pd_[0-9a-f]{24}$/);
    const audit = await t.db
      .knex('audit_events')
      .where({ chain_key: walletId, event_type: 'policy.denied' })
      .whereRaw("payload->>'decision_id' = ?", [res.body.decision_id]);
    assert.equal(audit.length, 1, 'the decision is in the audit ledger');
    const decision = await t.db.knex('policy_decisions').where({ id: res.body.decision_id }).first();
    assert.equal(decision.outcome, 'deny');
  }

  it('signs an x402 payment that recovers to the wallet, and records it before answering', async () => {
    const w = await wallet();
    const res = await pay(w.id, '10000');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const { authorization, signature } = res.body;
    assert.equal(authorization.from, w.address);
    assert.equal(authorization.to, SELLER);
    assert.equal(authorization.value, '10000');
    assert.match(authorization.nonce, /^0x[0-9a-f]{64}$/);
    assert.ok(Number(authorization.validBefore) - Math.floor(Date.now() / 1000) <= 300);
    assert.equal(await recoverAuthorizationSigner(authorization, signature), w.address);
    const row = await t.db.knex('authorizations').where({ id: res.body.authorization_id }).first();
    assert.equal(row.signature, signature);
    assert.equal(row.status, 'signed');
    assert.equal(row.nonce, authorization.nonce);
    const audit = await t.db.knex('audit_events').where({ chain_key: w.id, event_type: 'payment.reserved' });
    assert.equal(audit.length, 1);
    // The allowed decision is recorded by the authorization and its audit row (policy_decisions holds denials).
    assert.match(res.body.decision_id, /^pd_[0-9a-f]{24}$/);
    assert.equal(row.decision_id, res.body.decision_id);
    assert.equal(audit[0].payload.decision_id, res.body.decision_id);
    assert.equal((await t.db.knex('policy_decisions').where({ wallet_id: w.id })).length, 0);
  });

  it('per_tx_cap_usd: allow at the cap, deny above', async () => {
    const w = await wallet({ per_tx_cap_usd: '0.05' });
    assert.equal((await pay(w.id, usd(0.05))).status, 200);
    await expectDenied(await pay(w.id, usd(0.050001)), 'per_tx_cap_usd', w.id);
  });

  it('daily_cap_usd resets at 00:00 UTC', async () => {
    const w = await wallet({ daily_cap_usd: '1' });
    now = new Date('2026-11-22T23:59:59.000Z');
    assert.equal((await pay(w.id, usd(1))).status, 200);
    const denied = await pay(w.id, '1');
    await expectDenied(denied, 'daily_cap_usd', w.id);
    assert.equal(denied.body.headroom.daily_usd, '0');
    now = new Date('2026-11-23T00:00:00.000Z');
    assert.equal((await pay(w.id, usd(1))).status, 200);
  });

  it('weekly_cap_usd resets on Monday 00:00 UTC', async () => {
    const w = await wallet({ weekly_cap_usd: '2' });
    now = new Date('2026-11-24T10:00:00Z'); // Tuesday
    assert.equal((await pay(w.id, usd(1.5))).status, 200);
    now = new Date('2026-11-29T23:59:59Z'); // Sunday, same ISO week
    await expectDenied(await pay(w.id, usd(0.6)), 'weekly_cap_usd', w.id);
    assert.equal((await pay(w.id, usd(0.5))).status, 200);
    now = new Date('2026-11-30T00:00:00Z'); // Monday
    assert.equal((await pay(w.id, usd(2))).status, 200);
  });

  it('monthly_cap_usd resets on the 1st 00:00 UTC', async () => {
    const w = await wallet({ monthly_cap_usd: '3' });
    now = new Date('2026-11-02T08:00:00Z');
    assert.equal((await pay(w.id, usd(3))).status, 200);
    now = new Date('2026-11-30T23:59:59Z');
    await expectDenied(await pay(w.id, '1'), 'monthly_cap_usd', w.id);
    now = new Date('2026-12-01T00:00:00Z');
    assert.equal((await pay(w.id, usd(3))).status, 200);
  });

  it('velocity_cap counts payments in a rolling window', async () => {
    const w = await wallet({ velocity_cap: { max_count: 2, window_seconds: 60 } });
    now = new Date('2026-11-22T12:00:00Z');
    assert.equal((await pay(w.id, '1')).status, 200);
    now = new Date('2026-11-22T12:00:30Z');
    assert.equal((await pay(w.id, '1')).status, 200);
    await expectDenied(await pay(w.id, '1'), 'velocity_cap', w.id);
    now = new Date('2026-11-22T12:01:01Z');
    assert.equal((await pay(w.id, '1')).status, 200);
  });

  it('velocity_cap: a wallet paid steadily decides on its remembered window as its payments leave it, exactly as a read would', async () => {
    const w = await wallet({ velocity_cap: { max_count: 3, window_seconds: 60 } });
    const at = (s: number) => new Date(Date.parse('2026-11-22T13:00:00Z') + s * 1000);
    now = at(0);
    assert.equal((await pay(w.id, '1')).status, 200);
    const [reads, remembered] = [await snapshots('read'), await snapshots('remembered')];
    // (second, expected: velocity_remaining after an allowed payment, or 'denied')
    const steps: Array<[number, number | 'denied']> = [
      [20, 1],
      [40, 0],
      [59, 'denied'],
      [60, 0],
      [61, 'denied'],
      [80, 0],
      [100.5, 0],
      [119, 'denied'],
    ];
    for (const [second, expected] of steps) {
      now = at(second);
      const res = await pay(w.id, '1');
      if (expected === 'denied') await expectDenied(res, 'velocity_cap', w.id);
      else {
        assert.equal(res.status, 200, `${second}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.headroom.velocity_remaining, expected, `at ${second} s`);
      }
      // The dry run reads the database: at the same instant it counts what the remembered window counted.
      const inWindow = [0, 20, 40, 60, 80, 100.5].filter((s) => s <= second && s > second - 60).length;
      const dry = await t.request('POST', `/v1/wallets/${w.id}/policy/evaluate`, {
        token,
        body: { to: SELLER, amount_usd: '0.000001' },
      });
      assert.deepEqual(
        { allowed: dry.body.allowed, remaining: dry.body.headroom.velocity_remaining },
        { allowed: inWindow < 3, remaining: Math.max(0, 2 - inWindow) },
        `dry run at ${second} s`,
      );
    }
    assert.equal(await snapshots('read'), reads, 'no payment read the wallet again');
    assert.equal((await snapshots('remembered')) - remembered, steps.length);
    assert.equal((await t.db.knex('authorizations').where({ wallet_id: w.id })).length, 6);
  });

  it('cooling_off refuses within N seconds of the last payment', async () => {
    const w = await wallet({ cooling_off: 30 });
    now = new Date('2026-11-22T12:00:00Z');
    assert.equal((await pay(w.id, '1')).status, 200);
    now = new Date('2026-11-22T12:00:29Z');
    await expectDenied(await pay(w.id, '1'), 'cooling_off', w.id);
    now = new Date('2026-11-22T12:00:30Z');
    assert.equal((await pay(w.id, '1')).status, 200);
  });

  it('counterparty_allowlist and counterparty_blocklist', async () => {
    const allow = await wallet({ counterparty_allowlist: [SELLER.toLowerCase()] });
    assert.equal((await pay(allow.id, '1')).status, 200);
    await expectDenied(
      await pay(allow.id, '1', { requirements: { payTo: OTHER } }),
      'counterparty_allowlist',
      allow.id,
    );
    const block = await wallet({ counterparty_blocklist: [OTHER] });
    assert.equal((await pay(block.id, '1')).status, 200);
    await expectDenied(
      await pay(block.id, '1', { requirements: { payTo: OTHER } }),
      'counterparty_blocklist',
      block.id,
    );
  });

  it('capability_cap_usd, and transfers refused fail-closed on such a wallet', async () => {
    const w = await wallet({ capability_cap_usd: { 'search.*': '0.01' } });
    assert.equal((await pay(w.id, usd(0.01), { capability: 'search.web' })).status, 200);
    await expectDenied(await pay(w.id, usd(0.02), { capability: 'search.web' }), 'capability_cap_usd', w.id);
    const transfer = await t.request('POST', `/v1/wallets/${w.id}/transfer`, {
      token,
      body: { to: SELLER, amount_usd: '0.001' },
    });
    assert.equal(transfer.status, 403);
    assert.equal(transfer.body.error_code, 'transfer_not_permitted_with_capability_cap');
    await expectDenied(transfer, 'transfer_not_permitted_with_capability_cap', w.id);
  });

  it('reports every violated rule at once', async () => {
    const w = await wallet({ per_tx_cap_usd: '0.01', daily_cap_usd: '0.01', counterparty_blocklist: [SELLER] });
    const res = await pay(w.id, usd(0.02));
    await expectDenied(res, 'per_tx_cap_usd', w.id);
    assert.deepEqual([...res.body.rules].sort(), ['counterparty_blocklist', 'daily_cap_usd', 'per_tx_cap_usd']);
  });

  it('transfer signs with the wallet chain USDC domain and counts against the caps', async () => {
    const w = await wallet({ daily_cap_usd: '1' });
    now = new Date('2026-11-22T12:00:00Z');
    const res = await t.request('POST', `/v1/wallets/${w.id}/transfer`, {
      token,
      body: { to: SELLER, amount_usd: '0.75' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.authorization.value, '750000');
    assert.equal(await recoverAuthorizationSigner(res.body.authorization, res.body.signature), w.address);
    await expectDenied(
      await t.request('POST', `/v1/wallets/${w.id}/transfer`, { token, body: { to: SELLER, amount_usd: '0.26' } }),
      'daily_cap_usd',
      w.id,
    );
  });

  it('Idempotency-Key: the same key and body return the stored result; another body is a 409', async () => {
    const w = await wallet({ daily_cap_usd: '1' });
    const first = await pay(w.id, usd(0.6), {}, { 'idempotency-key': 'order-42' });
    const again = await pay(w.id, usd(0.6), {}, { 'idempotency-key': 'order-42' });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, first.body);
    assert.equal((await t.db.knex('authorizations').where({ wallet_id: w.id })).length, 1);
    const conflict = await pay(w.id, usd(0.7), {}, { 'idempotency-key': 'order-42' });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.error_code, 'idempotency_key_conflict');
    const bad = await pay(w.id, '1', {}, { 'idempotency-key': 'bad key with spaces' });
    assert.equal(bad.body.error_code, 'invalid_idempotency_key');
  });

  it('Idempotency-Key with a number JSON cannot spell in an open field (1e400): 400 invalid_request naming it, nothing recorded', async () => {
    const w = await wallet({ daily_cap_usd: '1' });
    const body = JSON.stringify({ payment_requirements: requirements(usd(0.1)) }).replace(
      '"extra":{',
      '"extra":{"far":1e400,',
    );
    assert.match(body, /"far":1e400/);
    const res = await t.request('POST', `/v1/wallets/${w.id}/pay`, {
      token,
      rawBody: body,
      headers: { 'idempotency-key': 'order-far' },
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error_code, 'invalid_request');
    assert.match(res.body.user_message, /payment_requirements\.extra\.far/);
    assert.equal((await t.db.knex('authorizations').where({ wallet_id: w.id })).length, 0);
  });

  it('is atomic under a race: 20 concurrent payments against a cap that fits 5', async () => {
    const w = await wallet({ daily_cap_usd: '0.5' });
    const results = await Promise.all(Array.from({ length: 20 }, () => pay(w.id, usd(0.1))));
    assert.equal(results.filter((r) => r.status === 200).length, 5);
    assert.equal(results.filter((r) => r.status === 403).length, 15);
    const total = await t.db.knex('authorizations').where({ wallet_id: w.id }).sum({ s: 'amount_micro' });
    assert.equal(String(total[0]!.s), '500000');
  });

  it('policy/evaluate is a dry run: a decision and headroom, nothing signed or recorded', async () => {
    const w = await wallet({ daily_cap_usd: '1', per_tx_cap_usd: '0.5' });
    const ok = await t.request('POST', `/v1/wallets/${w.id}/policy/evaluate`, {
      token,
      body: { to: SELLER, amount_usd: '0.4' },
    });
    assert.equal(ok.status, 200);
    assert.deepEqual(
      { allowed: ok.body.allowed, headroom: ok.body.headroom },
      { allowed: true, headroom: { per_tx_usd: '0.5', daily_usd: '0.6' } },
    );
    const no = await t.request('POST', `/v1/wallets/${w.id}/policy/evaluate`, {
      token,
      body: { to: SELLER, amount_usd: '0.6' },
    });
    assert.equal(no.body.allowed, false);
    assert.deepEqual(
      no.body.violations.map((v: { rule: string }) => v.rule),
      ['per_tx_cap_usd'],
    );
    assert.equal((await t.db.knex('authorizations').where({ wallet_id: w.id })).length, 0);
    assert.equal((await t.db.knex('policy_decisions').where({ wallet_id: w.id })).length, 0);
  });

  it('PUT and GET policy, validated like POST /v1/wallets, and audited', async () => {
    const w = await wallet();
    const put = await t.request('PUT', `/v1/wallets/${w.id}/policy`, {
      token,
      body: { per_tx_cap_usd: '2', counterparty_allowlist: [SELLER.toLowerCase()] },
    });
    assert.equal(put.status, 200);
    assert.deepEqual(put.body.policy, { per_tx_cap_usd: '2', counterparty_allowlist: [SELLER] });
    const get = await t.request('GET', `/v1/wallets/${w.id}/policy`, { token });
    assert.deepEqual(get.body.policy, put.body.policy);
    const bad = await t.request('PUT', `/v1/wallets/${w.id}/policy`, { token, body: { per_tx_cap_usd: '1e2' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error_code, 'invalid_request');
    assert.match(bad.body.user_message, /per_tx_cap_usd/);
    assert.equal((await t.request('GET', `/v1/wallets/${w.id}/policy`, { token })).body.policy.per_tx_cap_usd, '2');
    const events = await t.db.knex('audit_events').where({ chain_key: w.id, event_type: 'policy.updated' });
    assert.equal(events.length, 1);
  });

  it('refuses terms it cannot honour, before touching a key', async () => {
    const w = await wallet();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ scheme: 'permit' }, 'scheme_not_supported'],
      [{ scheme: 'upto' }, 'upto_requirements_invalid'],
      [
        {
          scheme: 'upto',
          extra: { name: 'USDC', version: '2', facilitatorAddress: '0x0000000000000000000000000000000000000000' },
        },
        'upto_requirements_invalid',
      ],
      [
        { scheme: 'upto', extra: { facilitatorAddress: SELLER, assetTransferMethod: 'eip3009' } },
        'upto_requirements_invalid',
      ],
      [{ extra: {} }, 'missing_eip712_domain'],
      [{ extra: { name: 'USDC' } }, 'missing_eip712_domain'],
      [
        {
          network: 'eip155:8453',
          asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
          extra: { name: 'USD Coin', version: '2' },
        },
        'network_not_supported',
      ],
      [{ network: 'eip155:1' }, 'network_not_supported'],
      [{ asset: OTHER }, 'asset_not_supported'],
    ];
    const signsBefore = (await t.request('GET', '/metrics')).body.match(
      /treasury_signer_calls_total\{method="sign_transfer_authorization",outcome="ok"\} (\d+)/,
    )?.[1];
    for (const [override, code] of cases) {
      const res = await pay(w.id, '1', { requirements: override });
      assert.equal(res.body.error_code, code, JSON.stringify(override));
    }
    const signsAfter = (await t.request('GET', '/metrics')).body.match(
      /treasury_signer_calls_total\{method="sign_transfer_authorization",outcome="ok"\} (\d+)/,
    )?.[1];
    assert.equal(signsAfter, signsBefore);
    assert.equal((await t.db.knex('authorizations').where({ wallet_id: w.id })).length, 0);
  });

  it('decides on the snapshot its last write left behind, and never past a change of the wallet (policy, revocation)', async () => {
    const w = await wallet({ daily_cap_usd: '1' });
    const remembered = await snapshots('remembered');
    for (let i = 0; i < 3; i++) assert.equal((await pay(w.id, usd(0.25))).status, 200);
    assert.ok(
      (await snapshots('remembered')) - remembered >= 2,
      'the second and third payments did not read the wallet again',
    );
    // Tightened in between: the remembered snapshot holds the old policy; the write notices, the decision is taken again.
    assert.equal(
      (await t.request('PUT', `/v1/wallets/${w.id}/policy`, { token, body: { daily_cap_usd: '0.75' } })).status,
      200,
    );
    await expectDenied(await pay(w.id, usd(0.25)), 'daily_cap_usd', w.id);
    assert.equal(await daySpentMicro(t.db.knex, w.id), '750000');
    assert.equal((await t.db.knex('authorizations').where({ wallet_id: w.id })).length, 3);
    assert.equal(
      (await t.request('PUT', `/v1/wallets/${w.id}/policy`, { token, body: { daily_cap_usd: '5' } })).status,
      200,
    );
    assert.equal((await pay(w.id, usd(0.25))).status, 200);
    await t.request('POST', `/v1/wallets/${w.id}/revoke`, { token, body: ABANDON });
    assert.equal((await pay(w.id, usd(0.25))).status, 410);
    assert.equal((await verifyAuditChain(t.db.knex, w.id)).ok, true);
  });

  it('Idempotency-Keys: the first use of a key decides on the remembered snapshot; its reuse reads the wallet and gets the stored result or a 409', async () => {
    const w = await wallet({ daily_cap_usd: '1' });
    assert.equal((await pay(w.id, usd(0.25), {}, { 'idempotency-key': 'sdk-0' })).status, 200);
    const [reads, remembered] = [await snapshots('read'), await snapshots('remembered')];
    const signed: string[] = [];
    for (let i = 1; i <= 3; i++) {
      const res = await pay(w.id, usd(0.25), {}, { 'idempotency-key': `sdk-${i}` });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      signed.push(res.body.signature);
    }
    assert.equal(await snapshots('read'), reads, 'fresh keys did not read the wallet');
    assert.equal((await snapshots('remembered')) - remembered, 3);
    await expectDenied(await pay(w.id, usd(0.25), {}, { 'idempotency-key': 'sdk-4' }), 'daily_cap_usd', w.id);
    const again = await pay(w.id, usd(0.25), {}, { 'idempotency-key': 'sdk-2' });
    assert.equal(again.status, 200);
    assert.equal(again.body.signature, signed[1]);
    assert.equal((await pay(w.id, usd(0.5), {}, { 'idempotency-key': 'sdk-3' })).status, 409);
    assert.ok((await snapshots('read')) - reads >= 2, 'a key seen before reads the wallet');
    assert.equal((await t.db.knex('authorizations').where({ wallet_id: w.id })).length, 4);
    assert.equal(await daySpentMicro(t.db.knex, w.id), '1000000');
    assert.equal((await verifyAuditChain(t.db.knex, w.id)).ok, true);
  });

  it('answers 410 on a revoked wallet', async () => {
    const w = await wallet();
    await t.request('POST', `/v1/wallets/${w.id}/revoke`, { token, body: ABANDON });
    for (const res of [
      await pay(w.id, '1'),
      await t.request('POST', `/v1/wallets/${w.id}/transfer`, { token, body: { to: SELLER, amount_usd: '1' } }),
      await t.request('GET', `/v1/wallets/${w.id}/policy`, { token }),
    ]) {
      assert.equal(res.status, 410);
      assert.equal(res.body.error_code, 'wallet_revoked');
    }
  });

  it('signs a caller-proposed nonce and window within maxTimeoutSeconds; a reused nonce is 409, a window out of bounds 400', async () => {
    const w = await wallet({ daily_cap_usd: '10' });
    const nowS = Math.floor(Date.now() / 1000);
    const terms = { nonce: `0x${'ab'.repeat(32)}`, valid_after: '0', valid_before: String(nowS + 250) };
    const body = (authorization: Record<string, string>) => ({
      payment_requirements: requirements('10000'),
      authorization,
    });
    const ok = await t.request('POST', `/v1/wallets/${w.id}/pay`, { token, body: body(terms) });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(
      {
        nonce: ok.body.authorization.nonce,
        validAfter: ok.body.authorization.validAfter,
        validBefore: ok.body.authorization.validBefore,
      },
      { nonce: terms.nonce, validAfter: '0', validBefore: terms.valid_before },
    );
    // Recovered from the terms the buyer asked for, not from the answer's echo of them.
    const recovered = await recoverAuthorizationSigner(
      {
        from: w.address,
        to: SELLER,
        value: '10000',
        validAfter: '0',
        validBefore: terms.valid_before,
        nonce: terms.nonce,
      },
      ok.body.signature,
    );
    assert.equal(recovered, w.address);

    const reused = await t.request('POST', `/v1/wallets/${w.id}/pay`, { token, body: body(terms) });
    assert.equal(reused.status, 409);
    assert.equal(reused.body.error_code, 'nonce_already_used');
    const tooLong = await t.request('POST', `/v1/wallets/${w.id}/pay`, {
      token,
      body: body({ valid_before: String(nowS + 300 + 3600) }),
    });
    assert.equal(tooLong.status, 400);
    assert.equal(tooLong.body.error_code, 'invalid_authorization_terms');
    const future = await t.request('POST', `/v1/wallets/${w.id}/pay`, {
      token,
      body: body({ valid_after: String(nowS + 600) }),
    });
    assert.equal(future.body.error_code, 'invalid_authorization_terms');
    const hostile = await t.request('POST', `/v1/wallets/${w.id}/pay`, { token, body: body({ nonce: '0x1234' }) });
    assert.equal(hostile.status, 400);
    const rows = await t.db.knex('authorizations').where({ wallet_id: w.id });
    assert.equal(rows.length, 1, 'nothing recorded for the refused ones');
    assert.equal(await daySpentMicro(t.db.knex, w.id), '10000');
  });

  it('concurrent payments of one wallet: a reused nonce among them is refused alone, the others sign, the chain holds', async () => {
    const w = await wallet({ daily_cap_usd: '1' });
    const nowS = Math.floor(Date.now() / 1000);
    const nonce = `0x${'ef'.repeat(32)}`;
    const retries = async () =>
      Number(
        (await t.request('GET', '/metrics')).body.match(
          /treasury_pay_conflict_retries_total\{kind="pay"\} (\d+)/,
        )?.[1] ?? 0,
      );
    const retriesBefore = await retries();
    const body = (authorization?: Record<string, string>) => ({
      payment_requirements: requirements('10000'),
      ...(authorization ? { authorization } : {}),
    });
    assert.equal(
      (
        await t.request('POST', `/v1/wallets/${w.id}/pay`, {
          token,
          body: body({ nonce, valid_after: '0', valid_before: String(nowS + 250) }),
        })
      ).status,
      200,
    );
    // The wallet's payments decide while earlier ones are still being written, and share statements: the one
    // that reuses the nonce fails its statement, and every payment in it is taken again on its own.
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        t.request('POST', `/v1/wallets/${w.id}/pay`, {
          token,
          body: body(i === 12 ? { nonce, valid_after: '0', valid_before: String(nowS + 250) } : undefined),
        }),
      ),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [...Array(23).fill(200), 409].sort());
    assert.equal(results[12]!.body.error_code, 'nonce_already_used');
    const signed = await t.db.knex('authorizations').where({ wallet_id: w.id, status: 'signed' });
    assert.equal(signed.length, 24);
    assert.equal(new Set(signed.map((r: any) => r.signature)).size, 24);
    const day = await t.db.knex('wallet_spend_totals').where({ wallet_id: w.id, window_kind: 'day' }).first();
    assert.deepEqual([String(day.spent_micro), Number(day.payment_count)], ['240000', 24]);
    assert.ok((await retries()) > retriesBefore, 'the refused write was taken again on its own before its answer');
    assert.equal((await verifyAuditChain(t.db.knex, w.id)).ok, true);
    // A failed statement (the reused nonce) fails on a connection that stays usable: each writer still has its first.
    const metrics = (await t.request('GET', '/metrics')).body as string;
    for (const writer of ['decision_write', 'signature_record']) {
      assert.equal(
        metrics.match(
          new RegExp(`treasury_pay_statement_connections_opened_total\\{writer="${writer}"\\} (\\d+)`),
        )?.[1],
        '1',
        writer,
      );
    }
  });
});
