/**
 * A Solana payment's message as the API builds it (src/api/pay/solana/build-exact-message.ts), on the offline
 * chain's RPC seen through a loopback relay that counts what is asked of it: the message is byte for byte the one
 * the official client builds for the same payment on the same blockhash (with the seller's memo; without one, all
 * but the memo's random bytes); the mint is read once and a blockhash once per reuse window (payments asking
 * during a read share it), where the official client read the mint once per wallet; a blockhash is reused for
 * less than its age limit; a failed read of either is not kept; with no reuse every payment reads its own
 * blockhash.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { pino } from 'pino';
import {
  generateKeyPairSigner,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Address,
} from '@solana/kit';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { ExactMessageBuilder, type SolanaExactRequest } from '../../../src/api/pay/solana/build-exact-message.js';
import { RecentBlockhash, type BlockhashSource } from '../../../src/api/pay/solana/recent-blockhash.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { LoopbackServers } from '../../support/loopback-servers.js';

/**
 * A JSON-RPC relay to `upstream` that counts each method asked, and answers 503 to the next `failNext` requests
 * asking `failMethod`.
 */
async function countingRelay(servers: LoopbackServers, upstream: string) {
  const asked = new Map<string, number>();
  const relay = { url: '', asked, failNext: 0, failMethod: 'getLatestBlockhash' };
  relay.url = await servers.listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const calls = ([] as Array<{ method: string }>).concat(JSON.parse(body) as { method: string });
      for (const { method } of calls) asked.set(method, (asked.get(method) ?? 0) + 1);
      if (relay.failNext > 0 && calls.some(({ method }) => method === relay.failMethod)) {
        relay.failNext--;
        res.writeHead(503).end();
        return;
      }
      fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        .then(async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()))
        .catch(() => res.writeHead(502).end());
    });
  });
  return relay;
}

/** A builder on `url` reusing a blockhash `maxAgeMs`, with the source of each payment's blockhash as told. */
function countedBuilder(url: string, maxAgeMs: number) {
  const sources: BlockhashSource[] = [];
  const builder = new ExactMessageBuilder({
    url,
    timeoutMs: 5_000,
    blockhashMaxAgeMs: maxAgeMs,
    countBlockhash: (source) => sources.push(source),
  });
  return { builder, sources };
}

describe("Solana payment messages: the official client's, its mint and token accounts kept, on a reused blockhash", function () {
  this.timeout(60_000);
  let solana: LocalSolana;
  const servers = new LoopbackServers();
  let wallets: Address[];
  let payTo: Address;

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    wallets = await Promise.all([0, 1].map(async () => (await generateKeyPairSigner()).address));
    payTo = (await generateKeyPairSigner()).address;
  });
  after(async () => {
    await servers.closeAll();
    await solana?.stop();
  });

  const request = (memo?: string): SolanaExactRequest => ({
    network: solana.network,
    asset: solana.mint,
    amount: '1000',
    payTo,
    maxTimeoutSeconds: 60,
    feePayer: solana.feePayer,
    memo,
  });
  const blockhashOf = (messageBase64: string) =>
    getCompiledTransactionMessageDecoder().decode(getBase64Encoder().encode(messageBase64)).lifetimeToken;

  /** The official client's message for `wallet`'s payment `r` with `extra` (the blockhash given), as bytes. */
  async function officialMessage(wallet: Address, r: SolanaExactRequest, extra: Record<string, unknown>) {
    const official = await new ExactSvmScheme(
      { address: wallet, signTransactions: (txs) => Promise.resolve(txs.map(() => ({}))) },
      { rpcUrl: solana.rpcUrl },
    ).createPaymentPayload(2, {
      scheme: 'exact',
      ...r,
      memo: undefined,
      extra: { feePayer: r.feePayer, ...extra },
    } as never);
    return new Uint8Array(
      getTransactionDecoder().decode(getBase64Encoder().encode(official.payload['transaction'] as string)).messageBytes,
    );
  }
  const decodedMessage = (bytes: Uint8Array) => getCompiledTransactionMessageDecoder().decode(bytes);

  it('builds, byte for byte, what the official client builds for the same payment on the same blockhash', async () => {
    const builder = new ExactMessageBuilder({ url: solana.rpcUrl, timeoutMs: 5_000, blockhashMaxAgeMs: 60_000 });
    for (const [wallet, amount] of [
      [wallets[0]!, '1000'],
      [wallets[1]!, '123456789'],
      [wallets[0]!, '1'],
    ] as const) {
      const r = { ...request('order-7'), amount };
      const built = await builder.build(wallet, r);
      const blockhash = blockhashOf(built.message);
      assert.equal(blockhash, solana.chain.latestBlockhash().blockhash, "the chain's latest blockhash");
      const official = await officialMessage(wallet, r, { memo: 'order-7', recentBlockhash: blockhash });
      assert.equal(built.message, Buffer.from(official).toString('base64'));
      assert.equal(built.messageHash, `0x${createHashHex(official)}`);
    }
  });

  it("without a seller's memo (or an empty one): the official client's message but for the memo, 16 random bytes as hex each time", async () => {
    const builder = new ExactMessageBuilder({ url: solana.rpcUrl, timeoutMs: 5_000, blockhashMaxAgeMs: 60_000 });
    // An empty memo is no memo, as the official client reads it.
    const built = [await builder.build(wallets[1]!, request()), await builder.build(wallets[1]!, request(''))];
    const ours = built.map((b) => decodedMessage(new Uint8Array(getBase64Encoder().encode(b.message))));
    const official = decodedMessage(
      await officialMessage(wallets[1]!, request(), { recentBlockhash: blockhashOf(built[0]!.message) }),
    );
    const memos = ours.map((m) => Buffer.from(m.instructions.at(-1)!.data!).toString('utf8'));
    for (const memo of memos) assert.match(memo, /^[0-9a-f]{32}$/);
    assert.notEqual(memos[0], memos[1], 'a memo of its own for each payment');
    const withoutMemo = (m: typeof official) => ({ ...m, instructions: m.instructions.slice(0, -1) });
    assert.equal(official.instructions.length, 4, 'limit, price, transfer, memo');
    for (const m of ours) {
      assert.deepEqual(withoutMemo(m), withoutMemo(official));
      assert.deepEqual(
        { ...m.instructions.at(-1), data: undefined },
        { ...official.instructions.at(-1), data: undefined },
      );
    }
  });

  it('reads the mint once and a blockhash once per window, shared by payments asking meanwhile', async () => {
    const relay = await countingRelay(servers, solana.rpcUrl);
    const { builder, sources } = countedBuilder(relay.url, 60_000);
    const first = await Promise.all([0, 1, 2].map(() => builder.build(wallets[0]!, request())));
    const later = [await builder.build(wallets[0]!, request()), await builder.build(wallets[1]!, request())];
    const all = [...first, ...later];
    assert.equal(new Set(all.map((m) => m.messageHash)).size, all.length, 'each payment its own message (memo)');
    assert.equal(new Set(all.map((m) => blockhashOf(m.message))).size, 1, 'one blockhash for all');
    assert.equal(relay.asked.get('getLatestBlockhash'), 1);
    // The mint: one read (the first three payments at once share it), for every wallet, never again.
    assert.equal(relay.asked.get('getAccountInfo'), 1);
    await builder.build(wallets[0]!, request());
    await builder.build(wallets[1]!, request());
    assert.equal(relay.asked.get('getAccountInfo'), 1, 'no mint read again');
    assert.equal(relay.asked.get('getLatestBlockhash'), 1);
    assert.deepEqual(
      [...sources].sort(),
      ['read', 'reused', 'reused', 'reused', 'reused', 'shared', 'shared'],
      'the metric: one read, two payments sharing it, the later four reusing it',
    );
  });

  it('a failed read of the mint is 503 and is not kept: the next payment reads it again', async () => {
    const relay = await countingRelay(servers, solana.rpcUrl);
    const { builder } = countedBuilder(relay.url, 60_000);
    relay.failMethod = 'getAccountInfo';
    relay.failNext = 1;
    await assert.rejects(
      builder.build(wallets[0]!, request()),
      (err: unknown) => err instanceof AppError && err.code === 'chain_unavailable',
    );
    const built = await builder.build(wallets[0]!, request());
    assert.equal(blockhashOf(built.message), solana.chain.latestBlockhash().blockhash);
    assert.equal(relay.asked.get('getAccountInfo'), 2, 'the failed read, then a new one');
    await builder.build(wallets[1]!, request());
    assert.equal(relay.asked.get('getAccountInfo'), 2, 'the second read kept');
  });

  it('reuses a blockhash for less than its age limit, then reads a new one', async () => {
    const sources: BlockhashSource[] = [];
    let now = 1_000_000;
    const recent = new RecentBlockhash({
      url: solana.rpcUrl,
      timeoutMs: 5_000,
      maxAgeMs: 2_000,
      now: () => now,
      count: (source) => sources.push(source),
    });
    const first = await recent.get();
    now += 1_999;
    assert.deepEqual(await recent.get(), first);
    now += 1;
    await recent.get();
    assert.deepEqual(sources, ['read', 'reused', 'read']);
  });

  it('without reuse every payment reads its own blockhash; a failed read is 503 and is not kept', async () => {
    const relay = await countingRelay(servers, solana.rpcUrl);
    const builder = new ExactMessageBuilder({ url: relay.url, timeoutMs: 5_000, blockhashMaxAgeMs: 0 });
    for (let i = 0; i < 3; i++) await builder.build(wallets[0]!, request());
    assert.equal(relay.asked.get('getLatestBlockhash'), 3);

    const { builder: reusing, sources } = countedBuilder(relay.url, 60_000);
    relay.failNext = 1;
    await assert.rejects(
      reusing.build(wallets[1]!, request()),
      (err: unknown) => err instanceof AppError && err.code === 'chain_unavailable',
    );
    const built = await reusing.build(wallets[1]!, request());
    assert.equal(blockhashOf(built.message), solana.chain.latestBlockhash().blockhash);
    assert.equal(relay.asked.get('getLatestBlockhash'), 5, 'the failed read, then a new one');
    assert.deepEqual(sources, ['failed', 'read']);
  });
});

function createHashHex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
