/**
 * The ledger verifier's scheduling against real PostgreSQL, with the chain read replaced by a scripted reader
 * (the on-chain judgement itself is tested on anvil in test/integration/api/ledger-verification.test.ts):
 * - at most `concurrency` rows are checked at once, and every claimed row is decided;
 * - an RPC failure leaves the row pending (rpc_unavailable) and retries it after a doubling backoff; so does a
 *   read the chain reads' admission refused (nothing read), which is asked for under the seller's account;
 * - two verifiers (two API processes) running together check each row once;
 * - a verified platform_mor row reaches the seller's payables through the triggers.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { encodeAbiParameters, encodeEventTopics, erc20Abi, type Hex } from 'viem';
import { ChainRegistry } from '../../../src/shared/chain-registry.js';
import type { MinedTransaction } from '../../../src/api/chain/balance-reader.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import { LedgerVerifier } from '../../../src/api/sellers/ledger/ledger-verifier.js';
import { PgLedgerVerificationStore } from '../../../src/api/sellers/store/pg-ledger-verification-store.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';

const NETWORK = 'eip155:84532';
const USDC: Hex = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const PAYER: Hex = '0x1111111111111111111111111111111111111111';
const PAY_TO: Hex = '0x2222222222222222222222222222222222222222';

describe('ledger verifier: concurrency, backoff and shared work (PostgreSQL, scripted chain reads)', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let n = 0;
  const chains = ChainRegistry.fromConfig(undefined);

  const minedTransfer = (value: bigint): MinedTransaction => ({
    to: USDC,
    input: '0x',
    status: 'success',
    blockNumber: 10n,
    confirmations: 1,
    logs: [
      {
        address: USDC,
        topics: encodeEventTopics({ abi: erc20Abi, eventName: 'Transfer', args: { from: PAYER, to: PAY_TO } }) as Hex[],
        data: encodeAbiParameters([{ type: 'uint256' }], [value]),
        logIndex: 0,
      },
    ],
  });
  const verifier = (
    reader: { minedTransaction(tenant: string, chain: unknown, hash: Hex): Promise<MinedTransaction | null> },
    clock: () => Date,
    concurrency = 4,
    more: Partial<Pick<ConstructorParameters<typeof LedgerVerifier>[0], 'solana' | 'chainReads'>> = {},
  ) =>
    new LedgerVerifier({
      store: new PgLedgerVerificationStore(db.knex),
      chains,
      reader,
      rpcUrls: { [NETWORK]: 'http://127.0.0.1:9' },
      chainReads: { run: (_tenant, read) => read() },
      ...more,
      metrics: createTreasuryMetrics(),
      log: pino({ level: 'silent' }),
      clock,
      options: { intervalMs: 0, concurrency, confirmations: {}, notFoundGraceSeconds: 900 },
    });
  /** A platform_mor seller; with `collects`, its buyers' payments to PAY_TO reach its collection wallet. */
  const seller = async (collects = false) => {
    const id = `sel_${randomBytes(12).toString('hex')}`;
    const now = new Date();
    await db
      .knex('accounts')
      .insert({ id: `acct_${id}`, created_at: now })
      .onConflict('id')
      .ignore();
    await db.knex('sellers').insert({
      id,
      account_id: `acct_${id}`,
      name: id,
      slug: id.slice(0, 30),
      payout_mode: 'platform_mor',
      created_at: now,
      updated_at: now,
    });
    await db
      .knex('sellers_pay_to')
      .insert({ seller_id: id, address: PAY_TO.toLowerCase(), signature: '0x', created_at: now });
    if (!collects) return id;
    // A platform_mor seller's buyers pay its collection wallet (docs/adr/0011): here PAY_TO (one seller only: an
    // address collects for one seller).
    await db.knex('treasury_accounts').insert({
      id: `acct_t_${id}`,
      owner_type: 'platform',
      owner_id: id,
      account_key_ref: 'test',
      created_at: now,
    });
    await db.knex('wallets').insert({
      id: `wal_${id}`,
      account_id: `acct_t_${id}`,
      network: NETWORK,
      address: PAY_TO,
      public_key: '0x',
      wallet_key_ref: 'test',
      key_version: 1,
      policy: '{}',
      status: 'active',
      created_at: now,
      updated_at: now,
    });
    await db.knex('platform_collection_wallets').insert({
      seller_id: id,
      network: NETWORK,
      wallet_id: `wal_${id}`,
      address: PAY_TO.toLowerCase(),
      created_at: now,
    });
    return id;
  };
  const rows = async (sellerId: string, count: number, at = new Date()) => {
    const made = Array.from({ length: count }, () => ({
      id: `led_${(++n).toString(16).padStart(24, '0')}`,
      seller_id: sellerId,
      tx_hash: `0x${randomBytes(32).toString('hex')}`,
      payer: PAYER,
      amount_micro: '1000',
      network: NETWORK,
      payout_mode: 'platform_mor',
      reason: 'awaiting_verification',
      next_check_at: at,
      created_at: at,
    }));
    await db.knex('ledger_entries').insert(made);
    return made.map((r) => r.id);
  };

  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    await db?.drop();
  });

  it('checks at most `concurrency` rows at once and decides every claimed row; verified rows reach the payables', async () => {
    const sellerId = await seller(true);
    await rows(sellerId, 20);
    let inFlight = 0;
    let most = 0;
    const reader = {
      async minedTransaction() {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 20));
        inFlight--;
        return minedTransfer(1000n);
      },
    };
    assert.equal(await verifier(reader, () => new Date(), 3).runOnce(), 20);
    assert.equal(most, 3);
    const statuses = (await db
      .knex('ledger_entries')
      .where({ seller_id: sellerId })
      .groupBy('status')
      .select('status')
      .count({ n: '*' })) as Array<{ status: string; n: string }>;
    assert.deepEqual(
      statuses.map((s) => [s.status, Number(s.n)]),
      [['verified', 20]],
    );
    const payables = await db.knex('seller_payables').where({ seller_id: sellerId }).first();
    assert.equal(String(payables.earned_micro), '20000');
    const collection = await db.knex('platform_collection_wallets').where({ seller_id: sellerId }).first();
    assert.equal(String(collection.collected_micro), '20000', 'what reached the collection wallet');
  });

  it('an RPC failure leaves the row pending (rpc_unavailable) and retries it after a doubling backoff', async () => {
    const sellerId = await seller();
    const t0 = new Date('2030-01-01T00:00:00.000Z');
    const [id] = await rows(sellerId, 1, t0);
    let now = t0;
    let calls = 0;
    const reader = {
      async minedTransaction(): Promise<MinedTransaction | null> {
        calls++;
        throw new AppError('chain_unavailable', { fields: { network: NETWORK } });
      },
    };
    const v = verifier(reader, () => now);
    const state = async () => {
      const r = await db.knex('ledger_entries').where({ id }).first();
      return [r.status, r.reason, r.attempts, r.next_check_at.getTime() - now.getTime()];
    };
    await v.runOnce();
    assert.deepEqual(await state(), ['pending', 'rpc_unavailable', 1, 2_000]);
    assert.equal(await v.runOnce(), 0, 'not due before its backoff');
    now = new Date(t0.getTime() + 2_000);
    await v.runOnce();
    assert.deepEqual(await state(), ['pending', 'rpc_unavailable', 2, 4_000]);
    assert.equal(calls, 2);
  });

  it("a read the chain reads' admission refused leaves the row pending (rpc_unavailable), asked under the seller's account", async () => {
    const sellerId = await seller();
    const t0 = new Date('2029-06-01T00:00:00.000Z'); // before the other tests' rows are due again
    const [id] = await rows(sellerId, 1, t0);
    const tenants: string[] = [];
    const reader = {
      async minedTransaction(tenant: string): Promise<MinedTransaction | null> {
        tenants.push(tenant);
        throw new AppError('chain_busy', { headers: { 'Retry-After': '1' } });
      },
    };
    await verifier(reader, () => t0).runOnce();
    const r = await db.knex('ledger_entries').where({ id }).first();
    assert.deepEqual(
      [r.status, r.reason, r.attempts, r.next_check_at.getTime() - t0.getTime()],
      ['pending', 'rpc_unavailable', 1, 2_000],
    );
    assert.deepEqual(tenants, [`acct_${sellerId}`]);
  });

  it("a Solana row's read waits for its seller's place too: refused, the row stays pending (rpc_unavailable), nothing read", async () => {
    const sellerId = await seller();
    await db.knex('sellers_pay_to').insert({
      seller_id: sellerId,
      address: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM',
      signature: 'test',
      created_at: new Date(),
    });
    const t0 = new Date('2029-07-01T00:00:00.000Z');
    const [id] = await rows(sellerId, 1, t0);
    await db
      .knex('ledger_entries')
      .where({ id })
      .update({
        network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
        tx_hash: '5'.repeat(88),
        payer: '7'.repeat(44),
        payout_mode: 'direct',
      });
    const checked: string[] = [];
    const tenants: string[] = [];
    const v = verifier({ minedTransaction: async () => null }, () => t0, 4, {
      solana: {
        unreachableReason: () => undefined,
        check: async (row) => (checked.push(row.tx_hash), { kind: 'not_found' }),
      },
      chainReads: {
        run: async (tenant) => {
          tenants.push(tenant);
          throw new AppError('chain_reads_exceeded', { headers: { 'Retry-After': '1' } });
        },
      },
    });
    await v.runOnce();
    const r = await db.knex('ledger_entries').where({ id }).first();
    assert.deepEqual([r.status, r.reason, r.attempts], ['pending', 'rpc_unavailable', 1]);
    assert.deepEqual([tenants, checked], [[`acct_${sellerId}`], []]);
  });

  it('two verifiers running together check each row once', async () => {
    const sellerId = await seller();
    await rows(sellerId, 30);
    const seen: string[] = [];
    const reader = {
      async minedTransaction(_tenant: string, _chain: unknown, hash: Hex) {
        seen.push(hash);
        await new Promise((r) => setTimeout(r, 5));
        return minedTransfer(1000n);
      },
    };
    // One batch takes at most the seller share (25) of one seller's rows: both claim until nothing is due.
    const [one, two] = [verifier(reader, () => new Date()), verifier(reader, () => new Date())];
    let claimed = 0;
    for (let round = 0; round < 5; round++) {
      const [a, b] = await Promise.all([one.runOnce(), two.runOnce()]);
      if (a + b === 0) break;
      claimed += a + b;
    }
    assert.equal(claimed, 30);
    assert.equal(new Set(seen).size, 30);
    assert.equal(seen.length, 30, 'no row checked twice');
  });
});
