/**
 * The pay wing's pure decision (src/api/pay/decide-payment.ts), by table: snapshot + request + clock →
 * outcome, the write that records it and how the snapshot changes — with no I/O, and the same decision for
 * the same inputs and mint.
 */
import assert from 'node:assert/strict';
import { parseUsd } from '../../../policy/money.js';
import { ChainRegistry } from '../../../src/shared/chain-registry.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { decidePayment, type DecisionInput, type DecisionMint } from '../../../src/api/pay/decide-payment.js';
import type { PaySnapshot } from '../../../src/api/pay/pay-snapshot.js';
import type { SpendPlan } from '../../../src/api/pay/pay-types.js';
import type { PaymentAuthorization } from '../../../src/api/pay/payment-authorization.js';
import { EMPTY, NOW, OTHER, TO } from '../policy/policy-fixtures.js';

const chains = ChainRegistry.fromConfig(undefined);
const SEPOLIA = chains.resolve('eip155:84532')!;
const BASE = chains.resolve('eip155:8453')!;
const WALLET_ADDRESS = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const HEAD = { seq: 7, hash: 'ab'.repeat(32) };

/** A deterministic mint: numbered ids and a fixed window and nonce. */
function mint(): DecisionMint {
  let n = 0;
  return {
    id: (prefix) => `${prefix}${++n}`,
    window: () => ({ validAfter: '1000', validBefore: '2000', nonce: `0x${'0'.repeat(62)}2a` }),
  };
}

function snapshot(
  overrides: {
    policy?: Record<string, unknown>;
    state?: Partial<PaySnapshot['state']>;
    wallet?: Partial<PaySnapshot['wallet']>;
    previous?: PaySnapshot['previous'];
  } = {},
): PaySnapshot {
  return {
    wallet: {
      id: 'w_1',
      account_id: 'acct_1',
      label: null,
      network: 'eip155:84532',
      address: WALLET_ADDRESS,
      public_key: '04',
      wallet_key_ref: 'wk_1',
      key_version: 1,
      policy: overrides.policy ?? {},
      status: 'active',
      created_at: NOW,
      updated_at: NOW,
      revoked_at: null,
      account_key_ref: 'ak_1',
      ...overrides.wallet,
    },
    state: { ...EMPTY, ...overrides.state },
    recent: null,
    auditHead: HEAD,
    previous: overrides.previous ?? null,
  };
}

const plan = (overrides: Partial<SpendPlan> = {}): SpendPlan => ({
  kind: 'pay',
  scheme: 'exact',
  chain: SEPOLIA,
  domain: { name: 'USDC', version: '2' },
  to: TO,
  amountMicro: parseUsd('1.5'),
  capability: undefined,
  resource: 'https://seller.example/a',
  validForSeconds: 60,
  ...overrides,
});

const input = (overrides: Partial<DecisionInput> = {}): DecisionInput => ({
  snapshot: snapshot(),
  plan: plan(),
  payer: { actor: 'pat_1', idempotencyKey: undefined, pat: undefined },
  requestHash: null,
  lockKey: '42',
  chains,
  now: NOW,
  mint: mint(),
  ...overrides,
});

const signed = (from: string): PaymentAuthorization => ({
  scheme: 'exact',
  signature: '0xsig',
  authorization_id: 'auth_old',
  decision_id: 'pd_old',
  wallet_id: 'w_1',
  network: 'eip155:84532',
  asset: SEPOLIA.usdc,
  amount_usd: '1.5',
  headroom: {},
  authorization: { from, to: TO, value: '1500000', validAfter: '1', validBefore: '2', nonce: `0x${'1'.repeat(64)}` },
});

/** What a row of the table expects: an outcome kind (with the write's tables and the snapshot's change), or an error code. */
type Expect =
  | { kind: 'reserved' | 'denied' | 'replayed'; fresh?: boolean; writes: string[]; spent?: bigint; rules?: string[] }
  | { error: string };

const TABLE: Array<[name: string, input: DecisionInput, expect: Expect]> = [
  [
    'an allowed payment: a fresh reservation, its authorization, spend and audit row',
    input(),
    { kind: 'reserved', fresh: true, writes: ['authorization', 'spend', 'audit'], spent: parseUsd('1.5') },
  ],
  [
    'a buyer PAT counts the payment in its day too',
    input({
      payer: { actor: 'pat_1', idempotencyKey: undefined, pat: { tokenId: 'pat_1', dailyCapMicro: 10n ** 9n } },
    }),
    { kind: 'reserved', fresh: true, writes: ['authorization', 'spend', 'patSpend', 'audit'], spent: parseUsd('1.5') },
  ],
  [
    'over the daily cap: a denial with its decision and audit row, nothing spent',
    input({ snapshot: snapshot({ policy: { daily_cap_usd: '2' }, state: { dailySpentMicro: parseUsd('1') } }) }),
    { kind: 'denied', writes: ['decision', 'audit'], rules: ['daily_cap_usd'] },
  ],
  [
    'every violated rule at once',
    input({ snapshot: snapshot({ policy: { per_tx_cap_usd: '1', counterparty_blocklist: [TO] } }) }),
    { kind: 'denied', writes: ['decision', 'audit'], rules: ['per_tx_cap_usd', 'counterparty_blocklist'] },
  ],
  [
    'the cap exactly reached is allowed',
    input({ snapshot: snapshot({ policy: { daily_cap_usd: '2' }, state: { dailySpentMicro: parseUsd('0.5') } }) }),
    { kind: 'reserved', fresh: true, writes: ['authorization', 'spend', 'audit'], spent: parseUsd('1.5') },
  ],
  [
    'a signed earlier attempt with the same body is replayed, nothing written',
    input({
      requestHash: 'h',
      snapshot: snapshot({
        previous: { id: 'auth_old', status: 'signed', request_hash: 'h', response: signed(WALLET_ADDRESS) },
      }),
    }),
    { kind: 'replayed', writes: [] },
  ],
  [
    'a reserved earlier attempt is resumed (signed now), nothing written',
    input({
      requestHash: 'h',
      snapshot: snapshot({
        previous: { id: 'auth_old', status: 'reserved', request_hash: 'h', response: signed(WALLET_ADDRESS) },
      }),
    }),
    { kind: 'reserved', fresh: false, writes: [] },
  ],
  [
    'an earlier attempt with another body: 409',
    input({
      requestHash: 'other',
      snapshot: snapshot({
        previous: { id: 'auth_old', status: 'signed', request_hash: 'h', response: signed(WALLET_ADDRESS) },
      }),
    }),
    { error: 'idempotency_key_conflict' },
  ],
  [
    'a reserved attempt by a key since rotated: 409',
    input({
      requestHash: 'h',
      snapshot: snapshot({
        previous: { id: 'auth_old', status: 'reserved', request_hash: 'h', response: signed(OTHER) },
      }),
    }),
    { error: 'idempotency_key_conflict' },
  ],
  [
    "a payment on another chain than the wallet's",
    input({ plan: plan({ chain: BASE }) }),
    { error: 'network_not_supported' },
  ],
  [
    'a wallet on a chain not configured',
    input({ snapshot: snapshot({ wallet: { network: 'eip155:1' } }) }),
    { error: 'network_not_supported' },
  ],
  [
    'a wallet without a key',
    input({ snapshot: snapshot({ wallet: { wallet_key_ref: null } }) }),
    { error: 'wallet_revoked' },
  ],
  [
    'a policy that does not parse fails closed',
    input({ snapshot: snapshot({ policy: { daily_cap_usd: 'lots' } }) }),
    { error: 'PolicyInputError' },
  ],
];

describe('pay wing: decidePayment', () => {
  for (const [name, given, expect] of TABLE) {
    it(name, () => {
      if ('error' in expect) {
        assert.throws(
          () => decidePayment(given),
          (err: unknown) => (err instanceof AppError ? err.code : (err as Error).name) === expect.error,
        );
        return;
      }
      const decided = decidePayment(given);
      assert.equal(decided.outcome.kind, expect.kind);
      if (expect.fresh !== undefined) assert.equal((decided.outcome as { fresh: boolean }).fresh, expect.fresh);
      const write = decided.write ?? {};
      assert.deepEqual(
        ['decision', 'authorization', 'spend', 'patSpend', 'audit'].filter((k) => k in write),
        expect.writes,
      );
      if (decided.write) {
        assert.equal(decided.write.lockKey, '42');
        assert.equal(decided.write.audit.seq, HEAD.seq + 1);
        assert.equal(decided.write.audit.prev_hash, HEAD.hash);
        assert.deepEqual(decided.change, {
          auditHead: { seq: HEAD.seq + 1, hash: decided.write.audit.hash },
          at: NOW,
          ...(expect.spent !== undefined ? { spentMicro: expect.spent } : {}),
        });
      } else assert.equal(decided.change, undefined);
      if (expect.rules)
        assert.deepEqual(
          (decided.outcome as { decision: { violations: Array<{ rule: string }> } }).decision.violations.map(
            (v) => v.rule,
          ),
          expect.rules,
        );
    });
  }

  it("an exact reservation fixes the signed message: the wallet pays the payee the amount, in the mint's window and nonce, unsigned", () => {
    const decided = decidePayment(input());
    const payment = (decided.outcome as { payment: PaymentAuthorization }).payment;
    assert.deepEqual(payment, {
      scheme: 'exact',
      authorization: {
        from: WALLET_ADDRESS,
        to: TO,
        value: '1500000',
        validAfter: '1000',
        validBefore: '2000',
        nonce: `0x${'0'.repeat(62)}2a`,
      },
      signature: '',
      authorization_id: 'auth_2',
      decision_id: 'pd_1',
      wallet_id: 'w_1',
      network: 'eip155:84532',
      asset: SEPOLIA.usdc,
      amount_usd: '1.5',
      headroom: {},
    });
    const row = decided.write!.authorization!;
    assert.deepEqual(
      [row.status, row.signature, row.signedAt, row.nonce, row.amountMicro, row.response],
      ['reserved', null, null, payment.authorization.nonce, '1500000', payment],
    );
  });

  it('an upto reservation is a Permit2 witness transfer bound to the facilitator, its nonce in decimal', () => {
    const facilitator = OTHER;
    const decided = decidePayment(input({ plan: plan({ scheme: 'upto', facilitator }) }));
    const payment = (decided.outcome as { payment: PaymentAuthorization }).payment;
    assert.equal(payment.scheme, 'upto');
    if (payment.scheme !== 'upto') return;
    assert.deepEqual(payment.permit2_authorization.witness, { to: TO, facilitator, validAfter: '1000' });
    assert.equal(payment.permit2_authorization.nonce, '42');
    assert.equal(decided.write!.authorization!.nonce, `0x${'0'.repeat(62)}2a`);
  });

  it('the same inputs and mint give the same decision (no hidden clock, randomness or I/O)', () => {
    assert.deepEqual(decidePayment(input()), decidePayment(input()));
    assert.deepEqual(
      decidePayment(input({ snapshot: snapshot({ policy: { daily_cap_usd: '1' } }) })),
      decidePayment(input({ snapshot: snapshot({ policy: { daily_cap_usd: '1' } }) })),
    );
  });
});
