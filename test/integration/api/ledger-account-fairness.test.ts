/**
 * One account cannot multiply its share of the ledger verifier by its number of sellers
 * (src/api/sellers/store/ledger-fair-claim.ts, src/api/sellers/ledger/ledger-pending-cap.ts), through HTTP against
 * the real API and PostgreSQL: rows are reported with each seller's service PAT (every seller proved a pay-to, and
 * the network has an RPC endpoint, so the rows are due at once); the verifier's claim is run on the same database
 * with a small batch (10 rows, a share of 5), counting batches, never milliseconds.
 * - Account A with 12 sellers and 60 pending rows reported first, account B with one seller and 3 rows reported
 *   after: B's rows are all in the first batch, A's share of it is 5 rows of 5 different sellers (per-seller turns
 *   gave A's 12 sellers 12 turns to B's one, and B waited behind A's whole backlog).
 * - With TREASURY_LEDGER_MAX_PENDING_PER_ACCOUNT=60, A's next report is refused whole (429 `ledger_pending_limit`,
 *   scope `account`) although its seller is far within its own cap; B's report passes. Proving a pay-to reopens
 *   the seller's rows rejected for an unproven address only as far as the account's cap leaves room too.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { PgLedgerVerificationStore } from '../../../src/api/sellers/store/pg-ledger-verification-store.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { provePayTo } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const NETWORK = 'eip155:84532';
const A_SELLERS = 12;
const ROWS_PER_A_SELLER = 5;
const ACCOUNT_CAP = A_SELLERS * ROWS_PER_A_SELLER;

interface Seller {
  seller_id: string;
  pat: string;
}

describe('one account cannot multiply its verifier share or pending rows by its sellers (HTTP, PostgreSQL)', function () {
  this.timeout(180_000);
  const t = useTestTreasury({
    extraEnv: {
      // Never reached: the claim is all this test runs; an RPC endpoint makes reported rows due at once.
      TREASURY_RPC_URLS: JSON.stringify({ [NETWORK]: 'http://127.0.0.1:9' }),
      TREASURY_LEDGER_VERIFY_INTERVAL_MS: '0',
      TREASURY_LEDGER_MAX_PENDING_PER_SELLER: '20',
      TREASURY_LEDGER_MAX_PENDING_PER_ACCOUNT: String(ACCOUNT_CAP),
    },
  });
  const fakeHash = () => `0x${randomBytes(32).toString('hex')}`;
  const row = () => ({
    tx_hash: fakeHash(),
    payer: privateKeyToAccount(generatePrivateKey()).address,
    amount: '10000',
    network: NETWORK,
  });
  const report = (seller: Seller, n: number) =>
    t.request('POST', '/v1/ledger/batch', { token: seller.pat, body: { rows: Array.from({ length: n }, row) } });
  const sellersOf = async (count: number, prefix: string): Promise<{ session: string; sellers: Seller[] }> => {
    const { session } = await signInWithNewKey(t);
    const sellers: Seller[] = [];
    for (let i = 0; i < count; i++) {
      const created = await t.request('POST', '/v1/sellers', { token: session, body: { name: `${prefix} ${i}` } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      await provePayTo(t, session, created.body.seller_id, privateKeyToAccount(generatePrivateKey()));
      sellers.push(created.body);
    }
    return { session, sellers };
  };
  let a: Seller[];
  let aSession: string;
  let b: Seller;

  before(async () => {
    ({ session: aSession, sellers: a } = await sellersOf(A_SELLERS, 'Many'));
    [b] = (await sellersOf(1, 'Single')).sellers as [Seller];
    for (const seller of a) {
      const res = await report(seller, ROWS_PER_A_SELLER);
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
    const res = await report(b, 3);
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });

  it("serves accounts in turns: the one-seller account's rows are in the first batch", async () => {
    const store = new PgLedgerVerificationStore(t.db.knex);
    const claim = () => {
      const now = new Date(Date.now() + 1_000);
      return store.claimDue({ now, leaseUntil: new Date(now.getTime() + 600_000), batch: 10, sellerShare: 5 });
    };
    const claimedOfB: string[] = [];
    let batches = 0;
    let first: Awaited<ReturnType<typeof claim>> | undefined;
    while (claimedOfB.length < 3 && batches < 20) {
      const batch = await claim();
      first ??= batch;
      batches++;
      claimedOfB.push(...batch.rows.filter((r) => r.seller_id === b.seller_id).map((r) => r.id));
    }
    assert.equal(claimedOfB.length, 3);
    assert.equal(batches, 1, `account B's rows waited ${batches} batches behind account A's sellers`);
    const ofA = first!.rows.filter((r) => r.seller_id !== b.seller_id);
    assert.equal(ofA.length, 5, "one batch takes at most the share of A's backlog");
    assert.equal(new Set(ofA.map((r) => r.seller_id)).size, 5, "A's share goes round its sellers");
    assert.equal(first!.moreDue, true, 'A used its whole share: more is due');
  });

  it("refuses a report past the account's pending cap, whatever its seller's own room; other accounts pass", async () => {
    const refused = await report(a[0]!, 1);
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.equal(refused.body.error_code, 'ledger_pending_limit');
    assert.deepEqual(
      [refused.body.scope, refused.body.max_pending_rows, refused.body.pending_rows],
      ['account', ACCOUNT_CAP, ACCOUNT_CAP],
    );
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    const single = await t.request('POST', '/v1/ledger', { token: a[1]!.pat, body: row() });
    assert.deepEqual([single.status, single.body.error_code], [429, 'ledger_pending_limit']);
    const other = await report(b, 1);
    assert.equal(other.status, 200, "another account's report is not affected");
  });

  it("proving a pay-to reopens rejected rows only as far as the account's cap leaves room", async () => {
    const rows = (seller: Seller) => t.db.knex('ledger_entries').where({ seller_id: seller.seller_id });
    const count = async (seller: Seller, status: string) =>
      Number((await rows(seller).where({ status }).count({ n: '*' }))[0]!.n);
    // TEST FIXTURE: the verdict the verifier writes for a real transfer to an address the seller has not proved.
    await rows(a[0]!).update({ status: 'rejected', reason: 'recipient_mismatch' });
    const refilled = await report(a[1]!, ROWS_PER_A_SELLER - 2); // the account is 2 rows short of its cap
    assert.equal(refilled.status, 200, JSON.stringify(refilled.body));
    await provePayTo(t, aSession, a[0]!.seller_id, privateKeyToAccount(generatePrivateKey()));
    assert.deepEqual(
      [await count(a[0]!, 'pending'), await count(a[0]!, 'rejected')],
      [2, ROWS_PER_A_SELLER - 2],
      'reopened up to the account cap, though the seller alone had room for all',
    );
  });
});
