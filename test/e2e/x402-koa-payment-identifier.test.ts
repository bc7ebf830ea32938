/**
 * x402 `payment-identifier`, seller side, with nothing faked: anvil with the test USDC, the local facilitator
 * on the official @x402 packages, Treasury as the seller platform, the official @x402/fetch client (with
 * `onBeforePaymentCreation` + `appendPaymentIdentifierToExtensions`) and our Koa middleware.
 * - the client lost the answer and resends the same payment with the same id: the stored answer (same body,
 *   same PAYMENT-RESPONSE), one settlement on chain, one ledger row, the paid work run once;
 * - another payment under the same id (the same payer's, or another payer's) → 409, nothing paid or served;
 * - `required: true` and no id → 400; hostile ids → 400, nothing stored, nothing paid.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Koa from 'koa';
import { privateKeyToAccount } from 'viem/accounts';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier';
import { wrapFetchWithPayment } from '@x402/fetch';
import { x402Koa } from 'treasury/koa';
import { MemoryPaymentIdentifierStore } from '../../src/x402/seller/payment-identifier-memory-store.js';
import { startTestTreasury, type TestTreasury } from '../support/api-harness.js';
import { anvilDevAccount, fundFromFaucet, readTokenBalance, startTestChain } from '../support/chain-harness.js';
import { LoopbackServers } from '../support/loopback-servers.js';
import { newProvenSeller, waitForLedgerRow, type ProvenSeller } from '../support/seller-pay-to.js';
import { signInWithNewKey } from '../support/sign-in.js';

const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../vectors/hostile-inputs.json'), 'utf8'),
) as { any: unknown[]; identifier: string[] };

const NETWORK = 'eip155:84532';
const PRICE_RAW = 10_000n;

describe('x402 payment-identifier: the official client → our Koa seller → local facilitator → anvil', function () {
  this.timeout(180_000);
  let chain: Awaited<ReturnType<typeof startTestChain>>;
  let t: TestTreasury;
  let seller: ProvenSeller;
  const servers = new LoopbackServers();
  const store = new MemoryPaymentIdentifierStore({ retentionSeconds: 3600, maxEntries: 100, maxTotalBytes: 1 << 20 });
  let optionalUrl: string;
  let requiredUrl: string;
  let runs = 0;

  before(async () => {
    chain = await startTestChain();
    t = await startTestTreasury({ extraEnv: { TREASURY_RPC_URLS: JSON.stringify({ [NETWORK]: chain.rpcUrl }) } });
    const { session } = await signInWithNewKey(t);
    seller = await newProvenSeller(t, session, 'Reports', 'direct');
    const ep = await t.request('POST', `/v1/sellers/${seller.seller_id}/endpoints`, {
      token: seller.pat,
      body: { path: '/report', method: 'GET', price: '0.01' },
    });
    assert.equal(ep.status, 201, JSON.stringify(ep.body));
    const app = (paymentIdentifier: Parameters<typeof x402Koa>[0]['payment_identifier']) => {
      const koa = new Koa();
      koa.use(
        x402Koa({
          token: seller.pat,
          price: '0.01',
          pay_to: seller.payTo.address,
          facilitator_url: chain.facilitatorUrl,
          api_url: t.baseUrl,
          env: {},
          payment_identifier: paymentIdentifier,
        }),
      );
      koa.use((ctx) => {
        runs += 1;
        ctx.type = 'application/json';
        ctx.body = JSON.stringify({ report: 'quarterly', run: runs });
      });
      return servers.listen(koa.callback());
    };
    optionalUrl = await app({ store });
    requiredUrl = await app({ required: true });
  });
  after(async () => {
    await servers.closeAll();
    await t?.stop();
    await chain?.stop();
  });

  /** An official buyer whose payments carry `id()` (undefined: no id). */
  function buyer(index: number, id: () => string | undefined) {
    const account = anvilDevAccount(index);
    const client = new x402Client().register(NETWORK, new ExactEvmScheme(privateKeyToAccount(account.privateKey)));
    client.onBeforePaymentCreation(async ({ paymentRequired }) => {
      const chosen = id();
      if (chosen !== undefined && paymentRequired.extensions)
        appendPaymentIdentifierToExtensions(paymentRequired.extensions, chosen);
    });
    const http = new x402HTTPClient(client);
    /** A payment header for `url`'s challenge. */
    async function payFor(url: string): Promise<Record<string, string>> {
      const challenge = await fetch(url);
      const required = http.getPaymentRequiredResponse((n) => challenge.headers.get(n), await challenge.json());
      return http.encodePaymentSignatureHeader(await http.createPaymentPayload(required));
    }
    return { account, client, payFor };
  }

  /** Every header the official fetch wrapper sent, per request. */
  function recordingFetch(sent: Headers[]): typeof fetch {
    return (input, init) => {
      sent.push(new Headers((input instanceof Request ? input.headers : init?.headers) ?? {}));
      return fetch(input, init);
    };
  }

  it('the challenge declares payment-identifier (required as configured)', async () => {
    const optional = (await (await fetch(`${optionalUrl}/report`)).json()) as { extensions: Record<string, any> };
    assert.equal(optional.extensions['payment-identifier'].info.required, false);
    assert.equal(optional.extensions['payment-identifier'].schema.properties.id.pattern, '^[a-zA-Z0-9_-]+$');
    const required = (await (await fetch(`${requiredUrl}/report`)).json()) as { extensions: Record<string, any> };
    assert.equal(required.extensions['payment-identifier'].info.required, true);
  });

  it('a lost answer: the same payment resent with its id gets the stored answer; one settlement, one ledger row', async () => {
    const id = generatePaymentId();
    const b = buyer(5, () => id);
    await fundFromFaucet(chain, b.account.address, '1');
    const before = await readTokenBalance(chain, b.account.address);
    const sent: Headers[] = [];
    const first = await wrapFetchWithPayment(recordingFetch(sent), b.client)(`${optionalUrl}/report`);
    const firstBody = await first.text();
    assert.equal(first.status, 200, firstBody);
    const runsAfterFirst = runs;
    const header = sent.at(-1)!.get('payment-signature');
    assert.ok(header, 'the paid request carried PAYMENT-SIGNATURE');

    const retry = await fetch(`${optionalUrl}/report`, { headers: { 'PAYMENT-SIGNATURE': header } });
    assert.equal(retry.status, 200);
    assert.equal(await retry.text(), firstBody);
    assert.equal(retry.headers.get('payment-response'), first.headers.get('payment-response'));
    assert.equal(retry.headers.get('x-payment-response'), first.headers.get('payment-response'));
    assert.equal(retry.headers.get('content-type'), first.headers.get('content-type'));
    assert.equal(runs, runsAfterFirst, 'the paid work did not run again');

    assert.equal(await readTokenBalance(chain, b.account.address), before - PRICE_RAW, 'paid once');
    const receipt = decodePaymentResponseHeader(first.headers.get('payment-response')!);
    await waitForLedgerRow(t, seller.pat, receipt.transaction, () => true);
    const rows = (await t.request('GET', '/v1/ledger?limit=200', { token: seller.pat })).body.entries as unknown[];
    const again = await fetch(`${optionalUrl}/report`, { headers: { 'PAYMENT-SIGNATURE': header } });
    assert.equal(again.status, 200);
    await new Promise((r) => setTimeout(r, 300));
    const after = (await t.request('GET', '/v1/ledger?limit=200', { token: seller.pat })).body.entries as unknown[];
    assert.equal(after.length, rows.length, 'a replay reports no ledger row');
  });

  it('another payment under the same id → 409 payment_identifier_conflict, nothing paid or served', async () => {
    const id = generatePaymentId();
    const b = buyer(6, () => id);
    await fundFromFaucet(chain, b.account.address, '1');
    const first = await fetch(`${optionalUrl}/report`, { headers: await b.payFor(`${optionalUrl}/report`) });
    assert.equal(first.status, 200);
    const before = await readTokenBalance(chain, b.account.address);
    const runsBefore = runs;
    const second = await fetch(`${optionalUrl}/report`, { headers: await b.payFor(`${optionalUrl}/report`) });
    assert.equal(second.status, 409);
    const body = (await second.json()) as { error_code: string };
    assert.equal(body.error_code, 'payment_identifier_conflict');
    assert.equal(second.headers.get('payment-response'), null);
    assert.equal(await readTokenBalance(chain, b.account.address), before, 'nothing paid');
    assert.equal(runs, runsBefore);
  });

  it('an id another payer used is not served to a stranger who learns it', async () => {
    const id = generatePaymentId();
    const owner = buyer(7, () => id);
    await fundFromFaucet(chain, owner.account.address, '1');
    const paid = await fetch(`${optionalUrl}/report`, { headers: await owner.payFor(`${optionalUrl}/report`) });
    assert.equal(paid.status, 200);
    const stranger = buyer(8, () => id);
    await fundFromFaucet(chain, stranger.account.address, '1');
    const before = await readTokenBalance(chain, stranger.account.address);
    const res = await fetch(`${optionalUrl}/report`, { headers: await stranger.payFor(`${optionalUrl}/report`) });
    assert.equal(res.status, 409);
    const text = await res.text();
    assert.ok(!text.includes('quarterly'), 'the stored answer is not served');
    assert.equal(JSON.parse(text).error_code, 'payment_identifier_conflict');
    assert.equal(await readTokenBalance(chain, stranger.account.address), before);
  });

  it('required: true and a payment without an id → 400 payment_identifier_required, nothing paid', async () => {
    const b = buyer(9, () => undefined);
    await fundFromFaucet(chain, b.account.address, '1');
    const before = await readTokenBalance(chain, b.account.address);
    const res = await fetch(`${requiredUrl}/report`, { headers: await b.payFor(`${requiredUrl}/report`) });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error_code: string }).error_code, 'payment_identifier_required');
    assert.equal(await readTokenBalance(chain, b.account.address), before);
    const withId = buyer(9, () => generatePaymentId());
    const ok = await fetch(`${requiredUrl}/report`, { headers: await withId.payFor(`${requiredUrl}/report`) });
    assert.equal(ok.status, 200, 'with an id it is paid');
  });

  it('hostile ids → 400, nothing stored, nothing paid', async () => {
    const b = buyer(10, () => generatePaymentId());
    await fundFromFaucet(chain, b.account.address, '1');
    const before = await readTokenBalance(chain, b.account.address);
    const storedBefore = store.size;
    const rule = [
      'a'.repeat(15),
      'a'.repeat(129),
      'pay_ 1234567890abcdef',
      'pay_1234567890abcdé',
      'pay_1234567890.abcdef',
    ];
    const ids = [...hostile.identifier, ...hostile.any, ...rule];
    const base = await b.payFor(`${optionalUrl}/report`);
    const name = Object.keys(base)[0]!;
    const payload = JSON.parse(Buffer.from(base[name]!, 'base64').toString('utf8'));
    for (const id of ids) {
      payload.extensions['payment-identifier'].info.id = id;
      const header = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
      const res = await fetch(`${optionalUrl}/report`, { headers: { [name]: header } });
      assert.equal(res.status, 400, `id ${JSON.stringify(id)?.slice(0, 40)}`);
      const code = ((await res.json()) as { error_code: string }).error_code;
      assert.ok(['payment_identifier_invalid', 'invalid_payment_header'].includes(code), code);
    }
    assert.equal(store.size, storedBefore, 'nothing stored');
    assert.equal(await readTokenBalance(chain, b.account.address), before, 'nothing paid');
  });
});
