/**
 * createX402Buyer's exchange with a scripted seller and a scripted Treasury over real HTTP (the real stack is
 * test/e2e/sdk-buyer.test.ts): the challenge read from PAYMENT-REQUIRED, X-PAYMENT-REQUIRED or the body and
 * answered in the same dialect; the entry chosen; the budget refused before Treasury is asked; Treasury's
 * recovery kinds as typed errors; each pay under an Idempotency-Key of its own, retried with it; one paid retry, never more; settled-then-refused vs not settled; the
 * receipt; the drop-in fetch with a Request and a body.
 */
import assert from 'node:assert/strict';
import { getAddress } from 'viem';
import {
  decodePaymentPayload,
  encodePaymentRequired,
  encodeSettlementReceipt,
} from '../../../src/x402/header-codec.js';
import type { Eip3009Authorization, PaymentRequired, PaymentRequirements } from '../../../src/x402/wire-schemas.js';
import {
  createX402Buyer,
  InsufficientBudgetError,
  InvalidArgumentError,
  InvalidChallengeError,
  NoCompatibleAcceptError,
  PatCapReachedError,
  PaymentRejectedError,
  ReauthenticateError,
  SignatureMismatchError,
  TreasuryApiError,
  TreasuryClient,
  X402PaymentFailedError,
  type X402BuyerOptions,
} from '../../../src/sdk/index.js';
import { recoverAuthorizationSigner } from '../../support/recover-authorization.js';
import { buyer, requirements } from '../x402/x402-fixtures.js';
import {
  fakeTreasuryHandler,
  scriptedServer,
  signedFor,
  WALLET_ID,
  type RecordedRequest,
  type ScriptedReply,
  type ScriptedServer,
} from './scripted-http.js';

const TX = `0x${'cd'.repeat(32)}`;

/** A challenge for the resource at `url` (the seller's own URL, as a seller names it). */
function challenge(url: string, accepts: PaymentRequirements[], error?: string): PaymentRequired {
  return { x402Version: 2, resource: { url }, accepts, ...(error ? { error } : {}) };
}

/** The URL a recorded request asked for, as the seller sees it (its Host header and path). */
const urlOf = (req: RecordedRequest) => `http://${String(req.headers.host)}${req.url}`;

const receipt = (success = true, extra: Record<string, unknown> = {}) =>
  encodeSettlementReceipt({
    success,
    transaction: success ? TX : '',
    network: 'eip155:84532',
    payer: buyer.address,
    ...extra,
  });

/** A seller that answers 402 with `challengeHeaders` until a payment header arrives, then `paid`. */
function seller(
  challengeHeaders: (c: string) => Record<string, string>,
  accepts: PaymentRequirements[],
  paid: (req: RecordedRequest) => ScriptedReply,
) {
  return (req: RecordedRequest): ScriptedReply =>
    req.headers['payment-signature'] || req.headers['x-payment']
      ? paid(req)
      : { status: 402, headers: challengeHeaders(encodePaymentRequired(challenge(urlOf(req), accepts))), body: {} };
}

describe('buyer SDK: createX402Buyer', () => {
  let treasury: ScriptedServer;
  let shop: ScriptedServer;
  beforeEach(async () => {
    treasury = await scriptedServer(fakeTreasuryHandler());
    shop = await scriptedServer(() => ({ status: 200, body: { free: true } }));
  });
  afterEach(async () => {
    await treasury.close();
    await shop.close();
  });
  const client = () => new TreasuryClient({ apiUrl: treasury.url, token: 'xx_pat_test' });
  const newBuyer = (extra: Partial<X402BuyerOptions> = {}) =>
    createX402Buyer({ client: client(), walletId: WALLET_ID, ...extra });
  const pays = () => treasury.requests.filter((r) => r.url.endsWith('/pay'));

  it('eip2612GasSponsoring is asked for only on an upto entry; an exact entry sends no gas_sponsoring and no extensions', async () => {
    const withExtension = (c: string) => {
      const decoded = JSON.parse(Buffer.from(c, 'base64').toString('utf8')) as PaymentRequired;
      const declared = { eip2612GasSponsoring: { info: { description: 'd', version: '1' }, schema: {} } };
      return { 'payment-required': encodePaymentRequired({ ...decoded, extensions: declared }) };
    };
    shop.handler = seller(withExtension, [requirements()], () => ({ status: 200, body: 'ok' }));
    const result = await newBuyer().request(`${shop.url}/x`);
    assert.equal(result.paid, true);
    assert.equal(JSON.parse(pays()[0]!.body).gas_sponsoring, undefined);
    const sent = shop.requests.at(-1)!.headers['payment-signature'] as string;
    assert.equal(JSON.parse(Buffer.from(sent, 'base64').toString('utf8')).extensions, undefined);
  });

  it('a non-402 answer passes through unpaid; Treasury is not asked', async () => {
    const result = await newBuyer().request(`${shop.url}/free`);
    assert.deepEqual(
      [result.status, result.paid, JSON.parse(result.body), result.receipt],
      [200, false, { free: true }, undefined],
    );
    assert.equal(treasury.requests.length, 0);
  });

  it('PAYMENT-REQUIRED → PAYMENT-SIGNATURE; X-PAYMENT-REQUIRED only → X-PAYMENT; the body is sent again; the receipt is decoded', async () => {
    const cases: Array<[(c: string) => Record<string, string>, string, string, string]> = [
      [
        (c) => ({ 'payment-required': c, 'x-payment-required': c }),
        'payment-signature',
        'x-payment',
        'payment-response',
      ],
      [(c) => ({ 'x-payment-required': c }), 'x-payment', 'payment-signature', 'x-payment-response'],
    ];
    for (const [challengeHeaders, sent, notSent, receiptHeader] of cases) {
      const r = requirements();
      shop.requests.length = 0;
      shop.handler = seller(challengeHeaders, [r], () => ({
        status: 200,
        headers: { [receiptHeader]: receipt() },
        body: { ok: true },
      }));
      const result = await newBuyer().request(`${shop.url}/x`, {
        method: 'post',
        body: '{"q":1}',
        headers: { 'content-type': 'application/json', 'x-trace': 't1', 'payment-signature': 'caller-junk' },
      });
      assert.equal(result.paid, true);
      assert.deepEqual(result.receipt, {
        success: true,
        transaction: TX,
        network: 'eip155:84532',
        payer: buyer.address,
        amount_raw: '10000',
        amount_usd: '0.01',
      });
      assert.deepEqual(result.requirements, r);
      assert.equal(result.payment?.authorization_id, 'auth_1');
      const [first, second] = shop.requests;
      assert.equal(first!.headers['payment-signature'], undefined, 'a caller-set payment header is never forwarded');
      assert.deepEqual(
        [second!.method, second!.body, second!.headers['content-type'], second!.headers['x-trace']],
        ['POST', '{"q":1}', 'application/json', 't1'],
      );
      assert.equal(second!.headers[notSent], undefined);
      const payload = decodePaymentPayload(second!.headers[sent] as string);
      assert.ok(payload.x402Version === 2);
      assert.deepEqual(payload.accepted, r, 'the chosen entry is echoed unchanged');
      assert.deepEqual(payload.resource, { url: `${shop.url}/x` });
      assert.deepEqual(payload.payload, {
        signature: signedFor(r).signature,
        authorization: signedFor(r).authorization,
      });
    }
  });

  it('a v2 challenge in the body only is paid on PAYMENT-SIGNATURE; a legacy v1 body and a 402 without a challenge are InvalidChallengeError', async () => {
    const r = requirements();
    shop.handler = (req) =>
      req.headers['payment-signature']
        ? { status: 200, body: 'paid' }
        : { status: 402, body: challenge(urlOf(req), [r]) };
    assert.equal((await newBuyer().request(shop.url)).paid, true);
    for (const body of [
      { x402Version: 1, accepts: [{ scheme: 'exact', network: 'base-sepolia', maxAmountRequired: '10000' }] },
      'Payment Required',
      { accepts: [] },
    ]) {
      shop.handler = () => ({ status: 402, body });
      await assert.rejects(
        newBuyer().request(shop.url),
        (err: unknown) => err instanceof InvalidChallengeError && err.code === 'invalid_challenge',
      );
    }
    shop.handler = () => ({ status: 402, headers: { 'payment-required': 'not base64 json' } });
    await assert.rejects(newBuyer().request(shop.url), /PAYMENT-REQUIRED header could not be read/);
    assert.equal(pays().length, 1);
  });

  it("each payment asked of Treasury carries its purchase's payment identifier as its Idempotency-Key; a 503 or a lost answer is retried with it, and the seller is paid once", async () => {
    const r = requirements();
    shop.handler = seller(
      (c) => ({ 'payment-required': c }),
      [r],
      () => ({ status: 200, headers: { 'payment-response': receipt() }, body: 'ok' }),
    );
    const unavailable = {
      status: 503,
      headers: { 'retry-after': '0' },
      body: { error_code: 'database_busy', user_message: 'busy' },
    };
    const failures: ScriptedReply[] = [unavailable, { status: 200, drop: true }];
    treasury.handler = fakeTreasuryHandler((req) => (req.url.endsWith('/pay') ? failures.shift() : undefined));
    const result = await newBuyer().request(shop.url);
    assert.equal(result.paid, true);
    const keys = pays().map((p) => p.headers['idempotency-key']);
    assert.equal(keys.length, 3, 'a 503, a lost answer, then the signature');
    assert.match(String(keys[0]), /^pay_[0-9a-f]{32}$/);
    assert.equal(JSON.parse(pays()[0]!.body).payment_identifier, keys[0], 'the body names the same identifier');
    assert.deepEqual(new Set(keys).size, 1, 'every attempt is the same payment');
    assert.equal(shop.requests.filter((q) => q.headers['payment-signature']).length, 1, 'one paid retry to the seller');

    await newBuyer().request(shop.url);
    assert.notEqual(pays().at(-1)!.headers['idempotency-key'], keys[0], 'another request is another payment');
  });

  it("pays the first entry on the wallet's network; none → NoCompatibleAcceptError with the accepts, nothing signed", async () => {
    const mainnet = requirements({
      network: 'eip155:8453',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      extra: { name: 'USD Coin', version: '2' },
    });
    const sepolia = requirements({ amount: '20000' });
    shop.handler = seller(
      (c) => ({ 'payment-required': c }),
      [requirements({ scheme: 'upto' }), mainnet, sepolia],
      () => ({ status: 200, body: 'ok' }),
    );
    const result = await newBuyer().request(shop.url);
    assert.deepEqual(result.requirements, sepolia);
    assert.equal(JSON.parse(pays()[0]!.body).payment_requirements.amount, '20000');

    const accepts = [mainnet, requirements({ extra: {} })];
    shop.handler = seller(
      (c) => ({ 'payment-required': c }),
      accepts,
      () => ({ status: 200 }),
    );
    await assert.rejects(
      newBuyer().request(shop.url),
      (err: unknown) =>
        err instanceof NoCompatibleAcceptError &&
        err.code === 'no_compatible_accept' &&
        err.accepts.length === 2 &&
        /exact@eip155:8453/.test(err.message),
    );
    await assert.rejects(newBuyer({ networks: ['eip155:8453'] }).request(shop.url), NoCompatibleAcceptError);
    assert.equal(pays().length, 1);
  });

  it('above maxPriceUsd → InsufficientBudgetError; Treasury is never asked to sign; equal to the cap is paid', async () => {
    shop.handler = seller(
      (c) => ({ 'payment-required': c }),
      [requirements({ amount: '10001' })],
      () => ({ status: 200 }),
    );
    await assert.rejects(
      newBuyer({ maxPriceUsd: '0.01' }).request(shop.url),
      (err: unknown) =>
        err instanceof InsufficientBudgetError && err.requested_usd === '0.010001' && err.cap_usd === '0.01',
    );
    assert.equal(pays().length, 0);
    assert.equal(shop.requests.length, 1, 'no paid retry');
    shop.handler = seller(
      (c) => ({ 'payment-required': c }),
      [requirements({ amount: '10000' })],
      () => ({ status: 200 }),
    );
    assert.equal((await newBuyer({ maxPriceUsd: '0.01' }).request(shop.url)).paid, true);
  });

  it("Treasury's refusals: raise_pat_cap → PatCapReachedError, reauthenticate → ReauthenticateError, policy denials and unknown kinds re-raised as they came; no paid retry", async () => {
    shop.handler = seller(
      (c) => ({ 'payment-required': c }),
      [requirements()],
      () => ({ status: 200 }),
    );
    const cases: Array<[number, unknown, (err: unknown) => boolean]> = [
      [
        429,
        {
          error_code: 'MGMT_6014',
          user_message: 'Daily cap reached.',
          recovery: {
            kind: 'raise_pat_cap',
            settings_url: 'https://dash/settings/pats/pat_1',
            current_cap_usd: '5',
            attempted_amount_usd: '0.01',
          },
        },
        (e) =>
          e instanceof PatCapReachedError &&
          e.user_message === 'Daily cap reached.' &&
          e.settings_url === 'https://dash/settings/pats/pat_1',
      ],
      [
        401,
        { error_code: 'invalid_token', user_message: 'Sign in again.', recovery: { kind: 'reauthenticate' } },
        (e) => e instanceof ReauthenticateError && e.userMessage === 'Sign in again.',
      ],
      [
        409,
        { error_code: 'something_new', user_message: 'x', recovery: { kind: 'future_kind' } },
        (e) => e instanceof TreasuryApiError && e.code === 'something_new' && e.recovery?.kind === 'future_kind',
      ],
      [
        403,
        { error_code: 'policy_denied', reason: 'policy_denied', decision_id: 'pd_9', user_message: 'no' },
        (e) => e instanceof TreasuryApiError && e.status === 403 && e.decisionId === 'pd_9',
      ],
    ];
    for (const [status, body, check] of cases) {
      treasury.handler = fakeTreasuryHandler((req) => (req.url.endsWith('/pay') ? { status, body } : undefined));
      await assert.rejects(newBuyer().request(shop.url), check);
    }
    assert.equal(shop.requests.length, cases.length, 'no paid retry was sent after a refusal');
    treasury.handler = () => ({
      status: 401,
      body: { error_code: 'invalid_token', recovery: { kind: 'reauthenticate' } },
    });
    await assert.rejects(newBuyer().request(shop.url), ReauthenticateError, 'the wallet read is mapped too');
  });

  it('a signature for other terms than the chosen entry is never sent', async () => {
    shop.handler = seller(
      (c) => ({ 'payment-required': c }),
      [requirements()],
      () => ({ status: 200 }),
    );
    treasury.handler = fakeTreasuryHandler((req) =>
      req.url.endsWith('/pay') ? { status: 200, body: signedFor(requirements({ amount: '20000' })) } : undefined,
    );
    await assert.rejects(
      newBuyer().request(shop.url),
      (err: unknown) => err instanceof SignatureMismatchError && /amount/.test(err.message),
    );
    assert.equal(shop.requests.length, 1);
  });

  it('settled, then refused → PaymentRejectedError (status_code, body, receipt); an unreadable receipt counts as settled', async () => {
    shop.handler = seller(
      (c) => ({ 'payment-required': c }),
      [requirements()],
      () => ({ status: 500, headers: { 'payment-response': receipt() }, body: 'boom' }),
    );
    await assert.rejects(
      newBuyer().request(shop.url),
      (err: unknown) =>
        err instanceof PaymentRejectedError &&
        err.code === 'payment_rejected' &&
        err.status_code === 500 &&
        err.body === 'boom' &&
        err.receipt?.transaction === TX,
    );
    shop.handler = seller(
      (c) => ({ 'payment-required': c }),
      [requirements()],
      () => ({ status: 503, headers: { 'x-payment-response': 'garbage' }, body: 'down' }),
    );
    await assert.rejects(
      newBuyer().request(shop.url),
      (err: unknown) => err instanceof PaymentRejectedError && err.status_code === 503 && err.receipt === undefined,
    );
  });

  it("not settled → X402PaymentFailedError with the seller's reason (receipt errorReason, re-issued challenge error, body error); exactly one paid attempt", async () => {
    const r = requirements();
    const refusals: Array<[ScriptedReply, string]> = [
      [
        {
          status: 402,
          headers: {
            'payment-required': encodePaymentRequired(challenge(shop.url, [r], 'invalid_exact_evm_payload_signature')),
          },
          body: {},
        },
        'invalid_exact_evm_payload_signature',
      ],
      [
        {
          status: 402,
          headers: {
            'payment-response': receipt(false, { errorReason: 'insufficient_funds' }),
            'payment-required': encodePaymentRequired(challenge(shop.url, [r], 'settlement_failed')),
          },
          body: {},
        },
        'insufficient_funds',
      ],
      [{ status: 400, body: { error_code: 'invalid_payment_header', user_message: 'x' } }, 'invalid_payment_header'],
      [{ status: 402, body: 'nope' }, 'HTTP 402'],
    ];
    for (const [reply, reason] of refusals) {
      shop.requests.length = 0;
      shop.handler = seller(
        (c) => ({ 'payment-required': c }),
        [r],
        () => reply,
      );
      await assert.rejects(
        newBuyer().request(shop.url),
        (err: unknown) =>
          err instanceof X402PaymentFailedError &&
          err.code === 'payment_failed' &&
          err.status_code === reply.status &&
          err.reason === reason,
        reason,
      );
      assert.equal(shop.requests.length, 2);
    }
  });

  it('fetch(): a drop-in fetch taking a Request or (url, init) with a body; the final Response is returned', async () => {
    shop.handler = seller(
      (c) => ({ 'payment-required': c }),
      [requirements()],
      (req) => ({ status: 201, headers: { 'payment-response': receipt() }, body: { echoed: req.body } }),
    );
    const b = newBuyer();
    const res = await b.fetch(
      new Request(`${shop.url}/make`, { method: 'PUT', body: 'hello', headers: { 'x-a': '1' } }),
    );
    assert.equal(res.status, 201);
    assert.deepEqual(await res.json(), { echoed: 'hello' });
    assert.ok(res.headers.get('payment-response'));
    assert.deepEqual([shop.requests[1]!.method, shop.requests[1]!.headers['x-a']], ['PUT', '1']);
    shop.handler = () => ({ status: 204 });
    assert.equal((await b.fetch(new URL(`${shop.url}/nothing`), { method: 'DELETE' })).status, 204);
    await assert.rejects(
      b.fetch('file:///etc/passwd'),
      (err: unknown) => err instanceof InvalidArgumentError || err instanceof TypeError,
    );
  });

  it('options and request arguments are validated', async () => {
    const c = client();
    const bad: Array<[Partial<X402BuyerOptions>, string]> = [
      [{ walletId: 'nope' }, 'options.walletId'],
      [{ networks: [] }, 'options.networks'],
      [{ networks: ['eip155'] }, 'options.networks.0'],
      [{ schemes: ['Exact Scheme'] }, 'options.schemes.0'],
      [{ capability: 'Not A Capability' }, 'options.capability'],
      [{ client: {} as TreasuryClient }, 'options.client'],
    ];
    for (const [extra, field] of bad)
      assert.throws(
        () => createX402Buyer({ client: c, walletId: WALLET_ID, ...extra }),
        (err: unknown) => err instanceof InvalidArgumentError && err.field === field,
        field,
      );
    await assert.rejects(
      newBuyer().request('ftp://example.com/x'),
      (err: unknown) => err instanceof InvalidArgumentError && err.field === 'url',
    );
    await assert.rejects(
      newBuyer().request(shop.url, { method: 'GET /x HTTP/1.1' }),
      (err: unknown) => err instanceof InvalidArgumentError && err.field === 'init.method',
    );
  });

  it('a local viem account (self-custody) takes the same path: one EIP-3009 signature by the account, Treasury never asked', async () => {
    const r = requirements();
    let signatures = 0;
    const account = {
      address: buyer.address,
      signTypedData: async (td: Parameters<typeof buyer.signTypedData>[0]) => {
        signatures++;
        return buyer.signTypedData(td);
      },
    };
    shop.handler = seller(
      (c) => ({ 'payment-required': c }),
      [r, requirements({ network: 'eip155:8453' })],
      () => ({
        status: 200,
        headers: { 'payment-response': receipt() },
        body: { ok: true },
      }),
    );
    // Over the cap: refused before anything is signed.
    await assert.rejects(
      createX402Buyer({ account, maxPriceUsd: '0.009' }).request(`${shop.url}/x`),
      InsufficientBudgetError,
    );
    assert.equal(signatures, 0);
    const result = await createX402Buyer({ account, network: 'eip155:84532', maxPriceUsd: '0.01' }).request(
      `${shop.url}/x`,
    );
    assert.deepEqual([result.status, result.paid, result.payment, signatures], [200, true, undefined, 1]);
    assert.equal(result.localPayment?.payer, buyer.address);
    assert.equal(treasury.requests.length, 0, 'Treasury is not asked');
    const payload = decodePaymentPayload(shop.requests.at(-1)!.headers['payment-signature'] as string);
    assert.deepEqual(payload.accepted, r);
    const { authorization, signature } = payload.payload as { authorization: Eip3009Authorization; signature: string };
    assert.deepEqual(
      [authorization.from, authorization.to, authorization.value],
      [buyer.address, getAddress(r.payTo), r.amount],
    );
    assert.equal(
      await recoverAuthorizationSigner(authorization, signature, {
        name: 'USDC',
        version: '2',
        chainId: 84532,
        verifyingContract: getAddress(r.asset),
      }),
      buyer.address,
      'an EIP-3009 TransferWithAuthorization signed by the local account',
    );
    // Only the account's network qualifies; a mode's options are validated as that mode's.
    shop.handler = seller(
      (c) => ({ 'payment-required': c }),
      [requirements({ network: 'eip155:8453' })],
      () => ({
        status: 200,
      }),
    );
    await assert.rejects(
      createX402Buyer({ account, network: 'eip155:84532' }).request(`${shop.url}/x`),
      NoCompatibleAcceptError,
    );
    assert.equal(signatures, 1);
    for (const [extra, field] of [
      [{ account: { address: 'nope', signTypedData: account.signTypedData } }, 'options.account'],
      [{ network: 'base' }, 'options.network'],
      [{ walletId: WALLET_ID }, 'options'],
    ] as const)
      assert.throws(
        () => createX402Buyer({ ...{ account }, ...extra } as X402BuyerOptions),
        (err: unknown) => err instanceof InvalidArgumentError && err.field === field,
        field,
      );
  });
});
