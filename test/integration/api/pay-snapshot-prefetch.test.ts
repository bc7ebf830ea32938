/**
 * A new wallet's snapshot read ahead of its first payment (src/api/pay/prefetch-snapshot.ts), through HTTP,
 * SoftHSM and PostgreSQL: the first payment decides on it without reading; and it is only ever a guess — a
 * wallet revoked, a policy tightened, or a payment made through another API process before the first
 * payment here is answered as a read would answer it.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import pino from 'pino';
import { createTreasuryApp, type TreasuryApp } from '../../../src/api/app.js';
import { loadAppConfig } from '../../../src/api/config/app-config.js';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { daySpentMicro } from '../../support/spend-totals.js';

const usd = (n: number) => String(Math.round(n * 1_000_000));

describe('a wallet snapshot prefetched at creation (HTTP, SoftHSM, PostgreSQL)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let token: string;
  /** A second API process's app on the same database and signer. */
  let other: TreasuryApp;
  let otherServer: http.Server;
  let otherUrl: string;

  before(async () => {
    t = await startTestTreasury();
    token = await mintAgentKey(t, 'prefetch');
    const config = loadAppConfig({
      TREASURY_SIGNER_SOCKET: t.signer.socketPath,
      DATABASE_URL: t.db.connectionString,
      TREASURY_LOG_LEVEL: 'silent',
      TREASURY_PUBLIC_URL: 'http://treasury.test',
    });
    other = createTreasuryApp({ config, knex: t.db.knex, log: pino({ level: 'silent' }) });
    otherServer = await other.listen(0, '127.0.0.1');
    otherUrl = `http://127.0.0.1:${(otherServer.address() as { port: number }).port}`;
  });
  after(async () => {
    await other?.close();
    await t?.stop();
  });

  /** treasury_pay_snapshots_total{source} of the first API process. */
  const snapshots = async (source: 'read' | 'remembered' | 'prefetched') =>
    Number(
      (await t.request('GET', '/metrics')).body.match(
        new RegExp(`treasury_pay_snapshots_total\\{source="${source}"\\} (\\d+)`),
      )?.[1] ?? 0,
    );

  /** A new wallet, once the first API process remembers its snapshot. */
  async function prefetchedWallet(policy: Record<string, unknown>) {
    const before = await snapshots('prefetched');
    const res = await t.request('POST', '/v1/wallets', { token, body: { policy } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    for (let i = 0; i < 100 && (await snapshots('prefetched')) === before; i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.equal(await snapshots('prefetched'), before + 1, 'the snapshot was read ahead');
    return res.body as { id: string };
  }

  const payBody = (amountUsd: number) => ({
    payment_requirements: paymentRequirements({ amount: usd(amountUsd), maxTimeoutSeconds: 300 }),
  });
  const pay = (walletId: string, amountUsd: number) =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, { token, body: payBody(amountUsd) });

  it("decides a new wallet's first payment on the snapshot read when it was created, without reading it", async () => {
    const w = await prefetchedWallet({ per_tx_cap_usd: '1' });
    const [reads, remembered] = [await snapshots('read'), await snapshots('remembered')];
    const res = await pay(w.id, 0.5);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(await snapshots('read'), reads, 'the first payment did not read the wallet');
    assert.equal((await snapshots('remembered')) - remembered, 1);
  });

  it('answers 410 for a wallet revoked between its creation and its first payment', async () => {
    const w = await prefetchedWallet({});
    const revoked = await t.request('POST', `/v1/wallets/${w.id}/revoke`, { token, body: { abandon_balance: true } });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    const res = await pay(w.id, 0.5);
    assert.equal(res.status, 410, JSON.stringify(res.body));
    assert.equal(res.body.error_code, 'wallet_revoked');
    assert.equal((await t.db.knex('authorizations').where({ wallet_id: w.id })).length, 0);
  });

  it('applies a policy tightened between the creation and the first payment', async () => {
    const w = await prefetchedWallet({ per_tx_cap_usd: '1' });
    const put = await t.request('PUT', `/v1/wallets/${w.id}/policy`, { token, body: { per_tx_cap_usd: '0.25' } });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const res = await pay(w.id, 0.5);
    assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.equal(res.body.rule, 'per_tx_cap_usd');
  });

  it('counts a payment another API process made first: the daily cap holds against the prefetched snapshot', async () => {
    const w = await prefetchedWallet({ daily_cap_usd: '1' });
    const elsewhere = await fetch(`${otherUrl}/v1/wallets/${w.id}/pay`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(payBody(0.8)),
    });
    assert.equal(elsewhere.status, 200, await elsewhere.text());
    // This process remembers the wallet with nothing spent: its write fails on the audit chain, it reads again.
    const res = await pay(w.id, 0.5);
    assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.equal(res.body.rule, 'daily_cap_usd');
    assert.equal(await daySpentMicro(t.db.knex, w.id), '800000');
  });
});
