/**
 * createX402Buyer on Solana, against the offline chain (ops/solana/local-solana.ts) and an official
 * `@x402/express` + `@x402/svm` seller settled by the chain's facilitator (./solana-buyer-fixtures.ts):
 * - a Treasury wallet on Solana (a scripted Treasury whose pay endpoint answers the contract's
 *   reply — `transaction`, the wallet's signature, `solana_transfer` — around a transaction the official
 *   client built for the wallet's key)
 *   pays a 402 offering Base then Solana on Solana, the wallet's network: the seller settles, balances move by
 *   exactly the price, the result names the network and the transaction's base58 signature;
 * - a `network` option naming another network than the wallet's: `NoCompatibleAcceptError` listing what was
 *   offered and what the buyer pays on, Treasury never asked;
 * - a transaction paying another payee, or with another fee payer, is withheld (`SignatureMismatchError`),
 *   the seller never sees it, nothing moves;
 * - a local kit signer (`{ solanaSigner }`) pays the same 402 through the official client scheme.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  createSolanaRpc,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64Decoder,
  getBase64Encoder,
  getTransactionDecoder,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { pino } from 'pino';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import {
  createX402Buyer,
  NoCompatibleAcceptError,
  readSvmExactTransfer,
  SignatureMismatchError,
  TreasuryClient,
} from '../../../src/sdk/index.js';
import type { PaymentRequirements } from '../../../src/x402/wire-schemas.js';
import { scriptedServer, WALLET, WALLET_ID, type ScriptedServer } from './scripted-http.js';
import {
  BASE_SEPOLIA,
  PRICE_UNITS,
  SOLANA_DEVNET,
  startSolanaSeller,
  usdcOf,
  type SolanaSeller,
} from './solana-buyer-fixtures.js';

/** The API's answer for a Solana entry (src/shared/api-responses/pay-responses.ts) around `transaction`. */
function solanaPayReply(transaction: string, asked: PaymentRequirements) {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(transaction));
  const transfer = readSvmExactTransfer(transaction);
  const signature = tx.signatures[transfer.authority as Address]!;
  return {
    scheme: 'exact',
    transaction,
    signature: getBase58Decoder().decode(signature),
    solana_transfer: {
      from: transfer.authority,
      to: asked.payTo,
      amount: transfer.amount,
      fee_payer: transfer.feePayer,
      message: getBase64Decoder().decode(tx.messageBytes),
      message_hash: `0x${createHash('sha256').update(Uint8Array.from(tx.messageBytes)).digest('hex')}`,
      valid_after: '0',
      valid_before: '9999999999',
    },
    authorization_id: 'auth_1',
    decision_id: 'pd_1',
    wallet_id: WALLET_ID,
    network: asked.network,
    asset: asked.asset,
    amount_usd: '0.01',
  };
}

describe('buyer SDK on Solana: a Treasury Solana wallet and a local kit signer pay an official @x402/svm seller', function () {
  this.timeout(120_000);
  let solana: LocalSolana;
  let seller: SolanaSeller;
  let walletKey: KeyPairSigner;
  let treasury: ScriptedServer;
  /** How the scripted Treasury changes the entry before building the transaction (a lying Treasury). */
  let tamper: (r: PaymentRequirements) => PaymentRequirements = (r) => r;
  /** Builds with another key than the wallet's when set (a Treasury answering for another wallet). */
  let otherBuilder: ExactSvmScheme | undefined;

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    seller = await startSolanaSeller(solana);
    walletKey = await generateKeyPairSigner();
    await solana.faucet.fundUsdc(walletKey.address, 1_000_000n);
    const builder = new ExactSvmScheme(walletKey, { rpcUrl: solana.rpcUrl });
    const wallet = { ...WALLET, chain: 'solana-devnet', network: SOLANA_DEVNET, address: walletKey.address };
    treasury = await scriptedServer(async (req) => {
      if (req.method === 'GET' && req.url === `/v1/wallets/${WALLET_ID}`) return { status: 200, body: wallet };
      if (req.method === 'POST' && req.url === `/v1/wallets/${WALLET_ID}/pay`) {
        const asked = JSON.parse(req.body).payment_requirements as PaymentRequirements;
        const { payload } = await (otherBuilder ?? builder).createPaymentPayload(2, tamper(asked) as never);
        return { status: 200, body: solanaPayReply((payload as { transaction: string }).transaction, asked) };
      }
      return { status: 404, body: { error_code: 'not_found', user_message: 'Not found.' } };
    });
  });
  afterEach(() => {
    tamper = (r) => r;
    otherBuilder = undefined;
  });
  after(async () => {
    await treasury?.close();
    await seller?.close();
    await solana?.stop();
  });

  const treasuryBuyer = (extra: Record<string, unknown> = {}) =>
    createX402Buyer({
      client: new TreasuryClient({ apiUrl: treasury.url, token: 'pat_test' }),
      walletId: WALLET_ID,
      maxPriceUsd: '0.05',
      ...extra,
    });
  const payCalls = () => treasury.requests.filter((r) => r.url.endsWith('/pay')).length;

  it('a Treasury Solana wallet pays Base-or-Solana on Solana (its network): settled, balances move by exactly the price', async () => {
    const [buyerBefore, payToBefore] = [await usdcOf(solana, walletKey.address), await usdcOf(solana, seller.payTo)];
    const result = await treasuryBuyer().request(`${seller.url}/both`);
    assert.equal(result.status, 200, result.body);
    assert.deepEqual(JSON.parse(result.body), { paid: 'both' });
    assert.equal(result.paid, true);
    assert.equal(result.network, SOLANA_DEVNET);
    assert.equal(result.requirements?.network, SOLANA_DEVNET);
    assert.equal(result.receipt?.success, true);
    assert.equal(result.receipt?.network, SOLANA_DEVNET);
    assert.match(result.receipt!.transaction, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/, 'a base58 transaction signature');
    assert.equal(result.receipt?.amount_usd, '0.01');
    assert.equal(result.payment && 'transaction' in result.payment, true);
    const status = (
      await createSolanaRpc(solana.rpcUrl)
        .getSignatureStatuses([result.receipt!.transaction as never])
        .send()
    ).value[0];
    assert.equal(status?.err, null, 'the settlement landed');
    assert.equal(await usdcOf(solana, walletKey.address), buyerBefore - PRICE_UNITS);
    assert.equal(await usdcOf(solana, seller.payTo), payToBefore + PRICE_UNITS);
    assert.deepEqual(seller.evmFacilitatorCalls, [], 'the Base entry was not paid');
    const asked = JSON.parse(treasury.requests.findLast((r) => r.url.endsWith('/pay'))!.body);
    assert.equal(asked.payment_requirements.network, SOLANA_DEVNET);
  });

  it("a network option other than the wallet's: NoCompatibleAcceptError listing what was offered, Treasury not asked", async () => {
    const before = payCalls();
    await assert.rejects(
      treasuryBuyer({ network: BASE_SEPOLIA }).request(`${seller.url}/both`),
      (err: unknown) =>
        err instanceof NoCompatibleAcceptError &&
        err.code === 'no_compatible_accept' &&
        err.recovery.offered_networks.join() === [BASE_SEPOLIA, SOLANA_DEVNET].join() &&
        err.recovery.payable_networks.join() === BASE_SEPOLIA &&
        err.message.includes(`exact@${SOLANA_DEVNET}`),
    );
    await assert.rejects(
      treasuryBuyer({ network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' }).request(`${seller.url}/solana`),
      NoCompatibleAcceptError,
    );
    assert.equal(payCalls(), before);
  });

  for (const [what, change, problem] of [
    ['another payee', (r: PaymentRequirements) => ({ ...r, payTo: walletKey.address }), /payee/],
    ['a larger amount', (r: PaymentRequirements) => ({ ...r, amount: '20000' }), /amount/],
    [
      'another fee payer',
      (r: PaymentRequirements) => ({ ...r, extra: { ...r.extra, feePayer: seller.payTo } }),
      /fee payer/,
    ],
  ] as const) {
    it(`a transaction for ${what} is withheld (SignatureMismatchError): the seller never sees it, nothing moves`, async () => {
      tamper = change;
      const [buyerBefore, payToBefore] = [await usdcOf(solana, walletKey.address), await usdcOf(solana, seller.payTo)];
      const paymentHeaders: string[] = [];
      const recording = (input: string, init: RequestInit) => {
        const header = new Headers(init.headers).get('payment-signature');
        if (header) paymentHeaders.push(header);
        return fetch(input, init);
      };
      await assert.rejects(
        treasuryBuyer({ fetch: recording }).request(`${seller.url}/solana`),
        (err: unknown) => err instanceof SignatureMismatchError && problem.test(err.message),
      );
      assert.deepEqual(paymentHeaders, [], 'nothing was sent to the seller');
      assert.equal(await usdcOf(solana, walletKey.address), buyerBefore);
      assert.equal(await usdcOf(solana, seller.payTo), payToBefore);
    });
  }

  it("a transaction by another key than the wallet's is withheld (SignatureMismatchError: payer)", async () => {
    const other = await generateKeyPairSigner();
    await solana.faucet.fundUsdc(other.address, 1_000_000n);
    otherBuilder = new ExactSvmScheme(other, { rpcUrl: solana.rpcUrl });
    await assert.rejects(
      treasuryBuyer().request(`${seller.url}/solana`),
      (err: unknown) => err instanceof SignatureMismatchError && /payer/.test(err.message),
    );
    assert.equal(await usdcOf(solana, other.address), 1_000_000n);
  });

  it('a local kit signer ({ solanaSigner }) pays through the official client scheme; the result names its address', async () => {
    const signer = await generateKeyPairSigner();
    await solana.faucet.fundUsdc(signer.address, 50_000n);
    const payToBefore = await usdcOf(solana, seller.payTo);
    const buyer = createX402Buyer({ solanaSigner: signer, solanaRpcUrl: solana.rpcUrl, maxPriceUsd: '0.01' });
    const result = await buyer.request(`${seller.url}/both`);
    assert.equal(result.status, 200, result.body);
    assert.equal(result.network, SOLANA_DEVNET);
    assert.equal(result.localPayment?.payer, signer.address);
    assert.equal(result.receipt?.payer, signer.address);
    assert.equal(await usdcOf(solana, signer.address), 40_000n);
    assert.equal(await usdcOf(solana, seller.payTo), payToBefore + PRICE_UNITS);
    // Short of the price: the seller's refusal becomes InsufficientFundsError naming the signer's address.
    const poor = await generateKeyPairSigner();
    await solana.faucet.fundUsdc(poor.address, 1n);
    await assert.rejects(
      createX402Buyer({ solanaSigner: poor, solanaRpcUrl: solana.rpcUrl }).request(`${seller.url}/solana`),
      (err: unknown) =>
        err instanceof Error &&
        (err as { code?: string }).code === 'insufficient_funds' &&
        (err as { wallet?: { address?: string } }).wallet?.address === poor.address,
    );
  });
});
