/**
 * The signer store's per-day rollups (`signer_spend_days`, migration 0005 of signer/owner-policy/signer-store-schema.ts):
 * a signed wallet's windows are read from them, and the triggers on `signer_spends` keep them equal to the spends
 * per UTC day whatever statement inserts or deletes a spend — so a spend made earlier in the month counts in the
 * monthly window, and one taken back no longer does.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { policyTypedData } from '../../../policy/signed-policy.js';
import { policyWindows } from '../../../policy/policy-windows.js';
import { SignerError } from '../../../signer/protocol/signer-client.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { createSignerDatabase, type SignerDatabase } from '../../support/test-database.js';
import { ownerAuthority, PAYEE, walletOps } from './signer-test-helpers.js';

const usd = (dollars: number) => String(Math.round(dollars * 1_000_000));
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'signed',
    (err: SignerError) => err.code,
  );

describe("the signer store's per-day rollups of spends", function () {
  this.timeout(120_000);
  let store: SignerDatabase;
  let signer: TestSigner;
  let dir: string;
  let db: pg.Client;
  const owner = privateKeyToAccount(generatePrivateKey());

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-spend-days-'));
    store = await createSignerDatabase();
    signer = await startTestSigner({ dir, policyStore: store });
    db = new pg.Client({ connectionString: store.connectionString });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    await signer?.stop();
    await store?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Each UTC day's rollup of the wallet next to the sum of its spends that day. */
  async function rollupsAgainstSpends(address: string) {
    const { rows } = await db.query<{ day: string; rollup: string | null; spends: string | null }>(
      `SELECT coalesce(d.day, s.day)::text AS day, d.amount::text AS rollup, s.amount::text AS spends
         FROM (SELECT day, amount FROM signer_spend_days WHERE address = $1) d
         FULL JOIN (SELECT (signed_at AT TIME ZONE 'UTC')::date AS day, sum(amount) AS amount
                      FROM signer_spends WHERE address = $1 GROUP BY 1) s ON s.day = d.day`,
      [address.toLowerCase()],
    );
    return rows;
  }

  it('counts a spend from earlier in the month in the monthly window, and no longer once it is taken back', async () => {
    const made = await signer.client.call('create_account_key', { authority: await ownerAuthority(owner) });
    const ops = walletOps(signer, made.account_key_ref);
    const w = await ops.wallet();
    const issuedAt = Math.floor(Date.now() / 1000);
    const policy = { monthly_cap_usd: '1' } as never;
    await signer.client.call('set_wallet_policy', {
      address: w.address,
      policy,
      version: 1,
      issued_at: issuedAt,
      signature: await owner.signTypedData(policyTypedData({ wallet: w.address, policy, version: 1, issuedAt })),
    });
    // A spend at the month's first instant, as any statement of the store would record it.
    const ref = randomBytes(16).toString('hex');
    await db.query('INSERT INTO signer_spends (ref, address, amount, payee, signed_at) VALUES ($1, $2, $3, $4, $5)', [
      ref,
      w.address.toLowerCase(),
      usd(0.7),
      PAYEE.toLowerCase(),
      policyWindows(new Date()).monthStart,
    ]);
    assert.equal(await outcome(ops.sign(w, usd(0.4))), 'policy_denied', '0.70 earlier this month + 0.40 > 1.00');
    assert.equal(await outcome(ops.sign(w, usd(0.2))), 'signed');
    for (const r of await rollupsAgainstSpends(w.address)) assert.equal(r.rollup, r.spends, `day ${r.day}`);
    await db.query('DELETE FROM signer_spends WHERE ref = $1', [ref]);
    for (const r of await rollupsAgainstSpends(w.address)) assert.equal(BigInt(r.rollup ?? 0), BigInt(r.spends ?? 0));
    assert.equal(await outcome(ops.sign(w, usd(0.7))), 'signed', 'the spend taken back no longer counts');
    assert.equal(await outcome(ops.sign(w, usd(0.2))), 'policy_denied');
  });
});
