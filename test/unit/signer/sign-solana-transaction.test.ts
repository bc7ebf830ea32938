/**
 * `sign_solana_transaction` in the signer service with an in-memory Ed25519 backend: a valid x402 `exact`
 * message is signed (base58, verifying under the wallet's key, over the exact message bytes) and its amount
 * counted in the wallet's ceilings; the per-signature maximum and the ceilings refuse before the backend is
 * asked; a signature by the wrong key never leaves and gives its ceilings back; a backend without Ed25519
 * refuses; a key of the other curve is tied to the account before its curve is named (`key_not_found` when it is not
 * the account's); the protocol schema bounds every field.
 */
import assert from 'node:assert/strict';
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { getAddressDecoder, getBase58Encoder } from '@solana/kit';
import { bytesToHex } from 'viem';
import type { KeyBackend } from '../../../signer/backends/key-backend.js';
import { DEFAULT_SOLANA_INVARIANTS } from '../../../signer/config/solana-invariants.js';
import { WalletLimiter } from '../../../signer/limits/wallet-limiter.js';
import {
  signerRequestSchema,
  signSolanaTransactionResultSchema,
  type SignerLimitName,
  type SignSolanaTransactionParams,
} from '../../../signer/protocol/signer-protocol.js';
import { SignerService } from '../../../signer/signer-service.js';
import { SignerFault } from '../../../signer/signer-error.js';
import { DEVNET, paymentMessage, PAY_TO } from '../../builders/solana-payment-message.js';

const newKey = () => {
  const secret = ed25519.utils.randomSecretKey();
  return { secret, address: getAddressDecoder().decode(ed25519.getPublicKey(secret)) };
};

/** A secp256k1 wallet key of the account, and one of another account (or none): each refused by Ed25519 signing. */
const SECP_OF_ACCOUNT = 'p11:test:secp-of-account';
const SECP_OF_ANOTHER = 'p11:test:secp-of-another';

/**
 * Wallet references → secret keys; counts its signatures (Ed25519) and its secp256k1 probes. A reference of the other
 * curve is refused as real backends refuse it, before its account is asked (`invariant_violation`, no rule); signing a
 * digest with it answers as they do: signed when it is the account's key, `key_not_found` when it is not.
 */
function fakeBackend(keys: Record<string, Uint8Array>, withEd25519 = true) {
  const backend = {
    kind: 'pkcs11' as const,
    signed: 0,
    probed: 0,
    health: async () => ({ backend: 'pkcs11' as const }),
    createAccountKey: async () => 'p11:test:account',
    createWalletKey: async () => assert.fail('not used'),
    signDigest: async (account: string, wallet: string, digest: Uint8Array) => {
      assert.equal(digest.length, 32);
      backend.probed++;
      const ofAccount = account === 'p11:test:account' && (wallet === SECP_OF_ACCOUNT || !withEd25519);
      if (!ofAccount) throw new SignerFault('key_not_found', 'no such wallet key of this account');
      return new Uint8Array(64);
    },
    destroyWalletKey: async () => undefined,
    walletKeyId: (ref: string) => ref,
    isDestroyed: () => false,
    close: async () => undefined,
    // Without Ed25519 keys, the backend refuses every reference as real backends refuse a key of the other curve.
    signEd25519: async (_account: string, wallet: string, message: Uint8Array) => {
      if (!withEd25519 || wallet === SECP_OF_ACCOUNT || wallet === SECP_OF_ANOTHER)
        throw new SignerFault('invariant_violation', 'wallet_key_ref names a key of another curve than ed25519');
      backend.signed++;
      return ed25519.sign(message, keys[wallet]!);
    },
  };
  return backend;
}

const WALLET = newKey();
const STRANGER = newKey();
const MAX_PER_SIGNATURE = 50_000n;

function service(options: { hourMax?: bigint; withEd25519?: boolean } = {}) {
  const backend = fakeBackend(
    { 'p11:test:wallet': WALLET.secret, 'p11:test:stranger': STRANGER.secret },
    options.withEd25519 ?? true,
  );
  const refusedLimits: SignerLimitName[] = [];
  const wallets = new WalletLimiter([
    { name: 'wallet_amount_hour', measure: 'amount', windowSeconds: 3600, max: options.hourMax ?? 1_000_000n },
  ]);
  const signer = new SignerService({
    backend: backend as unknown as KeyBackend,
    invariants: {
      allowedTokens: [],
      maxValue: MAX_PER_SIGNATURE,
      maxValiditySeconds: 3600,
      permit2: '0x000000000022d473030f116ddee9f6b43ac78ba3',
      permit2Spenders: [],
      solana: DEFAULT_SOLANA_INVARIANTS,
    },
    limits: { wallets, refused: (l) => refusedLimits.push(l) },
  });
  return { backend, signer, refusedLimits };
}

async function params(amount = 10_000n, over: Partial<SignSolanaTransactionParams> = {}) {
  const message = await paymentMessage({ wallet: WALLET.address, amount });
  return {
    account_key_ref: 'p11:test:account',
    wallet_key_ref: 'p11:test:wallet',
    address: WALLET.address,
    network: DEVNET,
    message: Buffer.from(message).toString('base64'),
    pay_to: PAY_TO,
    ...over,
  };
}

const sign = (signer: SignerService, p: SignSolanaTransactionParams) =>
  signer.handle(signerRequestSchema.parse({ v: 1, id: 's', method: 'sign_solana_transaction', params: p }));

const fault = (code: string, rule?: string) => (e: unknown) => {
  assert.ok(e instanceof SignerFault, String(e));
  assert.equal(e.code, code, e.message);
  if (rule) assert.equal(e.details.rule, rule);
  return true;
};

describe('sign_solana_transaction', () => {
  it('signs the message bytes with the wallet key, in base58, and names the message hash', async () => {
    const { signer, backend } = service();
    const p = await params();
    const result = signSolanaTransactionResultSchema.parse(await sign(signer, p));
    const message = Buffer.from(p.message, 'base64');
    const signature = new Uint8Array(getBase58Encoder().encode(result.signature));
    assert.equal(signature.length, 64);
    assert.ok(ed25519.verify(signature, message, new Uint8Array(getBase58Encoder().encode(WALLET.address))));
    assert.equal(result.message_hash, bytesToHex(sha256(message)));
    assert.equal(backend.signed, 1);
  });

  it('refuses a message that is not the exact shape before the backend or the ceilings', async () => {
    const { signer, backend } = service({ hourMax: 10_000n });
    const p = await params(10_000n, { pay_to: STRANGER.address });
    await assert.rejects(sign(signer, p), fault('invariant_violation', 'transfer_destination'));
    const other = await paymentMessage({ wallet: STRANGER.address });
    await assert.rejects(
      sign(signer, await params(10_000n, { message: Buffer.from(other).toString('base64') })),
      fault('invariant_violation', 'wallet_not_signer'),
    );
    assert.equal(backend.signed, 0);
    await sign(signer, await params(10_000n)); // the whole hour's ceiling is still there
  });

  it('refuses above the per-signature maximum and a zero amount, naming the limit', async () => {
    const { signer, backend, refusedLimits } = service();
    await assert.rejects(sign(signer, await params(MAX_PER_SIGNATURE + 1n)), (e: unknown) => {
      assert.ok(e instanceof SignerFault && e.code === 'invariant_violation');
      assert.deepEqual(e.details, { rule: 'value_max', limit: 'per_signature', max: String(MAX_PER_SIGNATURE) });
      return true;
    });
    assert.deepEqual(refusedLimits, ['per_signature']);
    await assert.rejects(sign(signer, await params(0n)), fault('invariant_violation', 'value_positive'));
    await sign(signer, await params(MAX_PER_SIGNATURE));
    assert.equal(backend.signed, 1);
  });

  it("counts the amount in the wallet's rolling ceilings", async () => {
    const { signer, backend, refusedLimits } = service({ hourMax: 25_000n });
    await sign(signer, await params(10_000n));
    await sign(signer, await params(10_000n));
    await assert.rejects(sign(signer, await params(10_000n)), (e: unknown) => {
      assert.ok(e instanceof SignerFault && e.code === 'limit_exceeded');
      assert.equal(e.details.limit, 'wallet_amount_hour');
      assert.equal(e.details.headroom, '5000');
      return true;
    });
    assert.deepEqual(refusedLimits, ['wallet_amount_hour']);
    assert.equal(backend.signed, 2);
  });

  it('never returns a signature by another key, and gives its ceilings back', async () => {
    const { signer, backend } = service({ hourMax: 10_000n });
    await assert.rejects(
      sign(signer, await params(10_000n, { wallet_key_ref: 'p11:test:stranger' })),
      fault('address_mismatch'),
    );
    assert.equal(backend.signed, 1);
    await sign(signer, await params(10_000n));
  });

  it('refuses on a backend without Ed25519, and gives the ceilings back', async () => {
    const { signer } = service({ withEd25519: false, hourMax: 10_000n });
    await assert.rejects(sign(signer, await params()), fault('invariant_violation', 'key_curve'));
    await assert.rejects(sign(signer, await params()), fault('invariant_violation', 'key_curve'));
  });

  it("ties a key of the other curve to the account before naming its curve: another account's is key_not_found", async () => {
    const { signer, backend } = service({ hourMax: 10_000n });
    await assert.rejects(
      sign(signer, await params(10_000n, { wallet_key_ref: SECP_OF_ANOTHER })),
      (e: unknown) => fault('key_not_found')(e) && e instanceof SignerFault && e.details.rule === undefined,
    );
    await assert.rejects(
      sign(
        signer,
        await params(10_000n, { account_key_ref: 'p11:test:other-account', wallet_key_ref: SECP_OF_ACCOUNT }),
      ),
      fault('key_not_found'),
    );
    // The account's own secp256k1 key: its curve is the refusal, with its rule.
    await assert.rejects(
      sign(signer, await params(10_000n, { wallet_key_ref: SECP_OF_ACCOUNT })),
      fault('invariant_violation', 'key_curve'),
    );
    assert.equal(backend.probed, 3, 'one probe per reference of the other curve');
    assert.equal(backend.signed, 0);
    await sign(signer, await params(10_000n)); // the whole hour's ceiling is still there
  });

  it('refuses an address or pay_to that is base58 but not 32 bytes, at the schema', async () => {
    const { signer } = service();
    const a = await params(1n, { address: 'z'.repeat(44) });
    await assert.rejects(async () => sign(signer, a), /32 bytes/);
    const b = await params(1n, { pay_to: 'z'.repeat(44) });
    await assert.rejects(async () => sign(signer, b), /32 bytes/);
  });

  it('bounds every field at the schema', async () => {
    const good = await params();
    const parses = (over: Record<string, unknown>) =>
      signerRequestSchema.safeParse({ v: 1, id: 's', method: 'sign_solana_transaction', params: { ...good, ...over } })
        .success;
    assert.ok(parses({}));
    assert.ok(parses({ pay_to: undefined }));
    const tooLong = Buffer.alloc(1233).toString('base64');
    const longest = Buffer.alloc(1232).toString('base64');
    assert.ok(parses({ message: longest }));
    for (const message of [tooLong, '', 'AAA', 'AA=A', 'AAAA\n', 'AAAA====', '****', 'A'.repeat(10_000), 1, null])
      assert.equal(parses({ message }), false, `message ${String(message).slice(0, 20)}`);
    for (const address of ['0x857b06519E91e3A54538791bDbb0E22373e36b66', 'O'.repeat(32), 'short', 'A'.repeat(45), ''])
      assert.equal(parses({ address }), false, `address ${address}`);
    for (const network of ['solana:devnet', 'eip155:8453', 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1x', 'solana:'])
      assert.equal(parses({ network }), false, `network ${network}`);
    assert.equal(parses({ extra: 1 }), false);
    assert.equal(parses({ pay_to: 'not base58!' }), false);
  });
});
