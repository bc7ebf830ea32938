/**
 * Hostile frames against a real signer process: oversize length prefix, truncated frame then close,
 * zero-length frame, bad JSON and invalid UTF-8, deep nesting, unknown methods (including inherited
 * property names and a raw-digest method), wrong versions and types, and every relevant value of the
 * shared hostile-input table (test/vectors/hostile-inputs.json) thrown at every field of every method (the
 * account and owner-policy methods too);
 * hostile Solana message bytes refused with a rule as a field.
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
import { getAddressDecoder } from '@solana/kit';
import {
  MAX_FRAME_BYTES,
  signerErrorReplySchema,
  type SignerErrorCode,
} from '../../../signer/protocol/signer-protocol.js';
import { encodeFrame } from '../../../signer/protocol/frame-codec.js';
import { SOLANA_RULES } from '../../../signer/solana/solana-rule.js';
import { DEVNET, paymentMessage } from '../../builders/solana-payment-message.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import {
  BASE_SEPOLIA_USDC as DOMAIN,
  buildAuthorization,
  buildPermit2Transfer,
  openRawConnection,
  PERMIT2_DOMAIN,
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

  it('refuses every hostile value in every field of every method, and signs nothing', async () => {
    const keyRefValues = [
      ...ANY,
      ...hostile.identifier!,
      'p11:v1:wal:AAAA',
      'p11:v1:acct:' + 'A'.repeat(100),
      'p11:v2:wal:' + 'A'.repeat(96),
      'aws:kms:whatever-key',
    ];
    const fieldPools: Record<string, unknown[]> = {
      account_key_ref: keyRefValues,
      wallet_key_ref: keyRefValues,
      address: [...ANY, ...hostile.evm_address!, ...hostile.identifier!],
      domain: ANY,
      message: ANY,
      'domain.name': [...ANY.filter((v) => typeof v !== 'string' || v.length === 0 || v.length > 64)],
      'domain.version': [...ANY.filter((v) => typeof v !== 'string' || v.length === 0 || v.length > 16)],
      'domain.chainId': [...ANY, ...hostile.unix_seconds!, ...hostile.caip2_network!, 84532.5, -84532, '84532'],
      'domain.verifyingContract': [...ANY, ...hostile.evm_address!],
      'message.from': [...ANY, ...hostile.evm_address!],
      'message.to': [
        ...ANY,
        ...hostile.evm_address!.filter(
          (a) =>
            a !== '0x0000000000000000000000000000000000000000' && a !== '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
        ),
      ],
      'message.value': [...ANY, ...hostile.raw_token_amount!, ...hostile.usd_amount!],
      // A canonical past time is a perfectly good validAfter: only the malformed ones are hostile here.
      'message.validAfter': [...ANY, ...hostile.raw_token_amount!, ...hostile.unix_seconds!].filter(
        (v) => !(typeof v === 'string' && /^[1-9][0-9]{0,9}$/.test(v)),
      ),
      'message.validBefore': [...ANY, ...hostile.raw_token_amount!, ...hostile.unix_seconds!],
      'message.nonce': [...ANY, ...hostile.bytes32_hex!],
      // Permit2 witness transfers (the EIP-3009 fields above land as unknown keys there: refused too).
      'message.permitted': ANY,
      'message.permitted.token': [...ANY, ...hostile.evm_address!],
      'message.permitted.amount': [...ANY, ...hostile.raw_token_amount!, ...hostile.usd_amount!],
      'message.spender': [...ANY, ...hostile.evm_address!],
      'message.deadline': [...ANY, ...hostile.raw_token_amount!, ...hostile.unix_seconds!],
      'message.witness': ANY,
      // A zero recipient or facilitator is well-formed (and useless): only malformed ones are hostile here.
      'message.witness.to': [...ANY, ...hostile.evm_address!].filter(
        (a) => a !== '0x0000000000000000000000000000000000000000',
      ),
      'message.witness.facilitator': [...ANY, ...hostile.evm_address!].filter(
        (a) => a !== '0x0000000000000000000000000000000000000000',
      ),
      'message.witness.validAfter': [...ANY, ...hostile.raw_token_amount!, ...hostile.unix_seconds!].filter(
        (v) => !(typeof v === 'string' && /^[1-9][0-9]{0,9}$/.test(v)),
      ),
    };
    const allowedFor = (field: string): SignerErrorCode[] => {
      if (field.endsWith('key_ref')) return ['invalid_request', 'key_not_found'];
      // Well-formed but wrong values fall to the static invariants (e.g. a zero address, 0, a past time).
      return ['invalid_request', 'invariant_violation', 'address_mismatch'];
    };
    const codes = new Map<string, SignerErrorCode>();
    let sent = 0;
    for (const [method, params] of Object.entries(valid)) {
      for (const [field, values] of Object.entries(fieldPools)) {
        const keys = field.split('.');
        if (!(keys[0]! in params)) continue;
        // A nested field only where its parent object exists in this method's params.
        if (keys.length > 2 && typeof keys.slice(0, -1).reduce<any>((o, k) => o?.[k], params) !== 'object') continue;
        for (const value of values) {
          const p = structuredClone(params) as Record<string, any>;
          const parent = keys.slice(0, -1).reduce<any>((o, k) => o[k], p);
          parent[keys.at(-1)!] = value;
          const what = `${method}.${field}=${show(value)}`;
          const code = await refused({ v: 1, id: `h${sent++}`, method, params: p }, allowedFor(field), what);
          // Stable: the same input gets the same code again.
          if (sent % 7 === 0)
            assert.equal(
              await refused({ v: 1, id: `again${sent}`, method, params: p }, [code], `${what} (again)`),
              code,
            );
          codes.set(what, code);
        }
      }
    }
    assert.ok(sent > 400, `${sent} hostile requests`);
    assert.ok(![...codes.values()].includes('internal_error' as SignerErrorCode));
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
  });

  it('refuses every hostile value in every field of the account and owner-policy methods, and keeps serving', async () => {
    const owner = valid.sign_transfer_authorization.address as string;
    const base: Record<string, Record<string, unknown>> = {
      create_account_key: { authority: { kind: 'approver' } },
      set_wallet_policy: {
        address: owner,
        policy: { per_tx_cap_usd: '1' },
        version: 1,
        issued_at: Math.floor(Date.now() / 1000),
        signature: `0x${'11'.repeat(65)}`,
      },
      get_wallet_policy: { address: owner },
    };
    const pools: Record<string, unknown[]> = {
      authority: ANY,
      'authority.kind': ANY,
      address: [...ANY, ...hostile.evm_address!, ...hostile.identifier!],
      policy: ANY,
      'policy.per_tx_cap_usd': [...ANY, ...hostile.usd_amount!],
      version: [...ANY, ...hostile.unix_seconds!, 0, -1, 1.5],
      issued_at: [...ANY, ...hostile.unix_seconds!],
      signature: [...ANY, ...hostile.bytes32_hex!],
    };
    // Schema-valid values meet the store (none here: policy_store_unavailable) or the signature's check.
    const allowed: SignerErrorCode[] = [
      'invalid_request',
      'policy_store_unavailable',
      'policy_signature_invalid',
      'address_mismatch',
    ];
    const before = await signer.client.health();
    let sent = 0;
    for (const [method, params] of Object.entries(base))
      for (const [field, values] of Object.entries(pools)) {
        const keys = field.split('.');
        if (!(keys[0]! in params)) continue;
        for (const value of values) {
          const p = structuredClone(params) as Record<string, any>;
          const parent = keys.slice(0, -1).reduce<any>((o, k) => o[k], p);
          parent[keys.at(-1)!] = value;
          const what = `${method}.${field}=${show(value)}`;
          const reply = await conn.request({ v: 1, id: `pol${sent++}`, method, params: p });
          // A create_account_key whose hostile value the schema reads as no authority at all is not refused.
          if (reply.ok === true && method === 'create_account_key') continue;
          const parsed = signerErrorReplySchema.safeParse(reply);
          assert.ok(parsed.success, `${what}: not an error reply: ${JSON.stringify(reply).slice(0, 200)}`);
          assert.ok(allowed.includes(parsed.data.error.code), `${what}: ${parsed.data.error.code}`);
        }
      }
    assert.ok(sent > 100, `${sent} hostile requests`);
    assert.deepEqual(await signer.client.health(), before, 'the signer serves as before');
  });

  it('refuses hostile Solana messages with a rule as a field, hostile fields as invalid, and signs nothing', async () => {
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
    const fields: Record<string, unknown[]> = {
      address: [...ANY, ...hostile.evm_address!, ...hostile.identifier!, '0'.repeat(32), 'z'.repeat(44)],
      network: [...ANY, ...hostile.caip2_network!, 'solana:devnet', `${DEVNET} `],
      message: [...ANY, ...hostile.base64_header!, Buffer.alloc(1233).toString('base64'), 'A'.repeat(1648)],
      pay_to: [...ANY, ...hostile.evm_address!, 'z'.repeat(44)],
    };
    for (const [field, values] of Object.entries(fields)) {
      for (const value of values) {
        const code = await refused(
          { v: 1, id: `solf${n++}`, method: 'sign_solana_transaction', params: { ...base, [field]: value } },
          ['invalid_request', 'invariant_violation'],
          `sign_solana_transaction.${field}=${show(value)}`,
        );
        // Only bytes that decode as base64 reach the Solana checks; every other field is refused at the schema.
        if (field !== 'message') assert.equal(code, 'invalid_request', `${field}=${show(value)}`);
      }
    }
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
