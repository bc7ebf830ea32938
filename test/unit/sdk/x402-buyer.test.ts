/**
 * The buyer SDK's decisions, with a scripted seller and a scripted Treasury over real HTTP (the layer below
 * is exercised for real by test/e2e/sdk-buyer.test.ts): which accepts entry is chosen, the budget check in
 * integer micro-USD, the payment header's dialect, and each error with the fields callers rely on.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodePaymentRequired, encodeSettlementReceipt, decodePaymentPayload } from '../../../src/x402/header-codec.js';
import type { PaymentRequired, PaymentRequirements } from '../../../src/x402/wire-schemas.js';
import {
  checkBudget,
  createX402Buyer,
  InsufficientBudgetError,
  NoCompatibleAcceptError,
  PatCapReachedError,
  PaymentRejectedError,
  ReauthenticateError,
  selectAccept,
  TreasuryApiError,
  TreasuryClient,
  X402PaymentFailedError,
} from '../../../src/sdk/index.js';
import { BASE_SEPOLIA_USDC, buyer, requirements, SELLER } from '../x402/x402-fixtures.js';

type Handler = (req: http.IncomingMessage, body: string) => { status: number; headers?: Record<string, string>; body?: unknown };

async function serve(handler: Handler): Promise<{ url: string; requests: Array<{ headers: http.IncomingHttpHeaders; body: string; url: string }>; close(): Promise<void> }> {
  const requests: Array<{ headers: http.IncomingHttpHeaders; body: string; url: string }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests.push({ headers: req.headers, body, url: req.url ?? '' });
      const r = handler(req, body);
      res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
      res.end(r.body === undefined ? '' : typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const WALLET = { id: 'wal_1', account_id: 'acc_1', label: null, chain: 'base-sepolia', network: 'eip155:84532', address: buyer.address, policy: null, status: 'active', key_version: 1, created_at: 'x', updated_at: 'x', revoked_at: null };
const NONCE = `0x${'ab'.repeat(32)}`;
const SIGNED = (r: PaymentRequirements) => ({
  authorization: { from: buyer.address, to: r.payTo, value: r.amount, validAfter: '0', validBefore: '9999999999', nonce: NONCE },
  signature: `0x${'11'.repeat(65)}`,
  authorization_id: 'auth_1',
  decision_id: 'pd_1',
  wallet_id: 'wal_1',
  network: r.network,
  asset: r.asset,
  amount_usd: '0.01',
});

function challenge(accepts: PaymentRequirements[]): PaymentRequired {
  return { x402Version: 2, resource: { url: 'http://seller/x' }, accepts };
}

describe('buyer SDK: createX402Buyer', () => {
  let treasury: Awaited<ReturnType<typeof serve>>;
  let treasuryReply: Handler;
  beforeEach(async () => {
    treasuryReply = (req, body) => {
      if (req.url === '/v1/wallets/wal_1') return { status: 200, body: WALLET };
      return { status: 200, body: SIGNED(JSON.parse(body).payment_requirements) };
    };
    treasury = await serve((req, body) => treasuryReply(req, body));
  });
  afterEach(async () => treasury.close());

  const client = () => new TreasuryClient({ apiUrl: treasury.url, token: 'xx_pat_test' });

  it('selects the first entry it can pay: exact, on the wallet network, with the token name and version', () => {
    const onMainnet = requirements({ network: 'eip155:8453' });
    const upto = requirements({ scheme: 'upto' });
    const noDomain = requirements({ extra: {} });
    const good = requirements({ amount: '20000' });
    const alsoGood = requirements({ amount: '10000' });
    assert.equal(selectAccept([onMainnet, upto, noDomain, good, alsoGood], ['eip155:84532'], ['exact']), good);
    assert.equal(selectAccept([onMainnet], ['eip155:*'], ['exact']), onMainnet);
    assert.equal(selectAccept([onMainnet, upto], ['eip155:84532'], ['exact']), undefined);
  });

  it('budget: equal to the cap passes, one micro-USD above is refused with requested and cap', () => {
    checkBudget(requirements({ amount: '10000' }), '0.01');
    checkBudget(requirements({ amount: '10000' }), undefined);
    assert.throws(
      () => checkBudget(requirements({ amount: '10001' }), '0.01'),
      (err: unknown) => err instanceof InsufficientBudgetError && err.requested_usd === '0.010001' && err.cap_usd === '0.01' && err.code === 'insufficient_budget',
    );
    assert.throws(() => createX402Buyer({ client: client(), walletId: 'wal_1', maxPriceUsd: '1e3' }));
  });

  it('v2 challenge → PAYMENT-SIGNATURE; the spec challenge (X-PAYMENT-REQUIRED only) → X-PAYMENT; the receipt comes back', async () => {
    for (const [required, paymentHeader] of [['payment-required', 'payment-signature'], ['x-payment-required', 'x-payment']] as const) {
      const r = requirements();
      const seller = await serve((req) =>
        req.headers[paymentHeader]
          ? { status: 200, headers: { 'payment-response': encodeSettlementReceipt({ success: true, transaction: `0x${'cd'.repeat(32)}`, network: 'eip155:84532', payer: buyer.address }) }, body: { ok: true } }
          : { status: 402, headers: { [required]: encodePaymentRequired(challenge([r])) }, body: {} },
      );
      try {
        const result = await createX402Buyer({ client: client(), walletId: 'wal_1' }).request(`${seller.url}/x`, { method: 'POST', body: '{"q":1}', headers: { 'content-type': 'application/json' } });
        assert.equal(result.paid, true);
        assert.equal(result.receipt!.amount_usd, '0.01');
        assert.equal(result.receipt!.txHash, `0x${'cd'.repeat(32)}`);
        const paid = seller.requests[1]!;
        assert.equal(paid.body, '{"q":1}', 'the body is sent again with the payment');
        const payload = decodePaymentPayload(paid.headers[paymentHeader] as string);
        assert.equal(payload.x402Version, 2);
        assert.deepEqual((payload as { accepted: unknown }).accepted, r);
      } finally {
        await seller.close();
      }
    }
  });

  it('no compatible entry → NoCompatibleAcceptError with the accepts; nothing is signed', async () => {
    const accepts = [requirements({ network: 'eip155:8453' })];
    const seller = await serve(() => ({ status: 402, headers: { 'payment-required': encodePaymentRequired(challenge(accepts)) } }));
    try {
      await assert.rejects(createX402Buyer({ client: client(), walletId: 'wal_1' }).request(seller.url), (err: unknown) => err instanceof NoCompatibleAcceptError && err.accepts.length === 1);
      assert.equal(treasury.requests.filter((r) => r.url.endsWith('/pay')).length, 0);
    } finally {
      await seller.close();
    }
  });

  it('settled but refused → PaymentRejectedError (status_code, body); refused without settlement → X402PaymentFailedError', async () => {
    const r = requirements();
    let settle = true;
    const seller = await serve((req): ReturnType<Handler> => {
      if (!req.headers['payment-signature']) return { status: 402, headers: { 'payment-required': encodePaymentRequired(challenge([r])) } };
      if (settle) return { status: 500, headers: { 'payment-response': encodeSettlementReceipt({ success: true, transaction: `0x${'ef'.repeat(32)}`, network: 'eip155:84532' }) }, body: 'boom' };
      return { status: 402, headers: { 'payment-required': encodePaymentRequired({ ...challenge([r]), error: 'invalid_exact_evm_payload_signature' }) }, body: { error: 'invalid_exact_evm_payload_signature' } };
    });
    try {
      const buyerSdk = createX402Buyer({ client: client(), walletId: 'wal_1' });
      await assert.rejects(buyerSdk.request(seller.url), (err: unknown) => err instanceof PaymentRejectedError && err.status_code === 500 && err.body === 'boom');
      settle = false;
      await assert.rejects(buyerSdk.request(seller.url), (err: unknown) => err instanceof X402PaymentFailedError && err.status_code === 402 && err.reason === 'invalid_exact_evm_payload_signature');
    } finally {
      await seller.close();
    }
  });

  it('Treasury errors: raise_pat_cap → PatCapReachedError, reauthenticate → ReauthenticateError, unknown kinds and policy denials re-raised as they came', async () => {
    const r = requirements();
    const seller = await serve(() => ({ status: 402, headers: { 'payment-required': encodePaymentRequired(challenge([r])) } }));
    const cases: Array<[number, unknown, (err: unknown) => boolean]> = [
      [429, { error_code: 'MGMT_6014', user_message: 'Daily cap reached.', recovery: { kind: 'raise_pat_cap', settings_url: 'https://dash/settings/pats/pat_1', current_cap_usd: '5', attempted_amount_usd: '0.01' } }, (e) => e instanceof PatCapReachedError && e.userMessage === 'Daily cap reached.' && e.settingsUrl === 'https://dash/settings/pats/pat_1' && e.currentCapUsd === '5'],
      [401, { error_code: 'invalid_token', user_message: 'Sign in again.', recovery: { kind: 'reauthenticate' } }, (e) => e instanceof ReauthenticateError && e.userMessage === 'Sign in again.'],
      [409, { error_code: 'something_new', user_message: 'x', recovery: { kind: 'future_kind' } }, (e) => e instanceof TreasuryApiError && e.code === 'something_new' && e.recovery?.kind === 'future_kind'],
      [403, { error_code: 'policy_denied', reason: 'policy_denied', decision_id: 'pd_9', user_message: 'no' }, (e) => e instanceof TreasuryApiError && e.status === 403 && e.decisionId === 'pd_9'],
    ];
    try {
      for (const [status, body, check] of cases) {
        treasuryReply = (req) => (req.url === '/v1/wallets/wal_1' ? { status: 200, body: WALLET } : { status, body });
        await assert.rejects(createX402Buyer({ client: client(), walletId: 'wal_1' }).request(seller.url), check);
      }
      assert.equal(seller.requests.length, cases.length, 'no paid retry was sent after a refusal');
    } finally {
      await seller.close();
    }
  });

  it('a non-402 answer passes through unpaid; a malformed Treasury reply is never used as a signature', async () => {
    const seller = await serve(() => ({ status: 200, body: { free: true } }));
    try {
      const result = await createX402Buyer({ client: client(), walletId: 'wal_1' }).request(seller.url);
      assert.deepEqual([result.status, result.paid, JSON.parse(result.body)], [200, false, { free: true }]);
    } finally {
      await seller.close();
    }
    treasuryReply = () => ({ status: 200, body: { ...SIGNED(requirements()), signature: 'not-hex' } });
    await assert.rejects(client().pay('wal_1', { paymentRequirements: requirements({ payTo: SELLER, asset: BASE_SEPOLIA_USDC }) }), /unexpected body/);
  });
});
