/**
 * Settlements of x402 `exact` (EIP-3009) payments reported back, with nothing faked: anvil with the EIP-3009
 * test USDC, the local facilitator built on the official packages, an official @x402/express seller that is
 * NOT on Treasury (no ledger row will ever name the payment), Treasury (PostgreSQL + SoftHSM) holding the key.
 * - The SDK pays, reports the receipt's transaction in the background; Treasury verifies it on chain and every
 *   history view (the wallet's and the agent's payments) shows the payment `settled` with that transaction —
 *   also once its authorization's window has closed (never `expired`); nothing is given back, the audit chain
 *   holds `payment.settled`.
 * - A forged report (another authorization's transaction, a transaction without the authorization, a hash
 *   never mined) is refused with a stable code and changes nothing; the same report twice answers the same;
 *   another account's bearer, or another wallet's path, gets 404.
 * - A report before the depth the network requires is 409 settlement_unconfirmed, nothing stored; once deep
 *   enough it is recorded.
 * - `xx buy` (the real binary) reports through the SDK and waits for it: `xx history` right after shows the
 *   payment settled with the receipt's transaction.
 */
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { createX402Buyer, type X402Result } from 'treasury/sdk';
import { verifyAuditChain } from '../../src/api/audit/audit-ledger.js';
import { LoopbackServers } from '../support/loopback-servers.js';
import { startTestTreasury, type TestTreasury } from '../support/api-harness.js';
import { fundFromFaucet, startTestChain } from '../support/chain-harness.js';
import { mineBlocks } from '../support/seller-pay-to.js';
import { signInWithNewKey } from '../support/sign-in.js';
import { fileTempDir } from '../support/temp-dirs.js';
import { runXx, stdoutJson } from '../integration/cli/xx-process.js';
import { agentBuyer, expressSeller, newAgentWallet, type AgentBuyer } from '../support/x402-e2e-fixture.js';

const USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const NETWORK = 'eip155:84532';

interface PaymentRow {
  id: string;
  status: string;
  tx_hash: string | null;
  tx_hash_source: string | null;
  settled_usd: string | null;
}

describe('exact settlements reported back: an official seller not on Treasury, the SDK reports, every history shows settled', function () {
  this.timeout(240_000);
  let chain: Awaited<ReturnType<typeof startTestChain>>;
  let t: TestTreasury;
  let agent: AgentBuyer;
  let url: string;
  let fundingTx: `0x${string}`;
  /** Treasury's clock runs this far ahead of the wall clock (to read histories after a window closed). */
  let skewMs = 0;
  const servers = new LoopbackServers();
  const payTo = privateKeyToAccount(generatePrivateKey()).address;

  const newFundedWallet = async (label: string) => {
    const w = await newAgentWallet(t, agent.agentId, agent.pat.pat, label);
    fundingTx = (await fundFromFaucet(chain, w.address, '1')).tx_hash;
    return w;
  };
  const pay = async (walletId: string, recordSettlements?: boolean): Promise<X402Result> => {
    const buyer = createX402Buyer({
      client: agent.client,
      walletId,
      maxPriceUsd: '0.05',
      ...(recordSettlements === undefined ? {} : { recordSettlements }),
    });
    const result = await buyer.request(`${url}/weather`);
    assert.equal(result.status, 200, result.body);
    assert.equal(result.payment?.scheme, 'exact');
    assert.match(result.receipt?.transaction ?? '', /^0x[0-9a-f]{64}$/);
    return result;
  };
  const history = async (path: string, id: string): Promise<PaymentRow | undefined> => {
    const res = await t.request('GET', path, { token: agent.pat.pat });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return (res.body.payments as PaymentRow[]).find((p) => p.id === id);
  };
  const report = (
    target: TestTreasury,
    walletId: string,
    authorizationId: string,
    transaction: string,
    token?: string,
  ) =>
    target.request('POST', `/v1/wallets/${walletId}/authorizations/${authorizationId}/settlement`, {
      token: token ?? agent.pat.pat,
      body: { transaction },
    });

  before(async () => {
    chain = await startTestChain();
    t = await startTestTreasury({
      extraEnv: { TREASURY_RPC_URLS: JSON.stringify({ [NETWORK]: chain.rpcUrl }) },
      clock: () => new Date(Date.now() + skewMs),
    });
    agent = await agentBuyer(t, { label: 'exact settlement buyer' });
    url = await expressSeller(
      servers,
      chain.facilitatorUrl,
      [new ExactEvmServerScheme()],
      {
        'GET /weather': {
          accepts: {
            scheme: 'exact',
            network: NETWORK,
            payTo,
            price: { asset: USDC, amount: '10000', extra: { name: 'USDC', version: '2' } },
            maxTimeoutSeconds: 120,
          },
          description: 'weather',
          mimeType: 'application/json',
        },
      },
      { '/weather': (_req, res) => void res.json({ weather: 'rain' }) },
    );
  });
  after(async () => {
    skewMs = 0;
    await servers.closeAll();
    await t?.stop();
    await chain?.stop();
  });

  it('the SDK reports the settlement; Treasury verifies it on chain; both history views show settled with the tx, never expired', async () => {
    const w = await newFundedWallet('reported');
    const paid = await pay(w.id);
    const quiet = await pay(w.id, false);
    const tx = paid.receipt!.transaction.toLowerCase();
    const id = paid.payment!.authorization_id;

    const reported = await paid.settlementReport;
    const settled = { status: 'settled', tx_hash: tx, tx_hash_source: 'settlement', settled_usd: '0.01' };
    const pick = (row: PaymentRow | undefined) =>
      row && {
        status: row.status,
        tx_hash: row.tx_hash,
        tx_hash_source: row.tx_hash_source,
        settled_usd: row.settled_usd,
      };
    const views = [`/v1/wallets/${w.id}/payments`, `/v1/agents/${agent.agentId}/payments`];
    for (const view of views) assert.deepEqual(pick(await history(view, id)), settled, view);

    assert.deepEqual(
      reported?.settlement && {
        scheme: reported.settlement.scheme,
        tx: reported.settlement.transaction,
        settled: reported.settlement.settled_usd,
        back: reported.settlement.given_back_usd,
        replayed: reported.settlement.replayed,
      },
      { scheme: 'exact', tx, settled: '0.01', back: '0', replayed: false },
      `report: ${JSON.stringify(reported)}`,
    );
    assert.equal(quiet.settlementReport, undefined, 'recordSettlements: false reports nothing');

    // Nothing given back (the whole value settled), the event in the wallet's audit chain.
    const [day] = await t.db.knex('wallet_spend_totals').where({ wallet_id: w.id, window_kind: 'day' });
    assert.equal(String(day.spent_micro), '20000');
    const events = await t.db.knex('audit_events').where({ chain_key: w.id, event_type: 'payment.settled' });
    assert.deepEqual(
      events.map((e: { payload: Record<string, unknown> }) => [e.payload.authorization_id, e.payload.transaction]),
      [[id, tx]],
    );
    assert.equal((await verifyAuditChain(t.db.knex, w.id)).ok, true);

    // Past the authorizations' windows: the settled one stays settled, the unreported one is expired.
    skewMs = 10 * 60_000;
    try {
      for (const view of views) {
        assert.deepEqual(pick(await history(view, id)), settled, `${view} after the window`);
        assert.equal((await history(view, quiet.payment!.authorization_id))?.status, 'expired', view);
      }
    } finally {
      skewMs = 0;
    }
  });

  it('a forged report is refused and changes nothing; the same report twice answers the same; other tenants get 404', async () => {
    const w = await newFundedWallet('forged');
    const other = await newFundedWallet('other wallet');
    const a = await pay(w.id, false);
    const b = await pay(w.id, false);
    const idA = a.payment!.authorization_id;
    const [txA, txB] = [a.receipt!.transaction, b.receipt!.transaction];
    const auditRows = async () => (await t.db.knex('audit_events').where({ chain_key: w.id })).length;
    const stored = async () =>
      (await t.db.knex('authorizations').where({ wallet_id: w.id }).orderBy('id')).map(
        (r: { settlement_tx: string | null; settled_raw: string | null }) => [r.settlement_tx, r.settled_raw],
      );
    const before = { audit: await auditRows(), rows: await stored() };

    const refusals: Array<[string, Awaited<ReturnType<typeof report>>, number, string, string?]> = [
      [
        "another authorization's settlement",
        await report(t, w.id, idA, txB),
        422,
        'settlement_not_verified',
        'authorization_mismatch',
      ],
      [
        'a transaction without the authorization',
        await report(t, w.id, idA, fundingTx),
        422,
        'settlement_not_verified',
        'authorization_mismatch',
      ],
      [
        'never mined',
        await report(t, w.id, idA, `0x${'ab'.repeat(32)}`),
        422,
        'settlement_not_verified',
        'transaction_not_found',
      ],
      ["another wallet's path", await report(t, other.id, idA, txA), 404, 'authorization_not_found'],
    ];
    const stranger = await signInWithNewKey(t);
    const strangerPat = (
      await t.request('POST', '/v1/pats', { token: stranger.session, body: { scope_type: 'agent' } })
    ).body.pat as string;
    const foreign = await report(t, w.id, idA, txA, strangerPat);
    assert.equal(foreign.status, 404, JSON.stringify(foreign.body));
    for (const [what, res, status, code, reason] of refusals) {
      assert.equal(res.status, status, `${what}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error_code, code, what);
      if (reason) assert.equal(res.body.reason, reason, what);
    }
    assert.deepEqual({ audit: await auditRows(), rows: await stored() }, before, 'nothing changed');
    assert.equal((await history(`/v1/wallets/${w.id}/payments`, idA))?.status, 'signed');

    const first = await report(t, w.id, idA, txA);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual([first.body.scheme, first.body.settled_usd, first.body.replayed], ['exact', '0.01', false]);
    const again = await report(t, w.id, idA, txA.toUpperCase().replace('0X', '0x'));
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual({ ...again.body, replayed: false }, first.body, 'the same answer');
    assert.equal(again.body.replayed, true);
    const otherTx = await report(t, w.id, idA, txB);
    assert.deepEqual([otherTx.status, otherTx.body.error_code], [409, 'settlement_already_recorded']);
    assert.equal(await auditRows(), before.audit + 1, 'one payment.settled event');
  });

  it('before the depth the network requires: 409 settlement_unconfirmed with the confirmations, nothing stored; then recorded', async () => {
    const deep = await startTestTreasury({
      database: t.db,
      extraEnv: {
        TREASURY_RPC_URLS: JSON.stringify({ [NETWORK]: chain.rpcUrl }),
        TREASURY_LEDGER_CONFIRMATIONS: JSON.stringify({ [NETWORK]: 3 }),
      },
    });
    try {
      const w = await newFundedWallet('deep');
      const paid = await pay(w.id, false);
      const tx = paid.receipt!.transaction as `0x${string}`;
      const id = paid.payment!.authorization_id;
      const depth = async () =>
        Number(
          (await chain.publicClient.getBlockNumber({ cacheTime: 0 })) -
            (await chain.publicClient.getTransactionReceipt({ hash: tx })).blockNumber,
        ) + 1;
      const now = await depth();
      assert.ok(now < 3, `the settlement is ${now} blocks deep already`);
      for (let blocks = now; blocks < 3; blocks++) {
        const shallow = await report(deep, w.id, id, tx);
        assert.equal(shallow.status, 409, JSON.stringify(shallow.body));
        assert.deepEqual(
          [shallow.body.error_code, shallow.body.confirmations, shallow.body.required_confirmations],
          ['settlement_unconfirmed', blocks, 3],
        );
        const [row] = await t.db.knex('authorizations').where({ id });
        assert.equal(row.settlement_tx, null, 'nothing stored');
        await mineBlocks(chain.rpcUrl, 1);
      }
      const deepEnough = await report(deep, w.id, id, tx);
      assert.equal(deepEnough.status, 200, JSON.stringify(deepEnough.body));
      assert.equal((await history(`/v1/wallets/${w.id}/payments`, id))?.status, 'settled');
    } finally {
      await deep.stop();
    }
  });

  it('xx buy reports and waits for it: xx history right after shows the payment settled with its transaction', async () => {
    const w = await newFundedWallet('cli');
    const env = {
      HOME: fileTempDir('xx-exact-settlement-'),
      XX_PAT: agent.pat.pat,
      XX_API_URL: t.baseUrl,
      NO_COLOR: '1',
    };
    const bought = stdoutJson(
      await runXx(['buy', `${url}/weather`, '--wallet', w.id, '--max', '0.05', '--json'], env),
      'xx buy',
    );
    const tx = String(bought.receipt?.txHash).toLowerCase();
    assert.match(tx, /^0x[0-9a-f]{64}$/);
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
