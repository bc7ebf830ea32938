/**
 * The signer's pure parts: the EIP-712 digest against the x402 spec vector, low-S normalisation and
 * recovery-id search against signatures made by an independent implementation (noble), the static
 * invariants, and the frame decoder's limits.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, hexToBytes } from 'viem';
import { privateKeyToAddress, publicKeyToAddress } from 'viem/accounts';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { recoverAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { assertPermit2Invariants, assertTransferInvariants } from '../../../signer/assert.js';
import { hashPermit2WitnessTransfer } from '../../../signer/permit2/hash-permit2-witness-transfer.js';
import { finalizeSignature, rememberWalletKey } from '../../../signer/ecdsa/finalize-signature.js';
import { hashTransferAuthorization } from '../../../signer/eip3009/hash-transfer-authorization.js';
import { encodeFrame, FrameDecoder } from '../../../signer/protocol/frame-codec.js';
import { MAX_FRAME_BYTES } from '../../../signer/protocol/signer-protocol.js';
import { SignerFault } from '../../../signer/signer-error.js';
import { DEFAULT_SOLANA_INVARIANTS } from '../../../signer/config/solana-invariants.js';

const vector = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/eip3009-x402-spec-vector.json'), 'utf8'),
);
const N = secp256k1.Point.CURVE().n;

describe('EIP-3009 digest', () => {
  it('matches the x402 specification vector', () => {
    assert.equal(hashTransferAuthorization(vector.domain, vector.message), vector.digest);
  });
  it('differs under the mainnet domain name (the classic testnet/mainnet mix-up)', () => {
    assert.notEqual(hashTransferAuthorization({ ...vector.domain, name: 'USD Coin' }, vector.message), vector.digest);
  });
  it('memoises each domain separator under its own domain: (name, version) pairs that join to one string differ', async () => {
    const { hashTypedData } = await import('viem');
    const { TRANSFER_WITH_AUTHORIZATION_TYPES } =
      await import('../../../signer/eip3009/hash-transfer-authorization.js');
    const m = vector.message;
    const viemDigest = (domain: typeof vector.domain) =>
      hashTypedData({
        domain,
        types: TRANSFER_WITH_AUTHORIZATION_TYPES,
        primaryType: 'TransferWithAuthorization',
        message: {
          ...m,
          value: BigInt(m.value),
          validAfter: BigInt(m.validAfter),
          validBefore: BigInt(m.validBefore),
        },
      });
    // Joined with NUL, both would read "USD\0C\02": the second must not get the first one's separator.
    const first = { ...vector.domain, name: 'USD\u0000C', version: '2' };
    const second = { ...vector.domain, name: 'USD', version: 'C\u00002' };
    const firstDigest = hashTransferAuthorization(first, m);
    const secondDigest = hashTransferAuthorization(second, m);
    assert.notEqual(secondDigest, firstDigest);
    assert.equal(firstDigest, viemDigest(first));
    assert.equal(secondDigest, viemDigest(second));
  });
  it('uses the type hash of its own field list (EIP-712 encodeType)', async () => {
    const { keccak256, toHex } = await import('viem');
    const { TRANSFER_WITH_AUTHORIZATION_TYPES, TRANSFER_WITH_AUTHORIZATION_TYPEHASH } =
      await import('../../../signer/eip3009/hash-transfer-authorization.js');
    const fields = TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization.map((f) => `${f.type} ${f.name}`).join(
      ',',
    );
    assert.equal(keccak256(toHex(`TransferWithAuthorization(${fields})`)), TRANSFER_WITH_AUTHORIZATION_TYPEHASH);
  });
});

describe('EIP-712 digests against viem hashTypedData', () => {
  it('match for many random authorizations and domains (memoised domain separators included)', async () => {
    const { hashTypedData } = await import('viem');
    const { TRANSFER_WITH_AUTHORIZATION_TYPES } =
      await import('../../../signer/eip3009/hash-transfer-authorization.js');
    const { UPTO_PERMIT2_WITNESS_TYPES } = await import('../../../signer/permit2/hash-permit2-witness-transfer.js');
    const addr = () => privateKeyToAddress(bytesToHex(secp256k1.utils.randomSecretKey()));
    const rand = () => BigInt(bytesToHex(secp256k1.utils.randomSecretKey())) >> BigInt(Math.floor(Math.random() * 255));
    const domains = [
      { name: 'USDC', version: '2', chainId: 84532, verifyingContract: addr() },
      { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: addr() },
    ];
    for (let i = 0; i < 50; i++) {
      const domain = domains[i % 2]!;
      const m = {
        from: addr(),
        to: addr(),
        value: rand().toString(),
        validAfter: String(i),
        validBefore: rand().toString(),
        nonce: bytesToHex(secp256k1.utils.randomSecretKey()),
      };
      const expected = hashTypedData({
        domain: { ...domain, verifyingContract: domain.verifyingContract },
        types: TRANSFER_WITH_AUTHORIZATION_TYPES,
        primaryType: 'TransferWithAuthorization',
        message: {
          ...m,
          from: m.from,
          to: m.to,
          value: BigInt(m.value),
          validAfter: BigInt(m.validAfter),
          validBefore: BigInt(m.validBefore),
          nonce: m.nonce,
        },
      });
      assert.equal(hashTransferAuthorization(domain, m), expected);
      const p = {
        permitted: { token: addr(), amount: rand().toString() },
        spender: addr(),
        nonce: rand().toString(),
        deadline: rand().toString(),
        witness: { to: addr(), facilitator: addr(), validAfter: String(i) },
      };
      const p2Domain = {
        name: 'Permit2' as const,
        chainId: domain.chainId,
        verifyingContract: domain.verifyingContract,
      };
      const expectedPermit = hashTypedData({
        domain: p2Domain,
        types: UPTO_PERMIT2_WITNESS_TYPES,
        primaryType: 'PermitWitnessTransferFrom',
        message: {
          permitted: { token: p.permitted.token, amount: BigInt(p.permitted.amount) },
          spender: p.spender,
          nonce: BigInt(p.nonce),
          deadline: BigInt(p.deadline),
          witness: { to: p.witness.to, facilitator: p.witness.facilitator, validAfter: BigInt(p.witness.validAfter) },
        },
      });
      assert.equal(hashPermit2WitnessTransfer(p2Domain, p), expectedPermit);
    }
  });
});

describe('Permit2 upto witness digest', () => {
  it('is the digest the official x402 upto client signs', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const client = new UptoEvmScheme(account);
    const requirements = {
      scheme: 'upto',
      network: 'eip155:84532',
      amount: '250000',
      asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
      maxTimeoutSeconds: 300,
      extra: {
        name: 'USDC',
        version: '2',
        facilitatorAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        assetTransferMethod: 'permit2',
      },
    };
    const result = await client.createPaymentPayload(2, requirements as never);
    const { signature, permit2Authorization: auth } = result.payload as {
      signature: `0x${string}`;
      permit2Authorization: any;
    };
    /** The Permit2 digest of the payload's transfer with `witness` (its own by default). */
    const digestWith = (witness = auth.witness) =>
      hashPermit2WitnessTransfer(
        { name: 'Permit2', chainId: 84532, verifyingContract: '0x000000000022D473030F116dDEE9F6B43aC78BA3' },
        { permitted: auth.permitted, spender: auth.spender, nonce: auth.nonce, deadline: auth.deadline, witness },
      );
    const digest = digestWith();
    assert.equal(await recoverAddress({ hash: digest, signature }), account.address);
    // Any field changed gives another digest.
    const moved = digestWith({ ...auth.witness, facilitator: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' });
    assert.notEqual(moved, digest);
  });
});

/** The address a 65-byte r‖s‖v signature over `digest` recovers to (noble, independent of the signer's path). */
function recoverAddressOf(digest: Uint8Array, signature: `0x${string}`): string {
  const bytes = hexToBytes(signature);
  const point = secp256k1.Signature.fromBytes(bytes.subarray(0, 64), 'compact')
    .addRecoveryBit(bytes[64]! - 27)
    .recoverPublicKey(digest);
  return publicKeyToAddress(bytesToHex(point.toBytes(false)));
}

describe('finalizeSignature', () => {
  const priv = secp256k1.utils.randomSecretKey();
  const address = privateKeyToAddress(bytesToHex(priv));

  it('normalises high-S, finds v, and recovers to the address for many digests', () => {
    let highSeen = 0;
    for (let i = 0; i < 200; i++) {
      const digest = secp256k1.utils.randomSecretKey(); // 32 random bytes
      const sig = secp256k1.Signature.fromBytes(
        secp256k1.sign(digest, priv, { prehash: false, lowS: true }),
        'compact',
      );
      const high = i % 2 === 0;
      const s = high ? N - sig.s : sig.s;
      if (s > N / 2n) highSeen++;
      const raw = new Uint8Array(64);
      raw.set(hexToBytes(`0x${sig.r.toString(16).padStart(64, '0')}`), 0);
      raw.set(hexToBytes(`0x${s.toString(16).padStart(64, '0')}`), 32);
      const out = finalizeSignature(digest, raw, address);
      assert.ok(BigInt(out.s) <= N / 2n, 'low-S');
      assert.ok(out.v === 27 || out.v === 28);
      const recovered = secp256k1.Signature.fromBytes(hexToBytes(out.signature).subarray(0, 64), 'compact')
        .addRecoveryBit(out.v - 27)
        .recoverPublicKey(digest);
      assert.equal(privateKeyToAddress(bytesToHex(priv)), address);
      assert.equal(bytesToHex(recovered.toBytes(false)), bytesToHex(secp256k1.getPublicKey(priv, false)));
    }
    assert.equal(highSeen, 100);
  });

  it('refuses a signature that does not recover to the expected address', () => {
    const digest = secp256k1.utils.randomSecretKey();
    const compact = secp256k1.sign(digest, priv, { prehash: false });
    assert.throws(
      () => finalizeSignature(digest, compact, '0x209693Bc6afc0C5328bA36FaF03C514EF312287C'),
      (e: unknown) => e instanceof SignerFault && e.code === 'address_mismatch',
    );
  });

  it('once an address is known, still refuses a signature by another key or over another digest', () => {
    const digest = secp256k1.utils.randomSecretKey();
    // The first signature makes the address's key known; the following ones take the remembered-key path.
    finalizeSignature(digest, secp256k1.sign(digest, priv, { prehash: false }), address);
    for (let i = 0; i < 20; i++) {
      const other = secp256k1.utils.randomSecretKey();
      const d = secp256k1.utils.randomSecretKey();
      assert.throws(
        () => finalizeSignature(d, secp256k1.sign(d, other, { prehash: false }), address),
        (e: unknown) => e instanceof SignerFault && e.code === 'address_mismatch',
        'another key',
      );
      const signedElsewhere = secp256k1.sign(secp256k1.utils.randomSecretKey(), priv, { prehash: false });
      assert.throws(
        () => finalizeSignature(d, signedElsewhere, address),
        (e: unknown) => e instanceof SignerFault && e.code === 'address_mismatch',
        'another digest',
      );
    }
  });

  it('a wallet key remembered at its creation: its first signature is checked against it, another key refused', () => {
    const fresh = secp256k1.utils.randomSecretKey();
    const freshAddress = privateKeyToAddress(bytesToHex(fresh));
    rememberWalletKey(secp256k1.getPublicKey(fresh, false));
    const other = secp256k1.utils.randomSecretKey();
    const d = secp256k1.utils.randomSecretKey();
    assert.throws(
      () => finalizeSignature(d, secp256k1.sign(d, other, { prehash: false }), freshAddress),
      (e: unknown) => e instanceof SignerFault && e.code === 'address_mismatch',
    );
    for (let i = 0; i < 20; i++) {
      const digest = secp256k1.utils.randomSecretKey();
      const out = finalizeSignature(digest, secp256k1.sign(digest, fresh, { prehash: false }), freshAddress);
      assert.equal(recoverAddressOf(digest, out.signature), freshAddress);
    }
  });

  it('refuses digests and signatures of the wrong length', () => {
    assert.throws(
      () => finalizeSignature(new Uint8Array(31), new Uint8Array(64), address),
      (e: unknown) => e instanceof SignerFault && e.code === 'invalid_request',
    );
    assert.throws(
      () => finalizeSignature(new Uint8Array(32), new Uint8Array(63), address),
      (e: unknown) => e instanceof SignerFault && e.code === 'invalid_request',
    );
  });
});

describe('static invariants', () => {
  const invariants = {
    allowedTokens: [{ chainId: 84532, address: '0x036cbd53842c5426634e7929541ec2318f3dcf7e' }],
    maxValue: 1_000_000n,
    maxValiditySeconds: 3600,
    permit2: '0x000000000022d473030f116ddee9f6b43ac78ba3',
    permit2Spenders: ['0x4020a4f3b7b90cca423b9fabcc0ce57c6c240002'],
    solana: DEFAULT_SOLANA_INVARIANTS,
  };
  const now = 1_800_000_000;
  const from = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
  const good = { ...vector.message, from, value: '1000', validAfter: '0', validBefore: String(now + 600) };
  const check = (overrides: Record<string, unknown>, domain = vector.domain, address = from) =>
    assertTransferInvariants(invariants, address, domain, { ...good, ...overrides }, now);
  const refused = (fn: () => void, pattern: RegExp) =>
    assert.throws(
      fn,
      (e: unknown) => e instanceof SignerFault && e.code === 'invariant_violation' && pattern.test(e.message),
    );

  it('accepts an authorization inside every bound, at the exact edges too', () => {
    check({});
    check({ value: '1000000' }); // = max
    check({ validBefore: String(now + 3600) }); // window = max
    check({ validAfter: String(now + 100), validBefore: String(now + 100 + 3600) }); // future start, window = max
    check(
      {},
      { ...vector.domain, verifyingContract: vector.domain.verifyingContract.toUpperCase().replace('0X', '0x') },
    );
    check({}, vector.domain, from.toLowerCase());
  });
  it('refuses other tokens, chains, senders, values and windows, naming the rule', () => {
    refused(() => check({}, { ...vector.domain, chainId: 8453 }), /^allowed_token: /);
    refused(
      () => check({}, { ...vector.domain, verifyingContract: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' }),
      /^allowed_token: /,
    );
    refused(() => check({}, vector.domain, '0x209693Bc6afc0C5328bA36FaF03C514EF312287C'), /^from_is_wallet: /);
    refused(() => check({ value: '0' }), /^value_positive: /);
    refused(() => check({ value: '1000001' }), /^value_max: .*1000000/);
    refused(() => check({ validAfter: String(now + 700), validBefore: String(now + 600) }), /^window_ordered: /);
    refused(() => check({ validAfter: String(now + 600), validBefore: String(now + 600) }), /^window_ordered: /);
    refused(() => check({ validBefore: String(now) }), /^window_open: /);
    refused(() => check({ validBefore: String(now - 1) }), /^window_open: /);
    refused(() => check({ validBefore: String(now + 3601) }), /^window_max: .*3600/);
    refused(() => check({ validAfter: String(now + 100), validBefore: String(now + 100 + 3601) }), /^window_max: /);
  });
  it('refuses an authorization that starts more than 300 s ahead (window_starts_soon), as a field', () => {
    check({ validAfter: String(now + 300), validBefore: String(now + 900) }); // the clock-skew allowance, exactly
    for (const ahead of [301, 3000, 365 * 86_400])
      assert.throws(
        () => check({ validAfter: String(now + ahead), validBefore: String(now + ahead + 600) }),
        (e: unknown) =>
          e instanceof SignerFault &&
          e.code === 'invariant_violation' &&
          /^window_starts_soon: /.test(e.message) &&
          e.details.rule === 'window_starts_soon',
        `validAfter now + ${ahead}`,
      );
  });

  describe('Permit2 witness transfers', () => {
    const domain = {
      name: 'Permit2' as const,
      chainId: 84532,
      verifyingContract: '0x000000000022D473030F116dDEE9F6B43aC78BA3',
    };
    const message = {
      permitted: { token: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', amount: '1000' },
      spender: '0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002',
      nonce: '123456789',
      deadline: String(now + 600),
      witness: {
        to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
        facilitator: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        validAfter: '0',
      },
    };
    const permit = (change: (m: typeof message, d: typeof domain) => void) => {
      const m = structuredClone(message);
      const d = structuredClone(domain);
      change(m, d);
      assertPermit2Invariants(invariants, d, m, now);
    };
    it('accepts one inside every bound', () => {
      permit(() => undefined);
      permit((m) => (m.witness.validAfter = String(now + 300)));
      permit((m) => (m.permitted.amount = '1000000'));
      permit((m) => (m.deadline = String(now + 3600)));
    });
    it('refuses another Permit2, spender, token, chain, amount or window, naming the rule', () => {
      refused(
        () => permit((_m, d) => (d.verifyingContract = '0x000000000022D473030F116dDEE9F6B43aC78BA4')),
        /^permit2_contract: /,
      );
      refused(() => permit((m) => (m.spender = '0x402085c248EeA27D92E8b30b2C58ed07f9E20001')), /^allowed_spender: /);
      refused(
        () => permit((m) => (m.permitted.token = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913')),
        /^allowed_token: /,
      );
      refused(() => permit((_m, d) => (d.chainId = 8453)), /^allowed_token: /);
      refused(() => permit((m) => (m.permitted.amount = '0')), /^value_positive: /);
      refused(() => permit((m) => (m.permitted.amount = '1000001')), /^value_max: /);
      refused(() => permit((m) => (m.deadline = String(now))), /^window_open: /);
      refused(() => permit((m) => (m.deadline = String(now + 3601))), /^window_max: /);
      refused(() => permit((m) => (m.witness.validAfter = String(now + 700))), /^window_ordered: /);
      refused(
        () =>
          permit((m) => {
            m.witness.validAfter = String(now + 301);
            m.deadline = String(now + 901);
          }),
        /^window_starts_soon: /,
      );
    });
  });
});

describe('frame decoder', () => {
  it('reassembles frames split across chunks and several frames in one chunk', () => {
    const a = encodeFrame({ a: 1 });
    const b = encodeFrame({ b: 'x'.repeat(1000) });
    const all = Buffer.concat([a, b]);
    const decoder = new FrameDecoder();
    const events = [
      ...decoder.push(all.subarray(0, 3)),
      ...decoder.push(all.subarray(3, 600)),
      ...decoder.push(all.subarray(600)),
    ];
    assert.deepEqual(
      events.map((e) => (e.kind === 'frame' ? JSON.parse(e.payload.toString()) : e.kind)),
      [{ a: 1 }, { b: 'x'.repeat(1000) }],
    );
  });
  it('refuses an oversize length prefix before buffering, and empty frames', () => {
    const header = Buffer.alloc(4);
    header.writeUInt32BE(MAX_FRAME_BYTES + 1);
    assert.deepEqual(new FrameDecoder().push(header), [{ kind: 'too_large', length: MAX_FRAME_BYTES + 1 }]);
    assert.deepEqual(new FrameDecoder().push(Buffer.alloc(4)), [{ kind: 'empty' }]);
    assert.throws(() => encodeFrame({ x: 'y'.repeat(MAX_FRAME_BYTES) }), RangeError);
  });
});
