/**
 * The hostile-input table (test/vectors/hostile-inputs.json) against the wallet-side route schemas the other
 * hostile-input suites leave out: POST /v1/agents/{id}/wallets (every body field and the path id), POST
 * /v1/treasuries/{id}/api-key/revoke (the path id), the query strings (and path ids) of GET /v1/wallets,
 * /v1/wallets/{id}/payments, /v1/agents/{id}/payments, /v1/wallets/{id}/decisions and /v1/wallets/{id}/audit,
 * and the Idempotency-Key header of POST /v1/wallets/{id}/pay and /transfer. Each value answers a 4xx with a
 * stable error code (src/shared/error-codes.ts) and no table changes: every row of every table is compared
 * before and after. Each base request is shown accepted first (a payment and a transfer signed with a valid
 * key), so each refusal is the hostile value's.
 */
import assert from 'node:assert/strict';
import { paymentRequirements, SELLER_ADDRESS } from '../../builders/payment-requirements.js';
import { mintAgent, useTestTreasury } from '../../support/api-harness.js';
import {
  asQuery,
  FREE_TEXT,
  hostile,
  hostileHeaderValues,
  hostileIds,
  INHERITED_NAME_QUERIES,
  INVALID_KEY,
  isEmptyObject,
  queueOf,
  refusedBy,
  snapshotOf,
  ZERO_ADDRESS,
} from '../../support/hostile-refusals.js';
import { signInWithNewKey } from '../../support/sign-in.js';

/** The table's values for a query key, and bytes that are no UTF-8 or a NUL. */
const QUERY_VALUES = [
  ...[...hostile.any!, ...hostile.identifier!, ...hostile.base64_header!, ...hostile.unix_seconds!].map(asQuery),
  '%FF',
  '%00',
];

describe('hostile inputs against the remaining wallet routes', function () {
  this.timeout(300_000);
  const t = useTestTreasury();
  const refused = refusedBy(t);
  const queue = queueOf(refused);
  const snapshot = snapshotOf(t);
  let apiKey: string;
  let walletId: string;
  let session: string;
  let agentId: string;

  before(async () => {
    ({ apiKey } = await mintAgent(t, 'hostile-remaining'));
    const wallet = await t.request('POST', '/v1/wallets', { token: apiKey, body: { policy: {} } });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    walletId = wallet.body.id;
    ({ session, agent_id: agentId } = await signInWithNewKey(t));
    // Every base request below is accepted as it is.
    const accepted = async (method: string, route: string, token: string, body?: unknown, headers = {}) => {
      const res = await t.request(method, route, { token, body, headers });
      assert.ok(res.status === 200 || res.status === 201, `${route} → ${res.status} ${JSON.stringify(res.body)}`);
    };
    await accepted('POST', `/v1/agents/${agentId}/wallets`, session, { label: 'ok', network: 'eip155:84532' });
    const pay = { payment_requirements: paymentRequirements() };
    await accepted('POST', `/v1/wallets/${walletId}/pay`, apiKey, pay, { 'idempotency-key': 'order-1' });
    const transfer = { to: SELLER_ADDRESS, amount_usd: '0.01' };
    await accepted('POST', `/v1/wallets/${walletId}/transfer`, apiKey, transfer, { 'idempotency-key': 'order-2' });
    for (const route of ['/v1/wallets', `/v1/wallets/${walletId}/payments`, `/v1/wallets/${walletId}/decisions`])
      await accepted('GET', `${route}?limit=1`, apiKey);
    await accepted('GET', `/v1/wallets/${walletId}/audit?limit=1`, apiKey);
    await accepted('GET', `/v1/agents/${agentId}/payments?limit=1`, session);
  });

  it('POST /v1/agents/{id}/wallets: every body field, raw bodies and the path id', async () => {
    const before = await snapshot();
    const route = `/v1/agents/${agentId}/wallets`;
    const add = (body: unknown) => queue.add('POST', route, { token: session, body });
    for (const value of [...hostile.any!, ...FREE_TEXT]) add({ label: value });
    // `chain` also takes configured short names, so the table's 'base-sepolia' is a valid chain here.
    for (const value of [...hostile.any!, ...hostile.caip2_network!.filter((v) => v !== 'base-sepolia')])
      add({ chain: value });
    for (const value of [...hostile.any!, ...hostile.identifier!, ...hostile.caip2_network!, 'solana:x'])
      add({ network: value });
    for (const value of hostile.any!.filter((v) => !isEmptyObject(v))) add({ policy: value });
    for (const value of [...hostile.usd_amount!, '1000000000.000001'])
      for (const rule of ['per_tx_cap_usd', 'daily_cap_usd', 'weekly_cap_usd', 'monthly_cap_usd'])
        add({ policy: { [rule]: value } });
    for (const value of hostile.evm_address!.filter((a) => a !== ZERO_ADDRESS))
      add({ policy: { counterparty_allowlist: [value] } });
    add({ chain: 'eip155:84532', network: 'eip155:1' }); // two different chains
    add({ label: 'x', extra: 1 });
    // An empty body is no body, which creates a wallet with the defaults; a JSON null is a body, and refused.
    for (const raw of (hostile.raw_bodies as string[]).filter((r) => r !== ''))
      queue.add('POST', route, { token: session, raw });
    queue.add('POST', '/v1/agents', { token: session, raw: 'null' });
    for (const id of hostileIds())
      queue.add('POST', `/v1/agents/${id}/wallets`, { token: session, body: { label: 'x' } });
    await queue.run();
    assert.deepEqual(await snapshot(), before);
  });

  it('the query (and path id) of GET /v1/wallets, …/payments, …/decisions, …/audit and /v1/agents/{id}/payments', async () => {
    const before = await snapshot();
    const lists: Array<[route: string, token: string, keys: string[]]> = [
      ['/v1/wallets', apiKey, ['limit', 'cursor', 'status']],
      [`/v1/wallets/${walletId}/payments`, apiKey, ['limit', 'cursor']],
      [`/v1/agents/${agentId}/payments`, session, ['limit', 'cursor']],
      [`/v1/wallets/${walletId}/decisions`, apiKey, ['limit']],
      [`/v1/wallets/${walletId}/audit`, apiKey, ['limit']],
    ];
    for (const [route, token, keys] of lists) {
      for (const key of keys) for (const value of QUERY_VALUES) queue.add('GET', `${route}?${key}=${value}`, { token });
      // A history page is 1–100 rows, a list page 1–500. (A number's other spellings, 1e2 or 0x10, are that number.)
      for (const limit of keys.includes('cursor') ? ['501', '2.5', '-5'] : ['101', '2.5', '-5'])
        queue.add('GET', `${route}?limit=${limit}`, { token });
      const repeated = keys.includes('status') ? ['status=active&status=revoked', 'status=ACTIVE'] : [];
      const shapes = ['limit=1&limit=2', 'cursor=a&cursor=b', 'extra=1', '__proto__[x]=1', 'limit[x]=1', ...repeated];
      for (const q of [...shapes, ...INHERITED_NAME_QUERIES]) queue.add('GET', `${route}?${q}`, { token });
    }
    for (const id of hostileIds()) {
      for (const suffix of ['payments', 'decisions', 'audit'])
        queue.add('GET', `/v1/wallets/${id}/${suffix}`, { token: apiKey });
      queue.add('GET', `/v1/agents/${id}/payments`, { token: session });
    }
    await queue.run();
    assert.deepEqual(await snapshot(), before);
  });

  it('the Idempotency-Key header of pay and transfer, and the path id of api-key/revoke', async () => {
    const before = await snapshot();
    const pay = { payment_requirements: paymentRequirements({ amount: '2000' }) };
    const transfer = { to: SELLER_ADDRESS, amount_usd: '0.02' };
    for (const value of hostileHeaderValues()) {
      const headers = { 'idempotency-key': value };
      queue.add('POST', `/v1/wallets/${walletId}/pay`, { token: apiKey, body: pay, headers, code: INVALID_KEY });
      queue.add('POST', `/v1/wallets/${walletId}/transfer`, {
        token: apiKey,
        body: transfer,
        headers,
        code: INVALID_KEY,
      });
    }
    for (const id of hostileIds()) {
      queue.add('POST', `/v1/treasuries/${id}/api-key/revoke`, { token: t.adminToken });
      queue.add('POST', `/v1/treasuries/${id}/api-key/revoke`, { token: apiKey });
    }
    await queue.run();
    // The key still works: nothing above revoked it.
    assert.equal((await t.request('GET', '/v1/wallets', { token: apiKey })).status, 200);
    assert.deepEqual(await snapshot(), before);
  });
});
