/**
 * The hostile-input table (test/vectors/hostile-inputs.json) against the seller- and gate-side route schemas the
 * other hostile-input suites leave out: gate ledger rows (one and batch) and the middleware's ledger batch, gate
 * uptime reports, pay-to proofs, the payout flush's Idempotency-Key, POST /v1/auth/verify's and GET
 * /v1/gate/catalogue's `network`, GET /v1/sellers/{id}/discovery's path id, and every field of the
 * payment-identifier store's routes (/v1/payment-ids/*, /v1/gate/payment-ids/*) other than the id, the route and
 * a stored header's value (test/integration/gate/gate-payment-identifier.test.ts holds those). Each value answers
 * a 4xx with a stable error code (src/shared/error-codes.ts) and no table changes: every row of every table is
 * compared before and after. A base body the route accepts is shown accepted first, so each refusal is the
 * hostile field's.
 */
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { payToClaimMessage } from '../../../src/api/sellers/seller-pay-to-service.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import {
  FREE_TEXT,
  RAW_ABOVE_BOUND,
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

const NETWORK = 'eip155:84532';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const SOLANA_DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
/** A base58 Ed25519 signature (64 bytes) and a base58 address (32 bytes), well-formed. */
const SOLANA_SIGNATURE = '5'.repeat(87);
const SOLANA_ADDRESS = 'So11111111111111111111111111111111111111112';
/** The table's bytes32 spellings but the bare 64 hex digits, which a sha256 (content hash, fingerprint) is. */
const HEX_NOT_SHA256 = hostile.bytes32_hex!.filter((v) => !/^[0-9a-f]{64}$/.test(v as string));
const HOUR = 3_600_000;
const ANSWER = { status: 200, headers: { 'content-type': 'application/json' }, body_base64: 'e30=' };
const OTHER_ADDRESS = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

describe('hostile inputs against the remaining seller and gate routes', function () {
  this.timeout(300_000);
  const t = useTestTreasury({
    // No background verifier: it would update the ledger rows the base requests store while the suite compares them.
    extraEnv: { TREASURY_LEDGER_VERIFY_INTERVAL_MS: '0' },
  });
  const refused = refusedBy(t);
  const queue = queueOf(refused);
  const snapshot = snapshotOf(t);
  let session: string;
  let sellerId: string;
  let servicePat: string;
  let gatePat: string;
  let endpointId: string;
  let tx = 1;
  const row = () => ({
    tx_hash: `0x${(tx++).toString(16).padStart(64, '0')}`,
    payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
    amount: '10000',
    network: NETWORK,
    endpoint_id: endpointId,
    method: 'GET',
    route: '/forecast',
    content_hash: 'ab'.repeat(32),
    nonce: `0x${'cd'.repeat(32)}`,
  });
  const hour = () => new Date(Math.floor(Date.now() / HOUR) * HOUR - HOUR).toISOString();
  const payId = () => `pid_${(tx++).toString(16).padStart(24, '0')}`;

  before(async () => {
    session = (await signInWithNewKey(t)).session;
    const seller = await t.request('POST', '/v1/sellers', {
      token: session,
      body: { name: 'Hostile target', protocol: 'mpp', payout_mode: 'platform_mor' },
    });
    assert.equal(seller.status, 201, JSON.stringify(seller.body));
    [sellerId, servicePat] = [seller.body.seller_id, seller.body.pat];
    const endpoint = await t.request('POST', `/v1/sellers/${sellerId}/endpoints`, {
      token: session,
      body: { path: '/forecast', price: '0.01' },
    });
    endpointId = endpoint.body.endpoint_id;
    gatePat = (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'gate' } })).body.pat;
    // Every base body below is accepted as it is (the collection wallet on NETWORK is created here, once).
    const accepted = async (method: string, route: string, token: string, body?: unknown, headers = {}) => {
      const res = await t.request(method, route, { token, body, headers });
      assert.ok(res.status === 200 || res.status === 201, `${route} → ${res.status} ${JSON.stringify(res.body)}`);
    };
    await accepted('POST', '/v1/gate/ledger', gatePat, row());
    await accepted('POST', '/v1/gate/ledger/batch', gatePat, { rows: [row()] });
    await accepted('POST', '/v1/ledger/batch', servicePat, { rows: [row()] });
    await accepted('POST', '/v1/gate/uptime', gatePat, {
      buckets: [{ endpoint_id: endpointId, hour: hour(), answered: 1, failed: 0 }],
    });
    await accepted('POST', '/v1/auth/verify', servicePat, { network: NETWORK });
    await accepted('GET', `/v1/gate/catalogue?network=${NETWORK}`, gatePat);
    await accepted('GET', `/v1/sellers/${sellerId}/discovery`, session);
    await accepted('POST', `/v1/sellers/${sellerId}/payouts/flush`, session, undefined, { 'idempotency-key': 'ok-1' });
    const key = privateKeyToAccount(generatePrivateKey());
    const signature = await key.signMessage({ message: payToClaimMessage(sellerId, key.address) });
    await accepted('POST', `/v1/sellers/${sellerId}/pay-to`, session, { address: key.address, signature });
    for (const [prefix, token, scope] of [
      ['/v1/payment-ids', servicePat, {}],
      ['/v1/gate/payment-ids', gatePat, { endpoint_id: endpointId }],
    ] as const) {
      // Claims that outlive the suite (a day), so nothing expires or is swept while it compares tables.
      const [kept, released] = [payId(), payId()].map((id) => ({
        ...scope,
        route: '/forecast',
        id,
        fingerprint: 'ef'.repeat(32),
      }));
      await accepted('POST', `${prefix}/begin`, token, { ...kept, pending_ttl_seconds: 86_400 });
      await accepted('POST', `${prefix}/complete`, token, { ...kept, answer: ANSWER });
      await accepted('POST', `${prefix}/begin`, token, { ...released, pending_ttl_seconds: 86_400 });
      await accepted('POST', `${prefix}/release`, token, released);
    }
  });

  it('gate ledger rows, gate and middleware ledger batches: every field, the rows list and raw bodies', async () => {
    const before = await snapshot();
    const fields: Record<string, unknown[]> = {
      tx_hash: [...hostile.any!, ...hostile.identifier!, ...hostile.bytes32_hex!],
      payer: [...hostile.any!, ...hostile.identifier!, ...hostile.evm_address!.filter((a) => a !== ZERO_ADDRESS)],
      amount: [
        ...hostile.any!,
        ...hostile.raw_token_amount!,
        ...hostile.raw_amount_over_bigint!,
        ...RAW_ABOVE_BOUND,
        '0',
      ],
      network: [...hostile.any!, ...hostile.identifier!, ...hostile.caip2_network!],
      endpoint_id: [...hostile.any!, ...hostile.identifier!],
      method: [...hostile.any!, ...hostile.identifier!, 'get', 'TRACE'],
      route: [...hostile.any!, ...hostile.identifier!, ...FREE_TEXT.map((v) => `/${v}`), `/${'a'.repeat(512)}`],
      content_hash: [...hostile.any!, ...hostile.identifier!, ...HEX_NOT_SHA256, 'AB'.repeat(32)],
      nonce: [...hostile.any!, ...hostile.identifier!, ...hostile.bytes32_hex!],
    };
    for (const [field, values] of Object.entries(fields)) {
      for (const value of values) {
        const bad = { ...row(), [field]: value };
        queue.add('POST', '/v1/gate/ledger', { token: gatePat, body: bad });
        // A batch with one bad row is refused whole: the good row beside it is not stored either.
        queue.add('POST', '/v1/gate/ledger/batch', { token: gatePat, body: { rows: [row(), bad] } });
        queue.add('POST', '/v1/ledger/batch', { token: servicePat, body: { rows: [row(), bad] } });
      }
    }
    // A Solana row: its transaction signature and payer are base58, and it names no nonce.
    const solana = { ...row(), network: SOLANA_DEVNET, tx_hash: SOLANA_SIGNATURE, payer: SOLANA_ADDRESS };
    delete (solana as { nonce?: string }).nonce;
    const notBase58 = [
      ...hostile.bytes32_hex!,
      ...hostile.evm_address!,
      '0'.repeat(64),
      'O'.repeat(88),
      'l'.repeat(70),
    ];
    for (const [field, values] of Object.entries({
      tx_hash: [...hostile.any!, ...hostile.identifier!, ...notBase58, SOLANA_ADDRESS],
      payer: [...hostile.any!, ...hostile.identifier!, ...notBase58, SOLANA_SIGNATURE],
      nonce: [`0x${'cd'.repeat(32)}`],
    }))
      for (const value of values) {
        queue.add('POST', '/v1/gate/ledger', { token: gatePat, body: { ...solana, [field]: value } });
        queue.add('POST', '/v1/ledger/batch', {
          token: servicePat,
          body: { rows: [{ ...solana, [field]: value }] },
        });
      }
    // A gate row must name its endpoint: one alone is refused, one in a batch gets its own refusal.
    const { endpoint_id: _, ...unnamed } = row();
    queue.add('POST', '/v1/gate/ledger', { token: gatePat, body: unnamed });
    const batch = await t.request('POST', '/v1/gate/ledger/batch', { token: gatePat, body: { rows: [unnamed] } });
    assert.deepEqual(
      [batch.status, batch.body.results[0].outcome, batch.body.results[0].error_code],
      [200, 'rejected', 'invalid_request'],
    );
    for (const rows of [...hostile.any!, Array.from({ length: 101 }, row)]) {
      for (const [route, token] of [
        ['/v1/gate/ledger/batch', gatePat],
        ['/v1/ledger/batch', servicePat],
      ] as const) {
        queue.add('POST', route, { token, body: { rows } });
        queue.add('POST', route, { token, body: rows });
      }
    }
    for (const raw of hostile.raw_bodies as string[])
      for (const [route, token] of [
        ['/v1/gate/ledger', gatePat],
        ['/v1/gate/ledger/batch', gatePat],
        ['/v1/ledger/batch', servicePat],
      ] as const)
        queue.add('POST', route, { token, raw });
    queue.add('POST', '/v1/gate/ledger', { token: gatePat, body: { ...row(), extra: 1 } });
    queue.add('POST', '/v1/ledger/batch', { token: servicePat, body: { rows: [row()], extra: 1 } });
    await queue.run();
    assert.deepEqual(await snapshot(), before);
  });

  it('gate uptime reports: every field of a bucket, the buckets list and raw bodies', async () => {
    const before = await snapshot();
    const bucket = () => ({ endpoint_id: endpointId, hour: hour(), answered: 3, failed: 1 });
    const counts = [...hostile.any!.filter((v) => v !== 0), ...hostile.unix_seconds!, 1_000_001, '1']; // 0 is a count
    const fields: Record<string, unknown[]> = {
      endpoint_id: [...hostile.any!, ...hostile.identifier!],
      hour: [
        ...hostile.any!,
        ...hostile.identifier!,
        ...hostile.unix_seconds!,
        ...FREE_TEXT,
        hour().replace(':00:00', ':30:00'),
        hour().replace('Z', '+00:00'),
        hour().replace('.000Z', 'Z\n'),
        '2026-13-01T00:00:00Z',
        '2026-02-30T00:00:00Z', // no such day: Date.parse would make it 1 March
        `${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}T24:00:00Z`, // today's midnight, misspelled
      ],
      answered: counts,
      failed: counts,
    };
    for (const [field, values] of Object.entries(fields))
      for (const value of values)
        queue.add('POST', '/v1/gate/uptime', {
          token: gatePat,
          body: { buckets: [bucket(), { ...bucket(), [field]: value }] },
        });
    queue.add('POST', '/v1/gate/uptime', {
      token: gatePat,
      body: { buckets: [{ ...bucket(), answered: 0, failed: 0 }] },
    });
    queue.add('POST', '/v1/gate/uptime', { token: gatePat, body: { buckets: [{ ...bucket(), extra: 1 }] } });
    for (const buckets of [...hostile.any!, Array.from({ length: 501 }, bucket)])
      queue.add('POST', '/v1/gate/uptime', { token: gatePat, body: { buckets } });
    for (const raw of hostile.raw_bodies as string[]) queue.add('POST', '/v1/gate/uptime', { token: gatePat, raw });
    await queue.run();
    assert.deepEqual(await snapshot(), before);
  });

  it('POST /v1/sellers/{id}/pay-to: EVM and Solana proofs, raw bodies and the path id', async () => {
    const before = await snapshot();
    const payTo = `/v1/sellers/${sellerId}/pay-to`;
    const key = privateKeyToAccount(generatePrivateKey());
    const signature = await key.signMessage({ message: payToClaimMessage(sellerId, key.address) });
    for (const value of [...hostile.any!, ...hostile.identifier!, ...hostile.evm_address!, ...FREE_TEXT])
      queue.add('POST', payTo, { token: session, body: { address: value, signature } });
    const otherSignature = await key.signMessage({ message: payToClaimMessage(sellerId, OTHER_ADDRESS) });
    for (const value of [
      ...hostile.any!,
      ...hostile.identifier!,
      ...hostile.bytes32_hex!,
      ...FREE_TEXT,
      otherSignature,
    ])
      queue.add('POST', payTo, { token: session, body: { address: key.address, signature: value } });
    // A Solana proof: a base58 address and signature; a 64–88 character value outside base58 is no signature.
    for (const value of [...hostile.any!, ...hostile.bytes32_hex!, '0'.repeat(64), 'O'.repeat(88), SOLANA_SIGNATURE])
      queue.add('POST', payTo, { token: session, body: { address: SOLANA_ADDRESS, signature: value } });
    queue.add('POST', payTo, { token: session, body: { address: key.address, signature, extra: 1 } });
    for (const raw of hostile.raw_bodies as string[]) queue.add('POST', payTo, { token: session, raw });
    for (const id of hostileIds())
      queue.add('POST', `/v1/sellers/${id}/pay-to`, { token: session, body: { address: key.address, signature } });
    await queue.run();
    assert.deepEqual(await snapshot(), before);
  });

  it('the payout flush Idempotency-Key, auth/verify and catalogue `network`, seller path ids', async () => {
    const before = await snapshot();
    const flush = `/v1/sellers/${sellerId}/payouts/flush`;
    for (const value of hostileHeaderValues())
      queue.add('POST', flush, { token: session, headers: { 'idempotency-key': value }, code: INVALID_KEY });

    const networks = [...hostile.any!, ...hostile.identifier!, ...hostile.caip2_network!, 'solana:x'];
    for (const network of networks) queue.add('POST', '/v1/auth/verify', { token: servicePat, body: { network } });
    queue.add('POST', '/v1/auth/verify', { token: servicePat, body: { network: NETWORK, extra: 1 } });
    for (const raw of hostile.raw_bodies as string[])
      if (raw !== '') queue.add('POST', '/v1/auth/verify', { token: servicePat, raw }); // no body is "no network"
    for (const network of networks) {
      const text = typeof network === 'string' ? network : JSON.stringify(network);
      queue.add('GET', `/v1/gate/catalogue?network=${encodeURIComponent(text.toWellFormed())}`, { token: gatePat });
    }
    const shapes = [`network=${NETWORK}&network=${NETWORK}`, 'network[x]=1', 'extra=1', '__proto__[x]=1'];
    for (const q of [...shapes, ...INHERITED_NAME_QUERIES])
      queue.add('GET', `/v1/gate/catalogue?${q}`, { token: gatePat });

    for (const id of hostileIds()) {
      queue.add('GET', `/v1/sellers/${id}/discovery`, { token: session });
      queue.add('POST', `/v1/sellers/${id}/payouts/flush`, { token: session });
    }
    await queue.run();
    assert.deepEqual(await snapshot(), before);
  });

  it('the payment-identifier store routes: every field but the id, the route and a header value', async () => {
    const before = await snapshot();
    const answer = ANSWER;
    const answers: unknown[] = [
      ...hostile.any!.filter((v) => !isEmptyObject(v)),
      ...[...hostile.any!, 199, 600].map((status) => ({ ...answer, status })),
      ...hostile.any!.filter((v) => !isEmptyObject(v)).map((headers) => ({ ...answer, headers })),
      ...['Content-Type', 'a b', '', 'x'.repeat(65), 'ключ', '__proto__', 'a\u0000'].map((name) => ({
        ...answer,
        headers: JSON.parse(`{${JSON.stringify(name)}:"x"}`),
      })),
      { ...answer, headers: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`h${i}`, 'x'])) },
      ...[...hostile.any!, ...hostile.base64_header!, ...FREE_TEXT]
        .filter((v) => !(typeof v === 'string' && BASE64.test(v))) // the table's base64 that is base64
        .map((body_base64) => ({ ...answer, body_base64 })),
      { ...answer, body_base64: 'A'.repeat(349_532) }, // past what 256 KiB encodes to
      { ...answer, extra: 1 },
    ];
    const fields: Record<string, unknown[]> = {
      fingerprint: [...hostile.any!, ...hostile.identifier!, ...HEX_NOT_SHA256, 'AB'.repeat(32), 'ab'.repeat(33)],
      pending_ttl_seconds: [...hostile.any!, ...hostile.unix_seconds!, 86_401, '60'],
      answer: answers,
      extra: [1],
    };
    for (const [prefix, token, endpoint] of [
      ['/v1/payment-ids', servicePat, undefined],
      ['/v1/gate/payment-ids', gatePat, endpointId],
    ] as const) {
      const key = () => ({
        route: '/forecast',
        id: payId(),
        fingerprint: 'ef'.repeat(32),
        ...(endpoint ? { endpoint_id: endpoint } : {}),
      });
      const bodies: Record<string, () => Record<string, unknown>> = {
        begin: () => ({ ...key(), pending_ttl_seconds: 60 }),
        complete: () => ({ ...key(), answer }),
        release: key,
      };
      for (const [step, base] of Object.entries(bodies)) {
        const route = `${prefix}/${step}`;
        for (const [field, values] of Object.entries(fields)) {
          if (field === 'pending_ttl_seconds' && step !== 'begin') continue;
          if (field === 'answer' && step !== 'complete') continue;
          for (const value of values) queue.add('POST', route, { token, body: { ...base(), [field]: value } });
        }
        // The gate names a managed endpoint of its account; the middleware's seller is its PAT's, and it names none.
        for (const value of [...hostile.any!, ...hostile.identifier!])
          queue.add('POST', route, { token, body: { ...base(), endpoint_id: value } });
        for (const raw of hostile.raw_bodies as string[]) queue.add('POST', route, { token, raw });
      }
    }
    await queue.run();
    assert.deepEqual(await snapshot(), before);
  });
});
