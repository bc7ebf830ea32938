/**
 * A submitted payout near its authorization's expiry (src/api/sellers/payouts/seller-payouts.ts,
 * payout-expiry.ts) against PostgreSQL — the payout state machine, the triggers that count a payout as paid
 * and give a failed one back, the per-seller payout lock — with a scripted facilitator and chain:
 * - a flush just past `validBefore` (this host's clock) while the RPC endpoint does not show the transfer yet
 *   leaves the payout `submitted` and records no second one;
 * - a flush past `validBefore` + the grace, while a resubmission is in flight, is refused (409
 *   `payout_in_progress`) instead of failing the payout;
 * - past the grace and unused on chain, the payout turns `failed`, its amount is given back and paid anew;
 * - thirty flushes sent while one holds the seller's payout lock across a settlement are refused at once, holding
 *   no pooled connection, and another tenant's request is answered meanwhile.
 * The real facilitator and chain: test/integration/api/merchant-of-record.test.ts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Hex } from 'viem';
import { PgPayoutStore } from '../../../src/api/sellers/store/pg-payout-stores.js';
import { PAYOUT_EXPIRY_GRACE_SECONDS } from '../../../src/api/sellers/payouts/payout-expiry.js';
import type { PayoutOrder } from '../../../src/api/sellers/payouts/payout-rail.js';
import { MOVES_AT_ONCE, SellerPayouts } from '../../../src/api/sellers/payouts/seller-payouts.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import type { SellerRow } from '../../../src/api/sellers/seller-views.js';
import type { PaymentAuthorization } from '../../../src/api/pay/payment-authorization.js';
import { ChainRegistry } from '../../../src/shared/chain-registry.js';
import type { SettleOutcome } from '../../../src/x402/facilitator-client.js';
import { facilitatorSettleReplySchema } from '../../../src/x402/wire-schemas.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { markLedgerVerifiedForTest, newProvenSeller } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const NETWORK = 'eip155:84532';
const hex32 = () => `0x${randomBytes(32).toString('hex')}` as Hex;

/**
 * The chain as the payouts see it: its time, the authorizations it spent (each a transfer out of the
 * collection wallet) and an RPC endpoint that may lag behind it (`lagging`: spent nonces read as unused).
 */
class ScriptedChain {
  seconds = 0;
  lagging = false;
  readonly transfers: Array<{ payout: string; value: string; tx: Hex }> = [];
  private readonly spent = new Map<string, Hex>();

  /** What the token does with a transferWithAuthorization mined now. */
  mine(payout: string, a: { nonce: string; value: string; validBefore: string }): Hex | 'nonce_used' | 'expired' {
    if (this.spent.has(a.nonce)) return 'nonce_used';
    if (BigInt(a.validBefore) <= BigInt(this.seconds)) return 'expired';
    const tx = hex32();
    this.spent.set(a.nonce, tx);
    this.transfers.push({ payout, value: a.value, tx });
    return tx;
  }

  /** The AuthorizationUseReader's answer. */
  readonly find = async (_chain: unknown, _from: Hex, nonce: Hex) => {
    const tx = this.lagging ? undefined : this.spent.get(nonce);
    return tx ? { kind: 'used' as const, txHash: tx } : { kind: 'unused' as const };
  };
}

/**
 * The payout rail: `sign` answers one authorization per payout (valid for an hour from its first signing, as
 * the pay path's Idempotency-Key keeps it); `settle` is the facilitator in `mode` — `down` (nothing sent),
 * `ok`, or `slow` (the transfer is mined at once, the answer held until `release`, then `ok` or lost).
 */
class ScriptedRail {
  mode: 'down' | 'ok' | 'slow' = 'down';
  private readonly signed = new Map<string, PaymentAuthorization>();
  private readonly held: Array<(answer: 'ok' | 'lost') => void> = [];

  constructor(
    private readonly chain: ScriptedChain,
    private readonly clock: () => Date,
  ) {}

  sign = async (_chain: unknown, order: PayoutOrder): Promise<PaymentAuthorization> => {
    let payment = this.signed.get(order.id);
    if (!payment) {
      payment = {
        scheme: 'exact',
        signature: `0x${'11'.repeat(65)}`,
        authorization_id: `auth_${order.id}`,
        decision_id: `dec_${order.id}`,
        wallet_id: order.wallet_id,
        network: NETWORK,
        asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
        amount_usd: '0',
        headroom: {} as PaymentAuthorization['headroom'],
        authorization: {
          from: `0x${'22'.repeat(20)}`,
          to: order.pay_to,
          value: order.amount_micro.toString(),
          validAfter: '0',
          validBefore: String(Math.floor(this.clock().getTime() / 1000) + 3600),
          nonce: hex32(),
        },
      };
      this.signed.set(order.id, payment);
    }
    return payment;
  };

  settle = async (_chain: unknown, order: PayoutOrder, payment: PaymentAuthorization): Promise<SettleOutcome> => {
    const mode = this.mode;
    if (mode === 'down') return { kind: 'unavailable', cause: 'facilitator down' };
    if (!('authorization' in payment)) throw new Error('an exact EVM payment');
    const mined = this.chain.mine(order.id, payment.authorization);
    if (mined === 'nonce_used' || mined === 'expired')
      return { kind: 'rejected', reason: mined, settlement: undefined };
    const answer = mode === 'slow' ? await new Promise<'ok' | 'lost'>((r) => this.held.push(r)) : 'ok';
    if (answer === 'lost') return { kind: 'unavailable', cause: 'answer lost' };
    return { kind: 'ok', settlement: facilitatorSettleReplySchema.parse({ success: true, transaction: mined }) };
  };

  /** How many settlements wait for their answer. */
  get waiting(): number {
    return this.held.length;
  }

  /** Answers every held settlement. */
  release(answer: 'ok' | 'lost'): void {
    for (const r of this.held.splice(0)) r(answer);
  }
}

const until = async (what: string, done: () => boolean) => {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(done(), what);
};

describe('a submitted payout near its expiry (PostgreSQL, a scripted facilitator and chain)', function () {
  this.timeout(120_000);
  const t = useTestTreasury();
  let session: string;

  before(async () => {
    session = (await signInWithNewKey(t)).session;
  });

  /** A platform_mor seller with a proven pay-to, owed `amount` (a verified row paid to its collection wallet). */
  async function owedSeller(name: string, amount: bigint) {
    const proven = await newProvenSeller(t, session, name, 'platform_mor');
    const verify = await t.request('POST', '/v1/auth/verify', { token: proven.pat, body: { network: NETWORK } });
    assert.match(String(verify.body.collect_to), /^0x[0-9a-fA-F]{40}$/, JSON.stringify(verify.body));
    const reported = await t.request('POST', '/v1/ledger', {
      token: proven.pat,
      body: { tx_hash: hex32(), payer: `0x${'33'.repeat(20)}`, amount: amount.toString(), network: NETWORK },
    });
    assert.equal(reported.status, 201, JSON.stringify(reported.body));
    await markLedgerVerifiedForTest(t.db.knex, proven.seller_id);
    return (await t.db.knex('sellers').where({ id: proven.seller_id }).first()) as SellerRow;
  }

  /** The service under test on the suite's database, with this test's clock, facilitator and chain. */
  function payoutsOf() {
    let now = Date.UTC(2027, 0, 4, 12);
    const chain = new ScriptedChain();
    const clock = () => new Date(now);
    const rail = new ScriptedRail(chain, clock);
    const service = new SellerPayouts({
      store: new PgPayoutStore(t.db.knex),
      clock,
      chains: ChainRegistry.fromConfig(undefined),
      rail: rail as never,
      chainUse: chain,
      options: { maxPayoutMicro: 1_000_000_000n },
    });
    /** Moves this host's clock (ms) and the chain's (s, `chainLagMs` behind it). */
    const at = (ms: number, chainLagMs = 0) => {
      now = ms;
      chain.seconds = Math.floor((ms - chainLagMs) / 1000);
    };
    at(now);
    return { service, chain, rail, at };
  }

  const payoutRows = (seller: SellerRow) =>
    t.db
      .knex('payout_flushes')
      .where({ seller_id: seller.id })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select('id', 'amount_micro', 'status', 'reason', 'tx_hash') as Promise<
      Array<{ id: string; amount_micro: string; status: string; reason: string | null; tx_hash: string | null }>
    >;
  const totals = async (seller: SellerRow) => {
    const c = await t.db.knex('platform_collection_wallets').where({ seller_id: seller.id, network: NETWORK }).first();
    const p = await t.db.knex('seller_payables').where({ seller_id: seller.id }).first();
    return { collectionPaid: BigInt(c.paid_micro), payablesPaid: BigInt(p.paid_micro) };
  };

  /** A payout signed and submitted whose settlement answer never came (the facilitator was down): P1. */
  async function submittedPayout(name: string, amount: bigint) {
    const seller = await owedSeller(name, amount);
    const s = payoutsOf();
    await s.service.flush(seller, 'usr_owner', undefined);
    const [p1] = await payoutRows(seller);
    assert.deepEqual([p1?.status, p1?.reason], ['submitted', 'facilitator_unavailable']);
    return { seller, p1: p1!, validBefore: await validBeforeOf(s.rail, p1!.id), ...s };
  }

  it('a flush half a second past validBefore, while a resubmission is in flight and the RPC lags, leaves the payout submitted and records no second one', async () => {
    const { seller, p1, validBefore, service, chain, rail, at } = await submittedPayout('Expiry Race', 400_000n);

    // Two seconds before expiry: P1 submitted again; mined at once (inside its window), the answer slow.
    at(validBefore * 1000 - 2_000);
    rail.mode = 'slow';
    const flushA = service.flush(seller, 'usr_owner', undefined);
    await until('the resubmission reached the facilitator', () => rail.waiting === 1);
    assert.equal(chain.transfers.length, 1);

    // Half a second after expiry by this host's clock; the RPC endpoint does not show the transfer yet. A flush
    // while the resubmission is in flight is refused; retried once it answered (lost), it judges P1 itself.
    at(validBefore * 1000 + 500);
    chain.lagging = true;
    rail.mode = 'ok';
    await assert.rejects(service.flush(seller, 'usr_owner', undefined), isPayoutInProgress);
    rail.release('lost');
    await flushA;
    await service.flush(seller, 'usr_owner', undefined);

    const rows = await payoutRows(seller);
    assert.deepEqual(
      rows.map((r) => [r.id, r.status]),
      [[p1.id, 'submitted']],
      'P1 stays submitted and no second payout is recorded',
    );
    assert.deepEqual(
      chain.transfers.map((x) => x.payout),
      [p1.id],
      'one transfer left the collection wallet',
    );

    // Once the RPC shows the transfer, the next flush finds it: settled with its transaction, paid once.
    chain.lagging = false;
    at(validBefore * 1000 + 60_000);
    await service.flush(seller, 'usr_owner', undefined);
    const [settled, ...more] = await payoutRows(seller);
    assert.deepEqual([settled?.status, settled?.tx_hash, more.length], ['settled', chain.transfers[0]!.tx, 0]);
    assert.deepEqual(await totals(seller), { collectionPaid: 400_000n, payablesPaid: 400_000n });
  });

  it('a flush past validBefore + the grace, while a resubmission is in flight, is refused (payout_in_progress) instead of failing the payout', async () => {
    const { seller, p1, validBefore, service, chain, rail, at } = await submittedPayout('Expiry Lock', 300_000n);

    at(validBefore * 1000 - 2_000);
    rail.mode = 'slow';
    const flushA = service.flush(seller, 'usr_owner', undefined);
    await until('the resubmission reached the facilitator', () => rail.waiting === 1);

    // A flush long after expiry, the RPC still behind: it must not judge P1 while P1's settlement is in flight.
    at((validBefore + PAYOUT_EXPIRY_GRACE_SECONDS) * 1000 + 1_000);
    chain.lagging = true;
    rail.mode = 'ok';
    try {
      await assert.rejects(service.flush(seller, 'usr_owner', undefined), isPayoutInProgress);
      assert.equal(rail.waiting, 1, "refused while the first flush's settlement is still in flight");
    } finally {
      rail.release('ok');
      await Promise.allSettled([flushA]);
    }
    await flushA;
    // Its retry finds P1 settled: nothing more to do.
    await service.flush(seller, 'usr_owner', undefined);

    const rows = await payoutRows(seller);
    assert.deepEqual(
      rows.map((r) => [r.id, r.status, r.tx_hash]),
      [[p1.id, 'settled', chain.transfers[0]!.tx]],
    );
    assert.equal(chain.transfers.length, 1, 'one transfer left the collection wallet');
    assert.deepEqual(await totals(seller), { collectionPaid: 300_000n, payablesPaid: 300_000n });
  });

  it('unused on chain and past validBefore + the grace: failed, its amount given back and paid anew; within the grace: kept', async () => {
    const { seller, p1, validBefore, service, chain, rail, at } = await submittedPayout('Expired Unused', 250_000n);
    rail.mode = 'ok';

    // Just past validBefore: the transfer could still show; the facilitator refuses the expired authorization.
    at(validBefore * 1000 + 500);
    await service.flush(seller, 'usr_owner', undefined);
    assert.deepEqual(
      (await payoutRows(seller)).map((r) => [r.id, r.status, r.reason]),
      [[p1.id, 'submitted', 'expired']],
      'within the grace the payout stays submitted',
    );

    at((validBefore + PAYOUT_EXPIRY_GRACE_SECONDS) * 1000 + 1_000);
    await service.flush(seller, 'usr_owner', undefined);
    const [failed, p2, ...more] = await payoutRows(seller);
    assert.deepEqual([failed?.id, failed?.status, failed?.reason], [p1.id, 'failed', 'authorization_expired']);
    assert.deepEqual([p2?.amount_micro, p2?.status, more.length], ['250000', 'settled', 0]);
    assert.deepEqual(
      chain.transfers.map((x) => [x.payout, x.value]),
      [[p2!.id, '250000']],
    );
    // Given back when P1 failed, counted again for P2: paid once in all.
    assert.deepEqual(await totals(seller), { collectionPaid: 250_000n, payablesPaid: 250_000n });
  });
  it('thirty flushes sent while one holds the payout lock across a settlement are refused at once, holding no pooled connection; another tenant is answered meanwhile', async () => {
    const seller = await owedSeller('Flush Flood', 1_000_000n);
    const { service, rail } = payoutsOf();
    rail.mode = 'slow';
    const pool = (t.db.knex.client as { pool: { numUsed(): number; numPendingAcquires(): number } }).pool;
    // Lock waits are read on a connection of its own: a pool full of waiters could not answer it.
    const watcher = new pg.Client({ connectionString: t.db.connectionString });
    await watcher.connect();
    const lockWaiters = async () =>
      Number(
        (
          await watcher.query(
            `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database =
               (SELECT oid FROM pg_database WHERE datname = current_database())`,
          )
        ).rows[0].n,
      );

    const first = service.flush(seller, 'usr_owner', undefined);
    let flood: Array<PromiseSettledResult<void>> = [];
    try {
      await until('the first flush holds the lock across its settlement', () => rail.waiting === 1);
      const outcomes: Array<PromiseSettledResult<void> | undefined> = Array.from({ length: 30 });
      const flushes = outcomes.map((_, i) =>
        service.flush(seller, 'usr_owner', undefined).then(
          (value) => void (outcomes[i] = { status: 'fulfilled', value }),
          (reason: unknown) => void (outcomes[i] = { status: 'rejected', reason }),
        ),
      );
      // Until all thirty answered, or some wait on the payout lock in PostgreSQL and the rest for a pooled connection.
      let waiting = 0;
      for (let i = 0; i < 500; i++) {
        const onLock = await lockWaiters();
        waiting = onLock + pool.numPendingAcquires();
        const answered = outcomes.filter(Boolean).length;
        if (answered === 30 || (onLock > 0 && answered + waiting >= 30)) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.deepEqual(
        { answered: outcomes.filter(Boolean).length, waiting, move: rail.waiting },
        { answered: 30, waiting: 0, move: 1 },
        'every flush answered while the first one still holds its settlement, none waiting for the lock',
      );
      flood = outcomes as Array<PromiseSettledResult<void>>;
      assert.ok(pool.numUsed() <= MOVES_AT_ONCE + 1, `pooled connections in use: ${pool.numUsed()}`);
      // Another tenant's authenticated request is answered while the settlement is still held.
      const other = await signInWithNewKey(t);
      const listed = await t.request('GET', '/v1/sellers', { token: other.session });
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      assert.equal(rail.waiting, 1, 'answered while the move was held');
      await Promise.all(flushes);
    } finally {
      rail.release('ok');
      await Promise.allSettled([first]);
      await watcher.end();
    }
    await first;
    for (const o of flood) assert.ok(o.status === 'rejected' && isPayoutInProgress(o.reason), JSON.stringify(o));
    const rows = await payoutRows(seller);
    assert.deepEqual(
      rows.map((r) => [r.amount_micro, r.status]),
      [['1000000', 'settled']],
      'one payout, settled once',
    );
    assert.deepEqual(await totals(seller), { collectionPaid: 1_000_000n, payablesPaid: 1_000_000n });
  });
});

/** The 409 a flush answers while another flush of the seller holds its payout lock. */
function isPayoutInProgress(err: unknown): boolean {
  assert.ok(err instanceof AppError, String(err));
  assert.deepEqual([err.code, err.status, err.headers['Retry-After']], ['payout_in_progress', 409, '5']);
  return true;
}

async function validBeforeOf(rail: ScriptedRail, payoutId: string): Promise<number> {
  const payment = await rail.sign(undefined, { id: payoutId } as PayoutOrder);
  if (!('authorization' in payment)) throw new Error('an exact EVM payment');
  return Number(payment.authorization.validBefore);
}
