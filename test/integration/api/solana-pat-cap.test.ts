/**
 * An agent PAT's daily cap is in USD across both chains (docs/api.md, "PAT daily caps"): payments from the
 * agent's Base wallet and its Solana wallet count against the one cap, and the payment that would cross it is
 * refused on either chain with nothing recorded. Real API, SoftHSM signer (secp256k1 and Ed25519 keys), the
 * offline Solana chain for the Solana message's blockhash.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSigner } from '@solana/kit';
import { pino } from 'pino';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';

describe('an agent PAT daily cap across Base and Solana (HTTP, SoftHSM, offline Solana chain)', function () {
  this.timeout(180_000);
  let solana: LocalSolana;
  let t: TestTreasury;

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    t = await startTestTreasury({
      extraEnv: { TREASURY_SOLANA_RPC_URL: solana.rpcUrl, TREASURY_RPC_TIMEOUT_MS: '20000' },
    });
  });
  after(async () => {
    await t?.stop();
    await solana?.stop();
  });

  it('counts both chains against one cap in USD and refuses the crossing payment on either', async () => {
    const { session } = await signInWithNewKey(t);
    const treasury = (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'treasury' } })).body
      .pat as string;
    const agent = (
      await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'agent', daily_cap_usd: '0.025' } })
    ).body.pat as string;
    const base = (await t.request('POST', '/v1/wallets', { token: treasury, body: { label: 'base' } })).body;
    const sol = (await t.request('POST', '/v1/wallets', { token: treasury, body: { chain: 'solana-devnet' } })).body;
    assert.equal(sol.network, DEVNET);
    const payTo = (await generateKeyPairSigner()).address;
    const onSolana = {
      scheme: 'exact',
      network: DEVNET,
      asset: solana.mint,
      amount: '10000',
      payTo,
      maxTimeoutSeconds: 60,
      extra: { feePayer: solana.feePayer },
    };
    const pay = (walletId: string, requirements: unknown) =>
      t.request('POST', `/v1/wallets/${walletId}/pay`, { token: agent, body: { payment_requirements: requirements } });

    assert.equal((await pay(base.id, paymentRequirements({ amount: '10000', maxTimeoutSeconds: 300 }))).status, 200);
    assert.equal((await pay(sol.id, onSolana)).status, 200, 'a cent on Solana fits: 0.02 of 0.025');
    const overOnSolana = await pay(sol.id, onSolana);
    const overOnBase = await pay(base.id, paymentRequirements({ amount: '10000', maxTimeoutSeconds: 300 }));
    for (const refused of [overOnSolana, overOnBase]) {
      assert.equal(refused.status, 429, JSON.stringify(refused.body));
      assert.equal(refused.body.recovery?.kind, 'raise_pat_cap', JSON.stringify(refused.body));
    }
    const rows = await t.db.knex('authorizations').whereIn('wallet_id', [base.id, sol.id]);
    assert.equal(rows.length, 2, 'the refused payments recorded nothing');
  });
});
