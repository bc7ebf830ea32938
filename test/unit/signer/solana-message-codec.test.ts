/**
 * The signer's Solana message codec and key spellings (signer/protocol/solana-message-codec.ts,
 * signer/protocol/solana-key.ts) against @solana/kit's own: the signer must read every message exactly as kit
 * reads it — the same accounts, blockhash, instructions and lookups, or a refusal where kit refuses — and write
 * back exactly kit's bytes, since its canonical-form check compares that writing with the bytes it signs.
 * Held over messages kit compiled (legacy and v0, with and without a memo, keys with leading zero bytes, lookup
 * tables), every truncation and single-byte change of them, bytes appended, and random bytes; and the spellings
 * over keys with every count of leading zero bytes and over strings that are no key.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  getAddressDecoder,
  getAddressEncoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  isAddress,
  type Address,
} from '@solana/kit';
import { isSolanaKey, keyBytes, keySpelling } from '../../../signer/protocol/solana-key.js';
import { solanaMessageDecoder, solanaMessageEncoder } from '../../../signer/protocol/solana-message-codec.js';
import { compiledPayment, encodeCompiled, paymentMessage } from '../../builders/solana-payment-message.js';

const kitDecoder = getCompiledTransactionMessageDecoder();
const kitEncoder = getCompiledTransactionMessageEncoder();
const kitAddress = getAddressDecoder();
const kitAddressBytes = getAddressEncoder();

/** A key of `zeros` leading zero bytes, the rest random (never zero where it starts). */
function keyWithZeros(zeros: number): Uint8Array {
  const key = new Uint8Array(randomBytes(32));
  key.fill(0, 0, zeros);
  if (zeros < 32 && key[zeros] === 0) key[zeros] = 1;
  return key;
}

type Outcome = { threw: true } | { threw: false; value: unknown; written: Uint8Array | 'threw' };

function outcome(decode: (b: Uint8Array) => unknown, encode: (m: never) => Uint8Array, bytes: Uint8Array): Outcome {
  let value: unknown;
  try {
    value = decode(bytes);
  } catch {
    return { threw: true };
  }
  let written: Uint8Array | 'threw';
  try {
    written = new Uint8Array(encode(value as never));
  } catch {
    written = 'threw';
  }
  return { threw: false, value, written };
}

/** Both codecs read `bytes` alike (or both refuse them) and write what they read back alike. */
function sameAsKit(bytes: Uint8Array, what: string): void {
  const kit = outcome(
    (b) => kitDecoder.decode(b),
    (m) => kitEncoder.encode(m) as Uint8Array,
    bytes,
  );
  const ours = outcome(
    (b) => solanaMessageDecoder.decode(b),
    (m) => solanaMessageEncoder.encode(m) as Uint8Array,
    bytes,
  );
  assert.deepEqual(ours, kit, what);
}

async function compiledMessages(): Promise<Array<[string, Uint8Array]>> {
  const wallet = (zeros: number) => kitAddress.decode(keyWithZeros(zeros));
  const out: Array<[string, Uint8Array]> = [];
  for (const version of [0, 'legacy'] as const) {
    out.push([`${version}, memo`, await paymentMessage({ wallet: wallet(0), version })]);
    out.push([`${version}, no memo`, await paymentMessage({ wallet: wallet(0), version, memo: undefined })]);
    out.push([
      `${version}, a wallet and fee payer with leading zero bytes`,
      await paymentMessage({ wallet: wallet(3), feePayer: wallet(1), version }),
    ]);
  }
  // A v0 message that loads accounts from lookup tables (the signer refuses it; both codecs must read it alike).
  const compiled = await compiledPayment({ wallet: wallet(0) });
  const lookups = [
    { lookupTableAddress: wallet(2), writableIndexes: [0, 7], readonlyIndexes: [255] },
    { lookupTableAddress: wallet(0), writableIndexes: [], readonlyIndexes: [1, 2, 3] },
  ];
  out.push(['v0, two lookup tables', encodeCompiled({ ...compiled, addressTableLookups: lookups } as never)]);
  out.push([
    'v0, an all-zero blockhash',
    encodeCompiled({ ...compiled, lifetimeToken: kitAddress.decode(new Uint8Array(32)) } as never),
  ]);
  return out;
}

describe('the signer’s Solana message codec, held to @solana/kit’s', () => {
  it('spells every key as kit does, with any count of leading zero bytes, and reads every spelling back', () => {
    for (let zeros = 0; zeros <= 32; zeros++) {
      for (let n = 0; n < 8; n++) {
        const key = keyWithZeros(zeros);
        const spelled = keySpelling(key);
        assert.equal(spelled, kitAddress.decode(key), `${zeros} zeros`);
        assert.deepEqual(keyBytes(spelled), new Uint8Array(kitAddressBytes.encode(spelled)));
        assert.equal(isSolanaKey(spelled), true);
      }
    }
    assert.equal(keySpelling(new Uint8Array(32).fill(255)), kitAddress.decode(new Uint8Array(32).fill(255)));
  });

  it('accepts as a key exactly the strings kit accepts', () => {
    const key = keySpelling(keyWithZeros(0));
    const candidates = [
      '',
      '1',
      '1'.repeat(31),
      '1'.repeat(32),
      '1'.repeat(33),
      key,
      key.slice(1),
      key + '1',
      '1' + key,
      key.slice(0, -1) + '0',
      key.slice(0, -1) + 'O',
      key.slice(0, -1) + 'I',
      key.slice(0, -1) + 'l',
      key + ' ',
      'z'.repeat(44),
      'z'.repeat(45),
      '2'.repeat(44),
      keySpelling(new Uint8Array(32).fill(255)),
      keySpelling(new Uint8Array(randomBytes(31))),
      keySpelling(new Uint8Array(randomBytes(33))),
    ];
    for (let n = 0; n < 200; n++) candidates.push(keySpelling(new Uint8Array(randomBytes(28 + (n % 8)))));
    for (const c of candidates) assert.equal(isSolanaKey(c), isAddress(c), JSON.stringify(c));
    assert.throws(() => keyBytes(keySpelling(new Uint8Array(randomBytes(31)))), RangeError);
  });

  it('reads and writes every compiled message as kit does', async () => {
    for (const [what, bytes] of await compiledMessages()) {
      sameAsKit(bytes, what);
      const read = solanaMessageDecoder.decode(bytes);
      assert.deepEqual(new Uint8Array(solanaMessageEncoder.encode(read)), bytes, what);
    }
  });

  it('reads every truncation, single-byte change and longer form of them as kit does', async () => {
    for (const [what, bytes] of await compiledMessages()) {
      for (let end = 0; end < bytes.length; end++) sameAsKit(bytes.subarray(0, end), `${what}, first ${end} bytes`);
      for (let at = 0; at < bytes.length; at++) {
        for (const change of [0x00, 0x80, 0xff, bytes[at]! ^ 0x40]) {
          const changed = new Uint8Array(bytes);
          changed[at] = change;
          sameAsKit(changed, `${what}, byte ${at} = ${change}`);
        }
      }
      for (const tail of [[0], [1], [0x80, 0], [0xff, 0xff, 0xff]])
        sameAsKit(new Uint8Array([...bytes, ...tail]), `${what} + ${tail.join(',')}`);
    }
  });

  it('reads random bytes as kit does', () => {
    for (let n = 0; n < 2_000; n++) {
      const bytes = new Uint8Array(randomBytes(n % 300));
      // Half of them start like a message of few accounts, to reach past the header.
      if (n % 2 === 0 && bytes.length > 4) bytes.set([0x80, 2, 0, 1, 1 + (n % 4)]);
      sameAsKit(bytes, `random ${n}`);
    }
  });

  it('does not write a key that is not one', async () => {
    const read = solanaMessageDecoder.decode(await paymentMessage({ wallet: keySpelling(keyWithZeros(0)) }));
    const bad = { ...read, staticAccounts: [...read.staticAccounts.slice(1), '1111' as Address] };
    assert.throws(() => solanaMessageEncoder.encode(bad));
  });
});
