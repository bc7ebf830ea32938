/**
 * The offline Solana chain's JSON-RPC server (ops/solana/solana-rpc-server.ts) over HTTP: it binds 127.0.0.1
 * and refuses any other host; JSON-RPC errors for unknown methods, bad params, bad envelopes and bodies
 * that are not JSON; oversized bodies 413; batches; requestAirdrop lands and advances the slot; encodings
 * the chain cannot answer are refused rather than faked; the faucet creates and credits a USDC ATA.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  AccountRole,
  address,
  appendTransactionMessageInstruction,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  isSolanaError,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { pino } from 'pino';
import { LocalSvm } from '../../../ops/solana/local-svm.js';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { startSolanaRpcServer } from '../../../ops/solana/solana-rpc-server.js';
import { startSvmFacilitator } from '../../../ops/solana/svm-facilitator-server.js';
import { associatedTokenAddress } from '../../../ops/solana/spl-token-layouts.js';

const silent = pino({ level: 'silent' });
const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
) as { any: unknown[]; raw_bodies: string[] };
const METHODS = [
  'getLatestBlockhash', 'getSlot', 'getHealth', 'getVersion', 'getGenesisHash', 'getAccountInfo', 'getBalance',
  'getTokenAccountBalance', 'simulateTransaction', 'sendTransaction', 'getSignatureStatuses', 'getTransaction',
  'requestAirdrop',
]; // prettier-ignore
const SYSTEM_PROGRAM = address('11111111111111111111111111111111');

/** A signed System Program transfer of `lamports` from `from` to `to` on `lifetime`'s blockhash (base64 wire). */
async function transferSol(
  from: KeyPairSigner,
  to: Address,
  lamports: bigint,
  lifetime: Parameters<typeof setTransactionMessageLifetimeUsingBlockhash>[0],
): Promise<string> {
  const data = new Uint8Array(12);
  new DataView(data.buffer).setUint32(0, 2, true); // SystemInstruction::Transfer
  new DataView(data.buffer).setBigUint64(4, lamports, true);
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(from, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) =>
      appendTransactionMessageInstruction(
        {
          programAddress: SYSTEM_PROGRAM,
          accounts: [
            { address: from.address, role: AccountRole.WRITABLE_SIGNER, signer: from },
            { address: to, role: AccountRole.WRITABLE },
          ],
          data,
        },
        m,
      ),
  );
  return getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message));
}

async function rpcCall(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    json: res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text,
  };
}

describe('offline Solana chain: the JSON-RPC server', function () {
  this.timeout(30_000);
  let solana: LocalSolana;

  before(async () => {
    solana = await startLocalSolana({ logger: silent });
  });
  after(async () => solana?.stop());

  it('listens on 127.0.0.1 and refuses any other host, before listening', async () => {
    assert.match(solana.rpcUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(solana.facilitatorUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    for (const host of ['0.0.0.0', '::', 'localhost', '192.168.1.10']) {
      await assert.rejects(startSolanaRpcServer({ svm: new LocalSvm(), host, logger: silent }), /127\.0\.0\.1 only/);
      await assert.rejects(startSvmFacilitator({ rpcUrl: solana.rpcUrl, host, logger: silent }), /127\.0\.0\.1 only/);
    }
  });

  it('answers JSON-RPC errors: unknown method, bad params, bad envelope, not JSON', async () => {
    const unknown = await rpcCall(solana.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'getProgramAccounts', params: [] });
    assert.deepEqual(unknown.json, { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } });
    const proto = await rpcCall(solana.rpcUrl, { jsonrpc: '2.0', id: 2, method: '__proto__' });
    assert.equal(proto.json.error.code, -32601);
    const badAddress = await rpcCall(solana.rpcUrl, {
      jsonrpc: '2.0',
      id: 3,
      method: 'getBalance',
      params: ['0xnope'],
    });
    assert.equal(badAddress.json.error.code, -32602);
    const tooMuch = await rpcCall(solana.rpcUrl, {
      jsonrpc: '2.0',
      id: 4,
      method: 'requestAirdrop',
      params: [solana.feePayer, 10 ** 15],
    });
    assert.equal(tooMuch.json.error.code, -32602);
    const envelope = await rpcCall(solana.rpcUrl, { id: 5, method: 'getSlot' });
    assert.equal(envelope.json.error.code, -32600);
    const notJson = await rpcCall(solana.rpcUrl, '{"jsonrpc":');
    assert.equal(notJson.json.error.code, -32700);
    const json = await rpcCall(solana.rpcUrl, {
      jsonrpc: '2.0',
      id: 6,
      method: 'getTransaction',
      params: ['1'.repeat(64), { encoding: 'jsonParsed' }],
    });
    assert.equal(json.json.error.code, -32602, 'an encoding the chain cannot answer is refused, not faked');
    const oversized = await rpcCall(solana.rpcUrl, {
      jsonrpc: '2.0',
      id: 7,
      method: 'sendTransaction',
      params: [Buffer.alloc(1_233, 1).toString('base64'), { encoding: 'base64' }],
    });
    assert.equal(oversized.json.error.code, -32602);
    assert.match(oversized.json.error.message, /larger than 1232 bytes/);
  });

  it('bounds the body (413) and batches (1..16)', async () => {
    const big = await rpcCall(solana.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'getSlot', pad: 'x'.repeat(70_000) });
    assert.equal(big.status, 413);
    const batch = await rpcCall(solana.rpcUrl, [
      { jsonrpc: '2.0', id: 1, method: 'getHealth' },
      { jsonrpc: '2.0', id: 2, method: 'getVersion' },
    ]);
    assert.deepEqual(
      batch.json.map((one: { id: number }) => one.id),
      [1, 2],
    );
    assert.equal(batch.json[0].result, 'ok');
    const tooMany = Array.from({ length: 17 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'getSlot' }));
    assert.equal((await rpcCall(solana.rpcUrl, tooMany)).json.error.code, -32600);
  });

  it('requestAirdrop lands, is confirmed and advances the slot; u64 values come back as numbers', async () => {
    const rpc = createSolanaRpc(solana.rpcUrl);
    const to = (await generateKeyPairSigner()).address;
    const slotBefore = await rpc.getSlot().send();
    const signature = await rpc.requestAirdrop(to, 2_000_000_000n as never).send();
    const [status] = (await rpc.getSignatureStatuses([signature]).send()).value;
    assert.equal(status?.err, null);
    assert.equal((await rpc.getBalance(to).send()).value, 2_000_000_000n);
    assert.ok((await rpc.getSlot().send()) > slotBefore);
    const raw = await rpcCall(solana.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'getBalance', params: [to] });
    assert.equal(raw.json.result.value, 2_000_000_000);
  });

  it("the faucet creates an owner's USDC ATA and credits it; a token balance reads through getTokenAccountBalance", async () => {
    const rpc = createSolanaRpc(solana.rpcUrl);
    const owner = (await generateKeyPairSigner()).address;
    const ata = await associatedTokenAddress(owner, solana.mint);
    assert.equal((await rpc.getAccountInfo(ata, { encoding: 'base64' }).send()).value, null);
    await solana.faucet.fundUsdc(owner, 0n);
    assert.equal((await rpc.getTokenAccountBalance(ata).send()).value.amount, '0');
    const funded = await solana.faucet.fundUsdc(owner, 2_500_000n);
    assert.deepEqual(funded, { tokenAccount: ata, balance: 2_500_000n });
    const balance = (await rpc.getTokenAccountBalance(ata).send()).value;
    assert.equal(balance.amount, '2500000');
    assert.equal(balance.uiAmountString, '2.5');
    await assert.rejects(solana.faucet.fundUsdc(owner, -1n), RangeError);
    const notToken = await rpcCall(solana.rpcUrl, {
      jsonrpc: '2.0',
      id: 1,
      method: 'getTokenAccountBalance',
      params: [owner],
    });
    assert.equal(notToken.json.error.code, -32602);
  });

  it('a transaction is valid for 150 slots; replayed after its blockhash left the window it is refused, however many landed since', async () => {
    const rpc = createSolanaRpc(solana.rpcUrl);
    const payer = await generateKeyPairSigner();
    const to = (await generateKeyPairSigner()).address;
    solana.faucet.fundSol(payer.address, 10_000_000_000n);
    const { value: lifetime } = await rpc.getLatestBlockhash().send();
    const first = await transferSol(payer, to, 1_000_000n, lifetime);
    const late = await transferSol(payer, to, 2_000_000n, lifetime);
    const before = (await rpc.getBalance(payer.address).send()).value;
    const firstSignature = await rpc.sendTransaction(first as never, { encoding: 'base64' }).send();
    const firstTx = await rpc
      .getTransaction(firstSignature, { encoding: 'base64', maxSupportedTransactionVersion: 0 })
      .send();
    assert.equal(firstTx?.meta?.fee, 5_000n);
    assert.equal((await rpc.getBalance(payer.address).send()).value, before - 1_000_000n - 5_000n);
    for (let slot = 1n; slot <= 148n; slot++) solana.faucet.fundSol(to, slot); // distinct airdrops
    // `late` was signed 149 slots ago: still in the window.
    await rpc.sendTransaction(late as never, { encoding: 'base64' }).send();
    const landed = (await rpc.getBalance(to).send()).value;
    assert.equal(landed, 3_000_000n + (148n * 149n) / 2n);
    // litesvm's own history forgets a signature after some hundreds of transactions; the window does not.
    for (let slot = 1n; slot <= 1_000n; slot++) solana.faucet.fundSol(payer.address, slot);
    for (const replay of [first, late])
      await assert.rejects(
        rpc.sendTransaction(replay as never, { encoding: 'base64', skipPreflight: true }).send(),
        (err) =>
          isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE) &&
          isSolanaError(err.cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND),
      );
    assert.equal((await rpc.getBalance(to).send()).value, landed, 'no replay moved anything');
  });

  it('the hostile-input table, as every param of every method and as whole bodies: never an internal error, nothing lands', async () => {
    const slot = solana.chain.slot;
    const refusals = new Set([-32700, -32600, -32601, -32602]);
    const mustRefuse = new Set(['simulateTransaction', 'sendTransaction', 'requestAirdrop', 'getTransaction']);
    for (const method of METHODS)
      for (const value of hostile.any)
        for (const params of [[value], [solana.feePayer, value], value]) {
          const answer = await rpcCall(solana.rpcUrl, { jsonrpc: '2.0', id: 1, method, params });
          const what = `${method} ${JSON.stringify(params)}: ${JSON.stringify(answer.json)}`;
          assert.equal(answer.status, 200, what);
          // A read method's config is optional: `[]` or `{}` may be a valid call; it must then answer a result.
          if (mustRefuse.has(method) || !('result' in answer.json))
            assert.ok(refusals.has(answer.json.error?.code), what);
        }
    for (const body of hostile.raw_bodies) {
      const answer = await rpcCall(solana.rpcUrl, body);
      assert.ok(
        answer.status === 200 && refusals.has(answer.json.error?.code),
        `${body}: ${JSON.stringify(answer.json)}`,
      );
    }
    assert.equal(solana.chain.slot, slot, 'no hostile call landed a transaction');
  });
});
