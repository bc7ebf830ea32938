/**
 * treasury-signer as a real process on a real SoftHSM token: signatures that an independent
 * implementation (viem) recovers to the wallet, 1,000 in a row all low-S with v ∈ {27, 28}; key material
 * that never leaves the HSM; destroyed keys refused; static invariants; hostile frames survived; 0600
 * socket; clean SIGTERM.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import os from 'node:os';
import pkcs11js from 'pkcs11js';
import { recoverTypedDataAddress, type Hex } from 'viem';
import { Pkcs11Backend } from '../../../signer/backends/pkcs11/pkcs11-backend.js';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../../../signer/eip3009/hash-transfer-authorization.js';
import { SignerError } from '../../../signer/protocol/signer-client.js';
import { encodeFrame, FrameDecoder } from '../../../signer/protocol/frame-codec.js';
import { initSoftHsmToken } from '../../../ops/softhsm/init-token.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';

const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;
const hostile = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8')) as Record<string, unknown[]>;
const DOMAIN = { name: 'USDC', version: '2', chainId: 84532, verifyingContract: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' };

function message(from: string, i: number) {
  const now = Math.floor(Date.now() / 1000);
  return { from, to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', value: String(1000 + i), validAfter: '0', validBefore: String(now + 600), nonce: `0x${i.toString(16).padStart(64, '0')}` };
}

/** A raw socket that sends bytes and collects decoded reply frames. */
function rawConnection(socketPath: string) {
  const socket = net.createConnection(socketPath);
  const decoder = new FrameDecoder();
  const replies: any[] = [];
  let closed = false;
  socket.on('data', (chunk) => {
    for (const e of decoder.push(chunk)) if (e.kind === 'frame') replies.push(JSON.parse(e.payload.toString()));
  });
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  return {
    send: (bytes: Buffer) => socket.write(bytes),
    async next(): Promise<any> {
      for (let i = 0; i < 200 && replies.length === 0 && !closed; i++) await new Promise((r) => setTimeout(r, 10));
      return replies.shift();
    },
    isClosed: () => closed,
    close: () => socket.destroy(),
  };
}

describe('treasury-signer process (SoftHSM)', function () {
  this.timeout(180_000);
  let signer: TestSigner;
  let accountKeyRef: string;
  let wallet: { wallet_key_ref: string; address: string; public_key: string };

  before(async () => {
    signer = await startTestSigner({ env: { TREASURY_SIGNER_MAX_VALUE: '1000000000', TREASURY_SIGNER_MAX_VALIDITY_SECONDS: '3600' } });
    accountKeyRef = (await signer.client.createAccountKey()).account_key_ref;
    wallet = await signer.client.createWalletKey({ account_key_ref: accountKeyRef });
  });
  after(async () => {
    await signer?.stop();
  });

  it('answers health and creates keys whose references are wrapped blobs', async () => {
    assert.deepEqual(await signer.client.health(), { status: 'ok', backend: 'pkcs11', protocol_version: 1 });
    assert.match(accountKeyRef, /^p11:v1:acct:[A-Za-z0-9_-]+$/);
    assert.match(wallet.wallet_key_ref, /^p11:v1:wal:[A-Za-z0-9_-]+$/);
    assert.match(wallet.public_key, /^0x04[0-9a-f]{128}$/);
    assert.deepEqual(Object.keys(wallet).sort(), ['address', 'public_key', 'wallet_key_ref']);
  });

  it('signs 1,000 authorizations in a row: all low-S, v ∈ {27,28}, all recovered by viem to the wallet', async () => {
    const results = [];
    for (let batch = 0; batch < 10; batch++) {
      results.push(
        ...(await Promise.all(
          Array.from({ length: 100 }, (_, j) => {
            const msg = message(wallet.address, batch * 100 + j);
            return signer.client.signTransferAuthorization({ account_key_ref: accountKeyRef, wallet_key_ref: wallet.wallet_key_ref, address: wallet.address, domain: DOMAIN, message: msg }).then((sig) => ({ sig, msg }));
          }),
        )),
      );
    }
    assert.equal(results.length, 1000);
    const vs = new Set<number>();
    for (const { sig } of results) {
      assert.ok(BigInt(sig.s) <= HALF_N, 'low-S');
      assert.ok(sig.v === 27 || sig.v === 28);
      vs.add(sig.v);
    }
    assert.deepEqual([...vs].sort(), [27, 28], 'both recovery ids occur');
    for (const { sig, msg } of results.filter((_, i) => i % 10 === 0)) {
      const recovered = await recoverTypedDataAddress({
        domain: { ...DOMAIN, verifyingContract: DOMAIN.verifyingContract as Hex },
        types: TRANSFER_WITH_AUTHORIZATION_TYPES,
        primaryType: 'TransferWithAuthorization',
        message: { from: msg.from as Hex, to: msg.to as Hex, value: BigInt(msg.value), validAfter: 0n, validBefore: BigInt(msg.validBefore), nonce: msg.nonce as Hex },
        signature: sig.signature as Hex,
      });
      assert.equal(recovered, wallet.address);
    }
  });

  it('refuses to sign outside the static invariants, naming the rule', async () => {
    const base = { account_key_ref: accountKeyRef, wallet_key_ref: wallet.wallet_key_ref, address: wallet.address, domain: DOMAIN };
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ domain: { ...DOMAIN, chainId: 1 } }, /not allowed/],
      [{ message: { ...message(wallet.address, 1), from: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' } }, /message.from/],
      [{ message: { ...message(wallet.address, 1), value: '0' } }, /positive/],
      [{ message: { ...message(wallet.address, 1), value: '1000000001' } }, /maximum/],
      [{ message: { ...message(wallet.address, 1), validBefore: '1000' } }, /past/],
      [{ message: { ...message(wallet.address, 1), validBefore: String(Math.floor(Date.now() / 1000) + 7200) } }, /exceeds/],
    ];
    for (const [override, pattern] of cases) {
      await assert.rejects(
        signer.client.signTransferAuthorization({ ...base, message: message(wallet.address, 1), ...override } as never),
        (e: unknown) => e instanceof SignerError && e.code === 'invariant_violation' && pattern.test(e.message),
      );
    }
    await assert.rejects(
      signer.client.signTransferAuthorization({ ...base, address: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', message: { ...message(wallet.address, 1), from: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' } }),
      (e: unknown) => e instanceof SignerError && e.code === 'address_mismatch',
    );
  });

  it('refuses a destroyed wallet key forever, and siblings keep signing', async () => {
    const doomed = await signer.client.createWalletKey({ account_key_ref: accountKeyRef });
    const sign = (w: { wallet_key_ref: string; address: string }) =>
      signer.client.signTransferAuthorization({ account_key_ref: accountKeyRef, wallet_key_ref: w.wallet_key_ref, address: w.address, domain: DOMAIN, message: message(w.address, 7) });
    await sign(doomed);
    assert.deepEqual(await signer.client.destroyWalletKey({ account_key_ref: accountKeyRef, wallet_key_ref: doomed.wallet_key_ref }), { destroyed: true });
    await assert.rejects(sign(doomed), (e: unknown) => e instanceof SignerError && e.code === 'key_destroyed');
    await sign(wallet);
    const tampered = doomed.wallet_key_ref.slice(0, -2) + (doomed.wallet_key_ref.endsWith('AA') ? 'AB' : 'AA');
    await assert.rejects(sign({ ...doomed, wallet_key_ref: tampered }), (e: unknown) => e instanceof SignerError && ['key_not_found', 'key_destroyed'].includes(e.code));
  });

  it('creates the socket with mode 0600', () => {
    assert.equal(fs.statSync(signer.socketPath).mode & 0o777, 0o600);
  });

  it('survives hostile frames with an error reply and keeps serving', async () => {
    const conn = rawConnection(signer.socketPath);
    conn.send(Buffer.concat([Buffer.from([0, 0, 0, 5]), Buffer.from('{nope')]));
    assert.equal((await conn.next()).error.code, 'malformed_frame');
    conn.send(encodeFrame({ v: 1, id: 'a', method: 'export_private_key', params: {} }));
    assert.deepEqual(await conn.next(), { v: 1, id: 'a', ok: false, error: { code: 'unknown_method', message: 'unknown method' } });
    conn.send(encodeFrame({ v: 1, id: 'raw', method: 'sign_digest', params: { digest: `0x${'11'.repeat(32)}` } }));
    assert.equal((await conn.next()).error.code, 'unknown_method');
    conn.send(encodeFrame({ v: 2, id: 'b', method: 'health', params: {} }));
    assert.equal((await conn.next()).error.code, 'unsupported_version');
    conn.send(encodeFrame({ v: 1, id: 'c', method: 'health', params: { extra: 1 } }));
    assert.equal((await conn.next()).error.code, 'invalid_request');
    conn.send(Buffer.alloc(4));
    assert.equal((await conn.next()).error.code, 'malformed_frame');
    conn.send(encodeFrame({ v: 1, id: 'd', method: 'health', params: {} }));
    assert.equal((await conn.next()).ok, true, 'same connection still serves');

    // every hostile value in every field of every method
    const valid = {
      create_wallet_key: { account_key_ref: accountKeyRef },
      destroy_wallet_key: { account_key_ref: accountKeyRef, wallet_key_ref: wallet.wallet_key_ref },
      sign_transfer_authorization: { account_key_ref: accountKeyRef, wallet_key_ref: wallet.wallet_key_ref, address: wallet.address, domain: DOMAIN, message: message(wallet.address, 9) },
    } as Record<string, Record<string, unknown>>;
    const pools: Record<string, unknown[]> = {
      address: [...hostile.any!, ...hostile.evm_address!.filter((a) => !/^0x[0-9a-fA-F]{40}$/.test(a as string))],
      value: [...hostile.any!, ...hostile.raw_token_amount!],
      validAfter: [...hostile.any!, ...hostile.raw_token_amount!],
      validBefore: [...hostile.any!, ...hostile.raw_token_amount!, ...hostile.unix_seconds!],
      nonce: [...hostile.any!, ...hostile.bytes32_hex!],
      chainId: [...hostile.any!, ...hostile.unix_seconds!.filter((v) => typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0)],
    };
    let n = 0;
    for (const [method, params] of Object.entries(valid)) {
      for (const field of Object.keys(params)) {
        const values = field === 'domain' || field === 'message' ? hostile.any! : [...hostile.any!, ...hostile.identifier!];
        for (const value of values) {
          conn.send(encodeFrame({ v: 1, id: `h${n++}`, method, params: { ...params, [field]: value } }));
          const reply = await conn.next();
          assert.equal(reply?.ok, false, `${method}.${field}=${String(JSON.stringify(value)).slice(0, 30)}`);
        }
      }
    }
    for (const [field, values] of Object.entries(pools)) {
      for (const value of values) {
        const p = structuredClone(valid.sign_transfer_authorization!) as any;
        if (field === 'chainId') p.domain.chainId = value;
        else if (field === 'address') p.address = value;
        else p.message[field] = value;
        conn.send(encodeFrame({ v: 1, id: `p${n++}`, method: 'sign_transfer_authorization', params: p }));
        const reply = await conn.next();
        assert.equal(reply?.ok, false, `${field}=${String(JSON.stringify(value)).slice(0, 30)}`);
        assert.ok(['invalid_request', 'invariant_violation', 'key_not_found'].includes(reply.error.code), reply.error.code);
      }
    }
    conn.close();

    const big = rawConnection(signer.socketPath);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(10 * 1024 * 1024);
    big.send(header);
    assert.equal((await big.next()).error.code, 'frame_too_large');
    for (let i = 0; i < 100 && !big.isClosed(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(big.isClosed(), 'oversize connection closed');

    const truncated = rawConnection(signer.socketPath);
    truncated.send(Buffer.concat([Buffer.from([0, 0, 1, 0]), Buffer.from('{"v":1')]));
    truncated.close();

    assert.equal((await signer.client.health()).status, 'ok', 'a fresh connection still works');
  });

  it('stops cleanly on SIGTERM: exit 0, socket removed', async () => {
    const pin = fs.readFileSync(signer.token.pinFile, 'utf8').trim();
    assert.equal(await signer.stop(), 0, signer.logs());
    assert.ok(!fs.existsSync(signer.socketPath));
    assert.match(signer.logs(), /"msg":"signer stopped"/);
    assert.ok(!signer.logs().includes(pin), 'the PIN is never logged');
  });
});

describe('key material never leaves the HSM', function () {
  this.timeout(60_000);
  it('the root KEK and unwrapped keys refuse CKA_VALUE; the database-bound refs are wrapped blobs', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-hsm-'));
    const token = await initSoftHsmToken({ dir });
    process.env.SOFTHSM2_CONF = token.softhsm2Conf;
    const backend = Pkcs11Backend.open({
      kind: 'pkcs11',
      modulePath: token.modulePath,
      tokenLabel: token.tokenLabel,
      pin: fs.readFileSync(token.pinFile, 'utf8').trim(),
      kekLabel: token.kekLabel,
      sessions: 2,
      cacheSize: 10,
      cacheTtlMs: 60_000,
    });
    try {
      assert.throws(() => backend.readKekAttribute(pkcs11js.CKA_VALUE), (e: unknown) => (e as { code?: number }).code === pkcs11js.CKR_ATTRIBUTE_SENSITIVE);
      assert.equal(backend.readKekAttribute(pkcs11js.CKA_EXTRACTABLE)?.[0], 0);
      assert.equal(backend.readKekAttribute(pkcs11js.CKA_SENSITIVE)?.[0], 1);
      const account = await backend.createAccountKey();
      const walletKey = await backend.createWalletKey(account);
      // A wrapped EC private key (PKCS#8 inside AES key wrap with padding) is far longer than a raw 32-byte scalar.
      const blob = Buffer.from(walletKey.walletKeyRef.split(':')[3]!, 'base64url');
      assert.ok(blob.length > 40 && blob.length % 8 === 0, `wrapped blob of ${blob.length} bytes`);
      const digest = new Uint8Array(32).fill(7);
      await backend.signDigest(account, walletKey.walletKeyRef, digest);
      const handles = backend.unwrappedHandlesForTest();
      assert.ok(handles.length >= 2, 'account key and wallet key cached as session objects');
      for (const h of handles) {
        assert.throws(() => backend.readAttributeForTest(h, pkcs11js.CKA_VALUE), (e: unknown) => (e as { code?: number }).code === pkcs11js.CKR_ATTRIBUTE_SENSITIVE);
        assert.equal(backend.readAttributeForTest(h, pkcs11js.CKA_EXTRACTABLE)?.[0], 0);
      }
    } finally {
      await backend.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
