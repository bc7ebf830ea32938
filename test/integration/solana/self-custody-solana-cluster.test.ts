/**
 * A self-custody Solana buyer (`createX402Buyer({ solanaSigner, solanaRpcUrl })`, the official `@x402/svm`
 * client scheme) pays only on the cluster its RPC serves, in a token it knows — against the offline chain
 * (ops/solana/local-solana.ts: devnet's genesis hash, so `solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1`) and a
 * seller that co-signs as fee payer and lands whatever it is sent there. A Solana transaction names no
 * cluster, so an entry labelled with another network would land on the buyer's own chain:
 * - an entry labelled Solana testnet (a network the SDK knows no USDC for) in an 8-decimal mint is not a
 *   candidate without `assets` (src/sdk/buyer-assets.ts): `NoCompatibleAcceptError`, nothing sent or moved;
 * - with `assets` naming that mint, and without `assets` for an entry labelled mainnet in mainnet's USDC mint
 *   (planted on the local chain), the label is not the RPC's cluster: `SolanaClusterMismatchError` naming both
 *   networks, nothing sent or moved (src/sdk/local-solana-payer.ts);
 * - an entry on another cluster followed by one on the RPC's is skipped for it: the devnet USDC is paid, and the
 *   RPC's genesis hash is read once for several payments;
 * - a blockhash the seller puts in `extra.recentBlockhash` is not used: the transaction carries the RPC's;
 * - an RPC that does not say which cluster it serves: `SolanaRpcUnreachableError` naming its host only.
 */
import assert from 'node:assert/strict';
import {
  createSolanaRpc,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  getTransactionEncoder,
  signBytes,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { pino } from 'pino';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import {
  associatedTokenAddress,
  encodeMint,
  encodeTokenAccount,
  TOKEN_PROGRAM,
} from '../../../ops/solana/spl-token-layouts.js';
import { createX402Buyer, NoCompatibleAcceptError } from '../../../src/sdk/index.js';
import { SolanaClusterMismatchError, SolanaRpcUnreachableError } from '../../../src/sdk/purchase-errors.js';
import { decodePaymentPayload, encodePaymentRequired } from '../../../src/x402/header-codec.js';
import type { PaymentRequirements } from '../../../src/x402/wire-schemas.js';
import { scriptedServer, type ScriptedServer } from '../../unit/sdk/scripted-http.js';

const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const TESTNET = 'solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z';
const MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
const MAINNET_USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' as Address;

describe('a self-custody Solana buyer pays only on the cluster its RPC serves, in a token it knows', function () {
  this.timeout(120_000);
  let solana: LocalSolana;
  let shop: ScriptedServer;
  let feePayer: KeyPairSigner;
  let payTo: Address;
  let btc: Address;
  /** What the shop offers; it co-signs and lands on the local chain whatever it is paid with. */
  let accepts: PaymentRequirements[];
  const landed: string[] = [];

  /** Writes a token-program account (a mint or a token account) on the local chain. */
  const write = (at: Address, data: Uint8Array) =>
    solana.chain.svm.setAccount({
      address: at,
      data,
      executable: false,
      lamports: solana.chain.svm.minimumBalanceForRentExemption(BigInt(data.length)),
      programAddress: TOKEN_PROGRAM,
      space: BigInt(data.length),
    } as never);
  const holding = async (owner: Address, mint: Address, amount: bigint) =>
    write(await associatedTokenAddress(owner, mint), encodeTokenAccount({ mint, owner, amount }));
  const balance = async (owner: Address, mint: Address) => {
    const ata = await associatedTokenAddress(owner, mint);
    return BigInt((await createSolanaRpc(solana.rpcUrl).getTokenAccountBalance(ata).send()).value.amount);
  };
  const entry = (network: string, asset: Address, amount: string, extra: Record<string, unknown> = {}) =>
    ({
      scheme: 'exact',
      network,
      asset,
      amount,
      payTo,
      maxTimeoutSeconds: 60,
      extra: { feePayer: feePayer.address, ...extra },
    }) as PaymentRequirements;
  const paymentHeaders = () => shop.requests.filter((r) => typeof r.headers['payment-signature'] === 'string');
  /** A buyer key holding 1 BTC (8 decimals), 1 "mainnet USDC" and 1 devnet USDC on the local chain. */
  const fundedBuyer = async () => {
    const key = await generateKeyPairSigner();
    await holding(key.address, btc, 100_000_000n);
    await holding(key.address, MAINNET_USDC, 1_000_000n);
    await solana.faucet.fundUsdc(key.address, 1_000_000n);
    return key;
  };

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    feePayer = await generateKeyPairSigner();
    solana.faucet.fundSol(feePayer.address, 1_000_000_000n);
    payTo = (await generateKeyPairSigner()).address;
    btc = (await generateKeyPairSigner()).address;
    write(btc, encodeMint({ mintAuthority: undefined, supply: 1_000_000_000n, decimals: 8 }));
    // Mainnet's USDC mint, planted on the local (devnet) chain: what a buyer's chain would hold under that name.
    write(MAINNET_USDC, encodeMint({ mintAuthority: undefined, supply: 1_000_000_000n, decimals: 6 }));
    for (const mint of [btc, MAINNET_USDC]) await holding(payTo, mint, 0n);
    await solana.faucet.fundUsdc(payTo, 0n);
    const rpc = createSolanaRpc(solana.rpcUrl);
    shop = await scriptedServer(async (req) => {
      const header = req.headers['payment-signature'];
      if (typeof header !== 'string') {
        const challenge = encodePaymentRequired({ x402Version: 2, resource: { url: `${shop.url}/item` }, accepts });
        return { status: 402, headers: { 'payment-required': challenge }, body: {} };
      }
      const payload = decodePaymentPayload(header) as { payload: { transaction: string } };
      const tx = getTransactionDecoder().decode(getBase64Encoder().encode(payload.payload.transaction));
      const signature = await signBytes(feePayer.keyPair.privateKey, Uint8Array.from(tx.messageBytes));
      const signed = { ...tx, signatures: { ...tx.signatures, [feePayer.address]: signature } };
      const wire = getBase64Decoder().decode(getTransactionEncoder().encode(signed as never));
      try {
        landed.push(await rpc.sendTransaction(wire as never, { encoding: 'base64' }).send());
      } catch (err) {
        return { status: 500, body: { error: err instanceof Error ? err.message.slice(0, 200) : 'not landed' } };
      }
      return { status: 200, body: { ok: true } };
    });
  });
  beforeEach(() => {
    shop.requests.length = 0;
    landed.length = 0;
  });
  after(async () => {
    await shop?.close();
    await solana?.stop();
  });

  it('without assets, an entry labelled testnet in an 8-decimal mint is not a candidate: nothing sent or moved', async () => {
    const key = await fundedBuyer();
    accepts = [entry(TESTNET, btc, '50000')]; // 0.0005 BTC, which the budget would read as $0.05
    const buyer = createX402Buyer({ solanaSigner: key, solanaRpcUrl: solana.rpcUrl, maxPriceUsd: '0.05' });
    await assert.rejects(
      buyer.request(`${shop.url}/item`),
      (err: unknown) => err instanceof NoCompatibleAcceptError && err.message.includes('another token'),
    );
    assert.deepEqual([paymentHeaders().length, landed.length], [0, 0], 'nothing signed for the seller, nothing landed');
    assert.equal(await balance(key.address, btc), 100_000_000n);
  });

  for (const [what, network, mint, amount, assets] of [
    ['labelled testnet, its mint named by assets', TESTNET, 'btc', '50000', true],
    ['labelled mainnet in mainnet USDC, no assets', MAINNET, MAINNET_USDC, '10000', false],
  ] as const) {
    it(`an entry ${what}, on a devnet RPC: SolanaClusterMismatchError, nothing sent or moved`, async () => {
      const key = await fundedBuyer();
      const asset = mint === 'btc' ? btc : mint;
      accepts = [entry(network, asset, amount)];
      const buyer = createX402Buyer({
        solanaSigner: key,
        solanaRpcUrl: solana.rpcUrl,
        maxPriceUsd: '0.05',
        ...(assets ? { assets: { [network]: asset } } : {}),
      });
      await assert.rejects(
        buyer.request(`${shop.url}/item`),
        (err: unknown) =>
          err instanceof SolanaClusterMismatchError &&
          err.code === 'solana_cluster_mismatch' &&
          err.network === network &&
          err.rpcNetwork === DEVNET &&
          JSON.stringify(err.details) === JSON.stringify({ network, rpc_network: DEVNET }),
      );
      assert.deepEqual(
        [paymentHeaders().length, landed.length],
        [0, 0],
        'nothing signed for the seller, nothing landed',
      );
      assert.equal(await balance(key.address, asset), asset === btc ? 100_000_000n : 1_000_000n);
    });
  }

  it("an entry on another cluster is skipped for the seller's next one on the RPC's; its genesis hash is read once", async () => {
    const key = await fundedBuyer();
    let genesisReads = 0;
    const rpcProxy = await scriptedServer(async (req) => {
      if (req.body.includes('"getGenesisHash"')) genesisReads++;
      const res = await fetch(solana.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: req.body,
      });
      return { status: res.status, body: await res.text() };
    });
    try {
      accepts = [entry(MAINNET, MAINNET_USDC, '10000'), entry(DEVNET, solana.mint, '10000')];
      const buyer = createX402Buyer({ solanaSigner: key, solanaRpcUrl: rpcProxy.url, maxPriceUsd: '0.05' });
      for (const n of [1, 2]) {
        const result = await buyer.request(`${shop.url}/item`);
        assert.deepEqual([result.status, result.paid, result.network], [200, true, DEVNET], result.body);
        assert.equal(landed.length, n);
      }
      assert.equal(await balance(key.address, solana.mint), 1_000_000n - 20_000n, 'devnet USDC paid twice');
      assert.equal(await balance(key.address, MAINNET_USDC), 1_000_000n, 'the mainnet-labelled entry never paid');
      assert.equal(genesisReads, 1);
    } finally {
      await rpcProxy.close();
    }
  });

  it("a seller's extra.recentBlockhash is not used: the transaction carries the RPC's blockhash and lands", async () => {
    const key = await fundedBuyer();
    const sellers = getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)));
    accepts = [entry(DEVNET, solana.mint, '10000', { recentBlockhash: sellers, lastValidBlockHeight: '1' })];
    const buyer = createX402Buyer({ solanaSigner: key, solanaRpcUrl: solana.rpcUrl, maxPriceUsd: '0.05' });
    const result = await buyer.request(`${shop.url}/item`);
    const payload = decodePaymentPayload(paymentHeaders()[0]!.headers['payment-signature'] as string) as {
      payload: { transaction: string };
    };
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(payload.payload.transaction));
    const { lifetimeToken } = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    assert.notEqual(lifetimeToken, sellers, "not the seller's blockhash: the RPC's");
    assert.deepEqual([result.status, result.paid, landed.length], [200, true, 1], result.body);
  });

  it('an RPC that does not say which cluster it serves: SolanaRpcUnreachableError naming its host only, nothing sent', async () => {
    const key = await fundedBuyer();
    const broken = await scriptedServer(() => ({ status: 503, body: { error: 'down' } }));
    try {
      accepts = [entry(DEVNET, solana.mint, '10000')];
      const rpcUrl = `${broken.url}/v2/secret-api-key?apikey=also-secret`;
      const buyer = createX402Buyer({ solanaSigner: key, solanaRpcUrl: rpcUrl, maxPriceUsd: '0.05' });
      await assert.rejects(
        buyer.request(`${shop.url}/item`),
        (err: unknown) =>
          err instanceof SolanaRpcUnreachableError &&
          err.code === 'solana_rpc_unreachable' &&
          err.rpc === broken.url &&
          !err.message.includes('secret'),
      );
      assert.equal(paymentHeaders().length, 0);
      assert.equal(await balance(key.address, solana.mint), 1_000_000n);
    } finally {
      await broken.close();
    }
  });
});
