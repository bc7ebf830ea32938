/**
 * Settlements of Solana `exact` payments reported back, with nothing faked: the offline chain of
 * ops/solana/local-solana.ts (litesvm behind an RPC, its facilitator settling), an official `@x402/svm` seller
 * (../unit/sdk/solana-buyer-fixtures.ts) that is NOT on Treasury (no ledger row will ever name the payment),
 * Treasury (PostgreSQL + SoftHSM holding the wallet's Ed25519 key, TREASURY_SOLANA_RPC_URL = the chain).
 * - The SDK pays, reports the receipt's transaction signature in the background; Treasury reads it from the
 *   chain, checks it is the very message the wallet signed, and both history views show the payment
 *   `settled` with that signature; the audit chain holds `payment.settled`.
 * - A forged report (the same wallet's other payment to the same payee for the same amount, another wallet's
 *   payment, Treasury's own signature instead of the transaction's id, a signature never seen, an EVM hash) is
 *   refused with a stable code and changes nothing; the same report twice answers the same; another account's
 *   bearer, or another wallet's path, gets 404.
 * - `xx buy --network solana-devnet` reports through the SDK and waits for it: `xx history` right after shows
 *   the payment settled with the receipt's signature.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { pino } from 'pino';
import { startLocalSolana, type LocalSolana } from '../../ops/solana/local-solana.js';
import { verifyAuditChain } from '../../src/api/audit/audit-ledger.js';
import { createX402Buyer, type X402Result } from '../../src/sdk/index.js';
import { startTestTreasury, type TestTreasury } from '../support/api-harness.js';
import { signInWithNewKey } from '../support/sign-in.js';
import { fileTempDir } from '../support/temp-dirs.js';
import { agentBuyer, type AgentBuyer } from '../support/x402-e2e-fixture.js';
import { runXx, stdoutJson } from '../integration/cli/xx-process.js';
import { SOLANA_DEVNET, startSolanaSeller, type SolanaSeller } from '../unit/sdk/solana-buyer-fixtures.js';

const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/;

interface PaymentRow {
  id: string;
  status: string;
  tx_hash: string | null;
  tx_hash_source: string | null;
  settled_usd: string | null;
}

describe('Solana exact settlements reported back: an official @x402/svm seller not on Treasury, the SDK reports, every history shows settled', function () {
  this.timeout(300_000);
  let solana: LocalSolana;
  let seller: SolanaSeller;
  let t: TestTreasury;
  let agent: AgentBuyer;

  const newFundedWallet = async (label: string) => {
    const made = await t.request('POST', `/v1/agents/${agent.agentId}/wallets`, {
      token: agent.session,
      body: { chain: 'solana-devnet', label },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.network, SOLANA_DEVNET);
    await solana.faucet.fundUsdc(made.body.address as never, 1_000_000n);
    return made.body as { id: string; address: string };
  };
  const pay = async (walletId: string, recordSettlements?: boolean): Promise<X402Result> => {
    const buyer = createX402Buyer({
      client: agent.client,
      walletId,
      maxPriceUsd: '0.05',
      ...(recordSettlements === undefined ? {} : { recordSettlements }),
    });
    const result = await buyer.request(`${seller.url}/solana`);
    assert.equal(result.status, 200, result.body);
    assert.equal(result.network, SOLANA_DEVNET);
    assert.match(result.receipt?.transaction ?? '', SIGNATURE);
    return result;
  };
  const history = async (path: string, id: string): Promise<PaymentRow | undefined> => {
    const res = await t.request('GET', path, { token: agent.pat.pat });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return (res.body.payments as PaymentRow[]).find((p) => p.id === id);
  };
  const report = (walletId: string, authorizationId: string, transaction: string, token?: string) =>
    t.request('POST', `/v1/wallets/${walletId}/authorizations/${authorizationId}/settlement`, {
      token: token ?? agent.pat.pat,
      body: { transaction },
    });

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    seller = await startSolanaSeller(solana);
    t = await startTestTreasury({
      extraEnv: { TREASURY_SOLANA_RPC_URL: solana.rpcUrl, TREASURY_RPC_TIMEOUT_MS: '20000' },
    });
    agent = await agentBuyer(t, { label: 'solana settlement buyer' });
  });
  after(async () => {
    await t?.stop();
    await seller?.close();
    await solana?.stop();
  });

  it('the SDK reports the signature; Treasury verifies it on chain; both history views show settled with it', async () => {
    const w = await newFundedWallet('reported');
    const paid = await pay(w.id);
    const quiet = await pay(w.id, false);
    const tx = paid.receipt!.transaction;
    const id = paid.payment!.authorization_id;

    const reported = await paid.settlementReport;
    assert.deepEqual(
      reported?.settlement && {
        scheme: reported.settlement.scheme,
        network: reported.settlement.network,
        tx: reported.settlement.transaction,
        settled: reported.settlement.settled_usd,
        back: reported.settlement.given_back_usd,
        replayed: reported.settlement.replayed,
      },
      { scheme: 'exact', network: SOLANA_DEVNET, tx, settled: '0.01', back: '0', replayed: false },
      `report: ${JSON.stringify(reported)}`,
    );
    assert.equal(quiet.settlementReport, undefined, 'recordSettlements: false reports nothing');
    const settled = { status: 'settled', tx_hash: tx, tx_hash_source: 'settlement', settled_usd: '0.01' };
    for (const view of [`/v1/wallets/${w.id}/payments`, `/v1/agents/${agent.agentId}/payments`]) {
      const row = await history(view, id);
      assert.deepEqual(
        row && {
          status: row.status,
          tx_hash: row.tx_hash,
          tx_hash_source: row.tx_hash_source,
          settled_usd: row.settled_usd,
        },
        settled,
        view,
      );
      assert.equal((await history(view, quiet.payment!.authorization_id))?.status, 'signed', view);
    }
    const events = await t.db.knex('audit_events').where({ chain_key: w.id, event_type: 'payment.settled' });
    assert.deepEqual(
      events.map((e: { payload: Record<string, unknown> }) => [e.payload.authorization_id, e.payload.transaction]),
      [[id, tx]],
    );
    assert.equal((await verifyAuditChain(t.db.knex, w.id)).ok, true);
  });

  it('a forged report is refused and changes nothing; the same report twice answers the same; other tenants get 404', async () => {
    const w = await newFundedWallet('forged');
    const other = await newFundedWallet('other wallet');
    const a = await pay(w.id, false);
    const b = await pay(w.id, false);
    const c = await pay(other.id, false);
    const idA = a.payment!.authorization_id;
    const [txA, txB, txC] = [a.receipt!.transaction, b.receipt!.transaction, c.receipt!.transaction];
    const auditRows = async () => (await t.db.knex('audit_events').where({ chain_key: w.id })).length;
    const stored = async () =>
      (await t.db.knex('authorizations').where({ wallet_id: w.id }).orderBy('id')).map(
        (r: { settlement_tx: string | null; settled_raw: string | null }) => [r.settlement_tx, r.settled_raw],
      );
    const before = { audit: await auditRows(), rows: await stored() };

    const refusals: Array<[string, string, string, number, string, string?]> = [
      [
        "the same wallet's other payment (same payee, same amount)",
        w.id,
        txB,
        422,
        'settlement_not_verified',
        'authorization_mismatch',
      ],
      ["another wallet's payment", w.id, txC, 422, 'settlement_not_verified', 'authorization_mismatch'],
      [
        "Treasury's own signature, not the transaction's id",
        w.id,
        a.payment!.signature,
        422,
        'settlement_not_verified',
      ],
      [
        'a signature never seen',
        w.id,
        getBase58Decoder().decode(randomBytes(64)),
        422,
        'settlement_not_verified',
        'transaction_not_found',
      ],
      ['an EVM transaction hash', w.id, `0x${'ab'.repeat(32)}`, 400, 'invalid_request'],
      ['not a transaction at all', w.id, 'l0l', 400, 'invalid_request'],
      ["another wallet's path", other.id, txA, 404, 'authorization_not_found'],
    ];
    for (const [what, walletId, transaction, status, code, reason] of refusals) {
      const res = await report(walletId, idA, transaction);
      assert.equal(res.status, status, `${what}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error_code, code, what);
      if (reason) assert.equal(res.body.reason, reason, what);
    }
    const stranger = await signInWithNewKey(t);
    const strangerPat = (
      await t.request('POST', '/v1/pats', { token: stranger.session, body: { scope_type: 'agent' } })
    ).body.pat as string;
    const foreign = await report(w.id, idA, txA, strangerPat);
    assert.equal(foreign.status, 404, JSON.stringify(foreign.body));
    assert.deepEqual({ audit: await auditRows(), rows: await stored() }, before, 'nothing changed');
    assert.equal((await history(`/v1/wallets/${w.id}/payments`, idA))?.status, 'signed');

    const first = await report(w.id, idA, txA);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(
      [first.body.scheme, first.body.transaction, first.body.settled_usd, first.body.replayed],
      ['exact', txA, '0.01', false],
    );
    const again = await report(w.id, idA, txA);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual({ ...again.body, replayed: false }, first.body, 'the same answer');
    assert.equal(again.body.replayed, true);
    const otherTx = await report(w.id, idA, txB);
    assert.deepEqual([otherTx.status, otherTx.body.error_code], [409, 'settlement_already_recorded']);
    assert.equal(await auditRows(), before.audit + 1, 'one payment.settled event');
  });

  it('xx buy --network solana-devnet reports and waits for it: xx history right after shows the payment settled', async () => {
    const w = await newFundedWallet('cli');
    const env = {
      HOME: fileTempDir('xx-solana-settlement-'),
      XX_PAT: agent.pat.pat,
      XX_API_URL: t.baseUrl,
      NO_COLOR: '1',
    };
    const bought = stdoutJson(
      await runXx(['buy', `${seller.url}/solana`, '--wallet', w.id, '--max', '0.05', '--json'], env),
      'xx buy',
    );
    const tx = String(bought.receipt?.txHash);
    assert.match(tx, SIGNATURE);
    assert.deepEqual(
      [
        bought.settlement?.transaction,
        bought.settlement?.settled,
        bought.settlement?.given_back,
        bought.settlement_error,
      ],
      [tx, '0.01', '0', undefined],
    );
    const page = stdoutJson(await runXx(['history', '--wallet', w.id, '--json'], env), 'xx history');
    assert.deepEqual(
      (page.payments as PaymentRow[]).map((p) => [p.status, p.tx_hash]),
      [['settled', tx]],
    );
  });
});
