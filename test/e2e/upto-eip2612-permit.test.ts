/**
 * `upto` with no Permit2 approval, end to end with nothing faked: anvil with the test USDC (EIP-2612
 * permit), Permit2 and the upto proxy at their canonical addresses, the local facilitator built on the
 * official packages, Treasury (PostgreSQL + SoftHSM) holding the buyer's key, and an official @x402/express
 * upto seller whose 402 declares `eip2612GasSponsoring` (declareEip2612GasSponsoringExtension()).
 * - A wallet the faucet never approved for Permit2 pays its first `upto` request: the buyer SDK asks Treasury
 *   with `gas_sponsoring: "eip2612"`, Treasury signs the payment and an EIP-2612 permit to Permit2 for the
 *   signed maximum (audited as `payment.permit_signed`), the SDK attaches it as
 *   `extensions.eip2612GasSponsoring.info`, and the official facilitator settles through `settleWithPermit`:
 *   balances move by exactly the settled amount, and Permit2's allowance is now in place.
 * - The same seller without the extension: 412 `permit2_allowance_required` naming the one-time approval.
 */
import assert from 'node:assert/strict';
import { erc20Abi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { UptoEvmScheme as UptoEvmServerScheme } from '@x402/evm/upto/server';
import { declareEip2612GasSponsoringExtension } from '@x402/extensions';
import { setSettlementOverrides as setExpressOverrides } from '@x402/express';
import { createX402Buyer, Permit2AllowanceRequiredError } from 'treasury/sdk';
import { LoopbackServers } from '../support/loopback-servers.js';
import { startTestTreasury, type TestTreasury } from '../support/api-harness.js';
import { fundFromFaucet, readTokenBalance, startTestChain } from '../support/chain-harness.js';
import {
  agentBuyer,
  expressSeller,
  newAgentWallet,
  readBalances,
  type AgentBuyer,
} from '../support/x402-e2e-fixture.js';
import { verifyAuditChain } from '../../src/api/audit/audit-ledger.js';

const USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const PERMIT2 = '0x000000000022D473030F116dDEE9F6B43aC78BA3';
const MAX = 100_000n; // $0.10, the signed maximum

describe('x402 upto with an EIP-2612 permit (eip2612GasSponsoring): no Permit2 approval, official facilitator', function () {
  this.timeout(240_000);
  let chain: Awaited<ReturnType<typeof startTestChain>>;
  let t: TestTreasury;
  let agent: AgentBuyer;
  const servers = new LoopbackServers();
  const payTo = privateKeyToAccount(generatePrivateKey()).address;
  let sellerUrl: string;

  const newWallet = (label: string) => newAgentWallet(t, agent.agentId, agent.pat.pat, label);
  const permit2Allowance = (owner: `0x${string}`) =>
    chain.publicClient.readContract({
      address: USDC,
      abi: erc20Abi,
      functionName: 'allowance',
      args: [owner, PERMIT2],
    });

  before(async () => {
    chain = await startTestChain();
    t = await startTestTreasury({ extraEnv: { TREASURY_RPC_URLS: JSON.stringify({ 'eip155:84532': chain.rpcUrl }) } });
    agent = await agentBuyer(t, { label: 'permit' });

    const price = { asset: USDC, amount: MAX.toString(), extra: { name: 'USDC', version: '2' } };
    const accepts = { scheme: 'upto', network: 'eip155:84532', payTo, price } as const;
    sellerUrl = await expressSeller(
      servers,
      chain.facilitatorUrl,
      [new UptoEvmServerScheme()],
      {
        'GET /sponsored': {
          accepts,
          description: 'metered, gasless Permit2 approval',
          mimeType: 'application/json',
          extensions: { ...declareEip2612GasSponsoringExtension() },
        },
        'GET /plain': { accepts, description: 'metered', mimeType: 'application/json' },
      },
      {
        '/sponsored': (_req, res) => {
          setExpressOverrides(res, { amount: '40%' });
          res.json({ tokens: 400 });
        },
        '/plain': (_req, res) => void res.json({ plain: true }),
      },
    );
  });
  after(async () => {
    await servers.closeAll();
    await t?.stop();
    await chain?.stop();
  });

  it('the facilitator advertises eip2612GasSponsoring in GET /supported', async () => {
    const supported = (await (await fetch(`${chain.facilitatorUrl}/supported`)).json()) as { extensions?: string[] };
    assert.ok(supported.extensions?.includes('eip2612GasSponsoring'), JSON.stringify(supported));
  });

  it("an unapproved wallet's first upto payment settles with a permit; balances move by exactly the settled amount", async () => {
    const w = await newWallet('permit-first-upto');
    await fundFromFaucet(chain, w.address, '1'); // no approve_permit2
    assert.equal(await permit2Allowance(w.address), 0n);
    const [buyerBefore, sellerBefore] = await readBalances(chain, w.address, payTo);

    const buyer = createX402Buyer({ client: agent.client, walletId: w.id, maxPriceUsd: '0.10' });
    const result = await buyer.request(`${sellerUrl}/sponsored`);
    assert.equal(result.status, 200, result.body);
    assert.deepEqual(JSON.parse(result.body), { tokens: 400 });
    assert.equal(result.receipt!.amount_raw, '40000');
    assert.equal(await readTokenBalance(chain, w.address), buyerBefore - 40_000n);
    assert.equal(await readTokenBalance(chain, payTo), sellerBefore + 40_000n);
    // The permit took effect on chain: Permit2 was approved for the maximum, 40,000 of it used.
    assert.equal(await permit2Allowance(w.address), MAX - 40_000n);
    // Settled through settleWithPermit, from the facilitator.
    const tx = await chain.publicClient.getTransaction({ hash: result.receipt!.transaction as `0x${string}` });
    assert.equal(tx.from.toLowerCase(), chain.facilitatorAddress.toLowerCase());

    const payment = result.payment!;
    assert.ok(payment.scheme === 'upto' && payment.eip2612_permit, JSON.stringify(payment));
    const permit = payment.eip2612_permit;
    assert.deepEqual(
      [permit.from, permit.spender, permit.amount, permit.nonce, permit.deadline],
      [w.address, PERMIT2, MAX.toString(), '0', payment.permit2_authorization.deadline],
    );
    assert.equal(result.settlement?.settled_usd, '0.04', result.settlementError);
    // Audited before it left, after the payment's own row; the chain verifies.
    const events = await t.db.knex('audit_events').where({ chain_key: w.id }).orderBy('seq');
    const types = events.map((e) => e.event_type);
    assert.deepEqual(types.slice(types.indexOf('payment.reserved')), [
      'payment.reserved',
      'payment.permit_signed',
      'payment.settled',
    ]);
    const permitEvent = events.find((e) => e.event_type === 'payment.permit_signed');
    const p = typeof permitEvent.payload === 'string' ? JSON.parse(permitEvent.payload) : permitEvent.payload;
    assert.deepEqual([p.authorization_id, p.spender, p.value], [payment.authorization_id, PERMIT2, MAX.toString()]);
    assert.equal((await verifyAuditChain(t.db.knex, w.id)).ok, true);
    // The settlement was reported and verified: the day counts what was charged.
    assert.equal(result.settlement?.settled_usd, '0.04', result.settlementError);
  });

  it('without the extension: 412 permit2_allowance_required naming the one-time approval', async () => {
    const w = await newWallet('permit-plain');
    await fundFromFaucet(chain, w.address, '1');
    const buyer = createX402Buyer({ client: agent.client, walletId: w.id, maxPriceUsd: '0.10' });
    await assert.rejects(buyer.request(`${sellerUrl}/plain`), (err: unknown) => {
      assert.ok(err instanceof Permit2AllowanceRequiredError, String(err));
      const body = err.apiError.body as Record<string, any>;
      assert.equal(body.required_action, 'approve_permit2');
      assert.deepEqual(body.approval, { token: USDC, spender: PERMIT2, min_amount_raw: MAX.toString() });
      assert.deepEqual(body.gas_sponsoring_supported, ['eip2612']);
      return true;
    });
    assert.equal((await t.db.knex('authorizations').where({ wallet_id: w.id })).length, 0);
  });
});
