/**
 * Hostile frames against a real signer process: oversize length prefix, truncated frame then close,
 * zero-length frame, bad JSON and invalid UTF-8, deep nesting, unknown methods (including inherited
 * property names and a raw-digest method), wrong versions and types, and every value of the shared
 * hostile-input table (test/vectors/hostile-inputs.json) thrown at the params and every field of every method,
 * the methods and fields found by walking SIGNER_METHODS' params schemas (test/support/hostile-signer-plan.ts),
 * so a method or field added to the protocol is attacked without this file naming it; hostile Solana message
 * bytes refused with a rule as a field.
 * Each gets an error reply that matches the protocol's error schema with a stable code; nothing is
 * signed; the signer keeps serving on the same connection and on new ones. A connection that streams
 * frames and never reads a reply is no longer read from (its unwritten replies stay bounded) while the
 * others are answered.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { ed25519 } from '@noble/curves/ed25519.js';
import { getAddressDecoder, type Address } from '@solana/kit';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  MAX_FRAME_BYTES,
  SIGNER_METHODS,
  signerErrorReplySchema,
  type SignerErrorCode,
  type SignerMethod,
} from '../../../signer/protocol/signer-protocol.js';
import { encodeFrame } from '../../../signer/protocol/frame-codec.js';
import { SOLANA_RULES } from '../../../signer/solana/solana-rule.js';
import { DEVNET, PAY_TO, paymentMessage } from '../../builders/solana-payment-message.js';
import { planSignerMethod } from '../../support/hostile-signer-plan.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { newSolanaSigner } from '../../support/sign-in.js';
import {
  BASE_SEPOLIA_USDC as DOMAIN,
  buildAuthorization,
  buildPermit2Transfer,
  openRawConnection,
  ownerAuthority,
  PERMIT2_DOMAIN,
  PAYEE,
  siwsAuthority,
  type RawConnection,
} from './signer-test-helpers.js';

const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
) as Record<string, unknown[]>;
const ANY = hostile.any!;
const frameOf = (text: string) => {
  const body = Buffer.from(text, 'utf8');
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length);
  return Buffer.concat([header, body]);
};
const show = (v: unknown) => String(JSON.stringify(v)).slice(0, 40);
/** Frames sent before their replies are read (the replies are matched by id). */
const WINDOW = 64;
/** A process's resident set, in bytes (Linux). */
const residentBytes = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024;

describe('treasury-signer under hostile frames', function () {
  this.timeout(180_000);
  let signer: TestSigner;
  let conn: RawConnection;
  let valid: Record<
    | 'create_wallet_key'
    | 'destroy_wallet_key'
    | 'sign_transfer_authorization'
    | 'sign_permit2_witness_transfer'
    | 'sign_eip2612_permit',
    Record<string, unknown>
  >;
  /** Well-formed params of every method (more than one where they are a union): the hostile frames' bases. */
  let bases: Record<SignerMethod, Array<Record<string, unknown>>>;

  /** Sends one frame, expects one error reply of an allowed code, returns the code. */
  async function refused(frame: Buffer | unknown, allowed: SignerErrorCode[], what: string): Promise<SignerErrorCode> {
    conn.send(Buffer.isBuffer(frame) ? frame : encodeFrame(frame));
    const reply = await conn.next();
    assert.ok(reply, `no reply for ${what}`);
    const parsed = signerErrorReplySchema.safeParse(reply);
    assert.ok(parsed.success, `${what}: reply is not a protocol error reply: ${JSON.stringify(reply).slice(0, 200)}`);
    assert.ok(
      allowed.includes(parsed.data.error.code),
      `${what}: got ${parsed.data.error.code} (${parsed.data.error.message}), expected one of ${allowed}`,
    );
    return parsed.data.error.code;
  }

  /**
   * Sends frames a window at a time and matches the replies by id: each must be an error reply of an allowed code.
   * The codes by frame id.
   */
  async function refusedEach(
    items: Array<{ frame: { id: string }; allowed: SignerErrorCode[]; what: string }>,
  ): Promise<Map<string, SignerErrorCode>> {
    const codes = new Map<string, SignerErrorCode>();
    for (let i = 0; i < items.length; i += WINDOW) {
      const window = items.slice(i, i + WINDOW);
      conn.send(Buffer.concat(window.map((x) => encodeFrame(x.frame))));
      const replies = new Map<unknown, unknown>();
      for (let n = 0; n < window.length; n++) {
        const reply = await conn.next();
        if (reply) replies.set(reply.id, reply);
      }
      for (const { frame, allowed, what } of window) {
        const reply = replies.get(frame.id);
        assert.ok(reply, `no reply for ${what}`);
        const parsed = signerErrorReplySchema.safeParse(reply);
        assert.ok(parsed.success, `${what}: not a protocol error reply: ${JSON.stringify(reply).slice(0, 200)}`);
        const { code, message } = parsed.data.error;
        assert.ok(allowed.includes(code), `${what}: got ${code} (${message}), expected one of ${allowed}`);
        codes.set(frame.id, code);
      }
    }
    return codes;
  }

  before(async () => {
    signer = await startTestSigner();
    const account = (await signer.client.createAccountKey()).account_key_ref;
    const wallet = await signer.client.createWalletKey({ account_key_ref: account });
    valid = {
      create_wallet_key: { account_key_ref: account },
      destroy_wallet_key: { account_key_ref: account, wallet_key_ref: wallet.wallet_key_ref },
      sign_transfer_authorization: {
        account_key_ref: account,
        wallet_key_ref: wallet.wallet_key_ref,
        address: wallet.address,
        domain: DOMAIN,
        message: buildAuthorization(wallet.address, 1),
      },
      sign_permit2_witness_transfer: {
        account_key_ref: account,
        wallet_key_ref: wallet.wallet_key_ref,
        address: wallet.address,
        domain: PERMIT2_DOMAIN,
        message: buildPermit2Transfer(1),
      },
      sign_eip2612_permit: {
        account_key_ref: account,
        wallet_key_ref: wallet.wallet_key_ref,
        address: wallet.address,
        domain: DOMAIN,
        message: {
          owner: wallet.address,
          spender: PERMIT2_DOMAIN.verifyingContract,
          value: '1000',
          nonce: '0',
          deadline: String(Math.floor(Date.now() / 1000) + 600),
        },
      },
    };
    const solana = await signer.client.createWalletKey({ account_key_ref: account, curve: 'ed25519' });
    const owner = valid.sign_transfer_authorization.address as string;
    bases = {
      health: [{}],
      create_account_key: [
        { authority: await ownerAuthority(privateKeyToAccount(generatePrivateKey())) },
        { authority: siwsAuthority(newSolanaSigner()) },
        { authority: { kind: 'approver' } },
      ],
      create_wallet_key: [{ ...valid.create_wallet_key, curve: 'secp256k1' }],
      sign_transfer_authorization: [valid.sign_transfer_authorization],
      sign_permit2_witness_transfer: [valid.sign_permit2_witness_transfer],
      sign_eip2612_permit: [valid.sign_eip2612_permit],
      sign_solana_transaction: [
        {
          account_key_ref: account,
          wallet_key_ref: solana.wallet_key_ref,
          address: solana.address,
          network: DEVNET,
          message: Buffer.from(await paymentMessage({ wallet: solana.address as Address })).toString('base64'),
          pay_to: PAY_TO,
        },
      ],
      destroy_wallet_key: [{ ...valid.destroy_wallet_key, address: owner }],
      set_wallet_policy: [
        {
          address: owner,
          policy: {
            per_tx_cap_usd: '1',
            daily_cap_usd: '10',
            weekly_cap_usd: '50',
            monthly_cap_usd: '100',
            velocity_cap: { max_count: 10, window_seconds: 60 },
            counterparty_allowlist: [PAYEE],
            counterparty_blocklist: [DOMAIN.verifyingContract],
            cooling_off: 0,
            capability_cap_usd: { search: '1' },
            capability_required: false,
            allow_key_destruction: false,
          },
          wallet_key: valid.destroy_wallet_key,
          version: 1,
          issued_at: Math.floor(Date.now() / 1000),
          signature: `0x${'11'.repeat(65)}`,
        },
      ],
      get_wallet_policy: [{ address: owner }],
      attest_wallet_policy: [{ address: owner, wallet_key: valid.destroy_wallet_key, nonce: 'ab'.repeat(32) }],
    };
    conn = openRawConnection(signer.socketPath);
  });
  after(async () => {
    conn?.close();
    // The wallet must have survived everything: the valid request still signs.
    const ok = await signer.client.signTransferAuthorization(valid.sign_transfer_authorization as never);
    assert.match(ok.signature, /^0x[0-9a-f]{130}$/);
    const permit = await signer.client.signPermit2WitnessTransfer(valid.sign_permit2_witness_transfer as never);
    assert.match(permit.signature, /^0x[0-9a-f]{130}$/);
    const eip2612 = await signer.client.signEip2612Permit(valid.sign_eip2612_permit as never);
    assert.match(eip2612.signature, /^0x[0-9a-f]{130}$/);
    await signer?.stop();
  });

  it('answers framing and envelope errors with stable codes and keeps the connection', async () => {
    assert.equal(await refused(frameOf('{nope'), ['malformed_frame'], 'bad JSON'), 'malformed_frame');
    assert.equal(
      await refused(
        Buffer.concat([Buffer.from([0, 0, 0, 3]), Buffer.from([0xff, 0xfe, 0x7b])]),
        ['malformed_frame'],
        'invalid UTF-8',
      ),
      'malformed_frame',
    );
    assert.equal(await refused(Buffer.alloc(4), ['malformed_frame'], 'zero-length frame'), 'malformed_frame');
    for (const raw of hostile.raw_bodies as string[]) {
      if (raw === '') continue; // the zero-length frame above
      await refused(
        frameOf(raw),
        ['malformed_frame', 'invalid_request', 'unknown_method', 'unsupported_version'],
        `raw body ${show(raw)}`,
      );
    }
    await refused(frameOf('['.repeat(20_000) + ']'.repeat(20_000)), ['invalid_request'], 'deep nesting');
    await refused(
      frameOf(`{"v":1,"id":"deep","method":"health","params":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`),
      ['invalid_request'],
      'deep params',
    );
    for (const method of [
      'export_private_key',
      'sign_digest',
      'constructor',
      'toString',
      '__proto__',
      'hasOwnProperty',
      'HEALTH',
      'health ',
    ]) {
      const reply = await conn.request({ v: 1, id: 'm', method, params: {} });
      assert.deepEqual(
        reply,
        { v: 1, id: 'm', ok: false, error: { code: 'unknown_method', message: 'unknown method' } },
        method,
      );
    }
    for (const v of [2, 0, '1', null, 1.5])
      await refused({ v, id: 'ver', method: 'health', params: {} }, ['unsupported_version'], `v=${show(v)}`);
    await refused({ id: 'nov', method: 'health', params: {} }, ['invalid_request'], 'missing v');
    await refused(
      { v: 1, id: 'extra', method: 'health', params: {}, extra: true },
      ['invalid_request'],
      'extra envelope field',
    );
    await refused({ v: 1, id: 'p', method: 'health', params: { extra: 1 } }, ['invalid_request'], 'extra params field');
    await refused({ v: 1, method: 'health', params: {} }, ['invalid_request'], 'missing id');
    for (const id of ANY)
      await refused({ v: 1, id, method: 'health', params: {} }, ['invalid_request'], `id=${show(id)}`);
    for (const method of ANY)
      await refused(
        { v: 1, id: 'x', method, params: {} },
        ['invalid_request', 'unknown_method'],
        `method=${show(method)}`,
      );
    for (const params of ANY.filter(
      (p) => !(typeof p === 'object' && p !== null && !Array.isArray(p) && Object.keys(p).length === 0),
    )) {
      await refused({ v: 1, id: 'x', method: 'health', params }, ['invalid_request'], `params=${show(params)}`);
    }
    assert.equal(
      (await conn.request({ v: 1, id: 'alive', method: 'health', params: {} })).ok,
      true,
      'same connection still serves',
    );
  });

  it('throws the table at the params and every field of every method, as its schema walks, and signs nothing', async () => {
    // Every method of the protocol has a base here, and each base is well-formed.
    assert.deepEqual(Object.keys(bases).sort(), Object.keys(SIGNER_METHODS).sort());
    for (const [method, list] of Object.entries(bases))
      for (const params of list) SIGNER_METHODS[method as SignerMethod].params.parse(params);
    const before = await signer.client.health();
    const unreached: string[] = [];
    let sent = 0;
    for (const method of Object.keys(SIGNER_METHODS) as SignerMethod[]) {
      const { calls, fields } = planSignerMethod(SIGNER_METHODS[method].params, bases[method]);
      const frames = calls.flatMap((call) => {
        const what = `${method}.${call.field}=${show(call.value)} [${call.vectorClass}]`;
        const n = sent++;
        const frame = { v: 1, id: `h${n}`, method, params: call.params };
        // A well-formed reference to no key meets the key store (a policy, this signer's missing policy store).
        const allowed: SignerErrorCode[] =
          call.expect === 'invalid' ? ['invalid_request'] : ['key_not_found', 'policy_store_unavailable'];
        // Stable: the same input gets the same code again (every seventh is sent twice).
        const again = n % 7 === 0 ? [{ frame: { ...frame, id: `again${n}` }, allowed, what }] : [];
        return [{ frame, allowed, what }, ...again];
      });
      const codes = await refusedEach(frames);
      for (const { frame, what } of frames)
        if (frame.id.startsWith('again'))
          assert.equal(codes.get(frame.id), codes.get(`h${frame.id.slice(5)}`), `${what} (again)`);
      const reached = new Set(calls.filter((c) => c.counts).map((c) => c.field));
      unreached.push(...fields.filter((f) => !reached.has(f)).map((f) => `${method}.${f}`));
    }
    assert.deepEqual(unreached, [], 'fields no hostile value was refused at');
    assert.ok(sent > 5000, `${sent} hostile frames`);
    // A mixed-case address with a wrong EIP-55 checksum is refused as such, not signed with.
    const p = structuredClone(valid.sign_transfer_authorization) as Record<string, any>;
    p.message.to = '0x209693BC6AFC0C5328BA36FAF03C514EF312287c';
    const reply = await conn.request({ v: 1, id: 'checksum', method: 'sign_transfer_authorization', params: p });
    assert.deepEqual(reply.error, { code: 'invalid_request', message: 'message.to has a wrong EIP-55 checksum' });
    // All-upper and all-lower spellings are fine.
    p.message.to = '0x209693BC6AFC0C5328BA36FAF03C514EF312287C';
    assert.equal(
      (await conn.request({ v: 1, id: 'upper', method: 'sign_transfer_authorization', params: p })).ok,
      true,
    );
    assert.equal(
      (await conn.request({ v: 1, id: 'alive', method: 'health', params: {} })).ok,
      true,
      'same connection still serves',
    );
    assert.deepEqual(await signer.client.health(), before, 'the signer serves as before');
  });

  it('refuses hostile Solana messages with a rule as a field, and signs nothing', async () => {
    const walletAddress = getAddressDecoder().decode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
    const good = await paymentMessage({ wallet: walletAddress });
    const base = {
      account_key_ref: valid.create_wallet_key.account_key_ref,
      wallet_key_ref: valid.destroy_wallet_key.wallet_key_ref,
      address: walletAddress,
      network: DEVNET,
      message: Buffer.from(good).toString('base64'),
    };
    let n = 0;
    const ask = (params: Record<string, unknown>) =>
      conn.request({ v: 1, id: `sol${n++}`, method: 'sign_solana_transaction', params });
    const refusedWithRule = async (bytes: Uint8Array, what: string, rule?: string) => {
      const reply = await ask({ ...base, message: Buffer.from(bytes).toString('base64') });
      const parsed = signerErrorReplySchema.parse(reply);
      assert.equal(parsed.error.code, 'invariant_violation', `${what}: ${parsed.error.message}`);
      assert.ok(
        SOLANA_RULES.includes(parsed.error.details?.rule as never),
        `${what}: rule ${parsed.error.details?.rule}`,
      );
      if (rule) assert.equal(parsed.error.details?.rule, rule, what);
    };
    await refusedWithRule(new Uint8Array(1), 'one byte', 'message_undecodable');
    await refusedWithRule(good.subarray(0, 40), 'truncated', 'message_undecodable');
    await refusedWithRule(new Uint8Array([...good, 0]), 'trailing byte', 'message_not_canonical');
    await refusedWithRule(new Uint8Array(1232), 'zeros');
    for (let i = 0; i < 20; i++) await refusedWithRule(randomBytes(1 + ((i * 61) % 1232)), `random ${i}`);
    await refusedWithRule(
      await paymentMessage({ wallet: walletAddress, feePayer: walletAddress }),
      'fee payer',
      'fee_payer_is_wallet',
    );
    await refusedWithRule(
      await paymentMessage({ wallet: walletAddress, decimals: 9 }),
      'decimals',
      'transfer_decimals',
    );
    await refusedWithRule(
      await paymentMessage({ wallet: walletAddress, computeUnits: 1_400_000 }),
      'compute units',
      'compute_unit_limit',
    );
    // Bytes that decode reach the Solana checks; the schema refuses the rest (every field's table: above).
    for (const value of [...hostile.base64_header!, Buffer.alloc(1233).toString('base64'), 'A'.repeat(1648)])
      await refused(
        { v: 1, id: `solm${n++}`, method: 'sign_solana_transaction', params: { ...base, message: value } },
        ['invalid_request', 'invariant_violation'],
        `sign_solana_transaction.message=${show(value)}`,
      );
    // A valid payment asked of a secp256k1 wallet key: refused, never signed.
    const reply = await ask(base);
    assert.equal(signerErrorReplySchema.parse(reply).error.code, 'invariant_violation');
    assert.equal(
      (await conn.request({ v: 1, id: 'alive', method: 'health', params: {} })).ok,
      true,
      'same connection still serves',
    );
  });

  it('stops reading a connection that never reads its replies, and keeps answering the others meanwhile', async () => {
    const pid = signer.child.pid!;
    const rssBefore = residentBytes(pid);
    const hostileSocket = net.createConnection(signer.socketPath);
    await once(hostileSocket, 'connect');
    hostileSocket.pause(); // never reads a reply
    hostileSocket.on('error', () => undefined);
    // 10,000 tiny invalid frames (an `invalid_request` reply of about a hundred bytes each) per write.
    const batch = Buffer.concat(Array.from({ length: 10_000 }, () => frameOf('{"v":1}')));
    const drainedWithin = (ms: number) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), ms);
        hostileSocket.once('drain', () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    let sent = 0;
    let stalled = false;
    while (sent < 3_000_000 && !hostileSocket.destroyed) {
      sent += batch.length;
      if (!hostileSocket.write(batch) && !(await drainedWithin(3000))) {
        stalled = true; // the signer no longer reads what this connection sends
        break;
      }
    }
    assert.ok(
      stalled || hostileSocket.destroyed,
      `the signer read all ${sent} bytes of frames from a connection that never read a reply`,
    );
    // The held connection stops nobody else: a new connection and the suite's own are answered.
    assert.equal((await signer.client.health()).status, 'ok');
    assert.equal((await conn.request({ v: 1, id: 'alive', method: 'health', params: {} })).ok, true);
    const grown = residentBytes(pid) - rssBefore;
    hostileSocket.destroy();
    assert.ok(grown < 64 * 2 ** 20, `the signer grew by ${(grown / 2 ** 20).toFixed(0)} MiB`);
  });

  it('closes a connection that announces an oversize frame, and forgets a truncated one', async () => {
    const big = openRawConnection(signer.socketPath);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(MAX_FRAME_BYTES + 1);
    big.send(header);
    const reply = await big.next();
    assert.deepEqual(signerErrorReplySchema.parse(reply).error.code, 'frame_too_large');
    assert.equal(reply.id, null);
    assert.ok(await big.waitClosed(), 'oversize connection closed');

    const huge = openRawConnection(signer.socketPath);
    huge.send(Buffer.from([0xff, 0xff, 0xff, 0xff]));
    assert.equal((await huge.next()).error.code, 'frame_too_large');
    assert.ok(await huge.waitClosed());

    const truncated = openRawConnection(signer.socketPath);
    truncated.send(Buffer.concat([Buffer.from([0, 0, 1, 0]), Buffer.from('{"v":1,"id":"t","method":"hea')]));
    truncated.close();

    const idle = openRawConnection(signer.socketPath); // opened and never used while others work
    assert.equal((await signer.client.health()).status, 'ok', 'a fresh connection still works');
    assert.equal(
      (await conn.request({ v: 1, id: 'alive', method: 'health', params: {} })).ok,
      true,
      'the old connection still works',
    );
    idle.close();
  });
});
