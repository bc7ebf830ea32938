/**
 * The bytes of a Solana transaction message, as `sign_solana_transaction` carries them: the codec the API writes
 * a payment's message with (src/api/pay/solana/build-exact-message.ts) and reads it back with to assemble the
 * wire transaction, and the signer reads it with and re-encodes it with to hold it to its one canonical form
 * (../solana/decode-solana-message.ts): @solana/kit's compiled-message layout — legacy and v0, the message
 * header, the static accounts, the lifetime token, the instructions and the address table lookups — composed from
 * kit's own codec parts exactly as kit composes `getCompiledTransactionMessageDecoder` and
 * `getCompiledTransactionMessageEncoder`, with one part changed: a 32-byte key (an account, the blockhash, a lookup
 * table) is spelled in base58 by @scure/base (./solana-key.ts). Kit converts through one BigInt per key, twice
 * when it encodes (7 µs a key read, 18 µs a key written here, against 1.5 and 0.5): a third of the signer's CPU
 * for a Solana payment, and a third of the API's (docs/performance.md, "Solana messages read and written without
 * BigInt base58").
 *
 * Defends: a message read differently from the way kit reads it — test/unit/signer/solana-message-codec.test.ts
 * holds this codec equal to kit's, both ways, over messages compiled by kit (keys with leading zero bytes
 * included), every truncation and single-byte change of them, and random bytes; and a key
 * written back that is not the one read (a base58 spelling that is not exactly 32 bytes is refused).
 * Does not defend: what the message does (../solana/check-x402-exact-message.ts).
 */
import {
  addDecoderSizePrefix,
  addEncoderSizePrefix,
  createEncoder,
  fixDecoderSize,
  fixEncoderSize,
  getArrayDecoder,
  getArrayEncoder,
  getBytesDecoder,
  getBytesEncoder,
  getConstantEncoder,
  getShortU16Decoder,
  getShortU16Encoder,
  getStructDecoder,
  getStructEncoder,
  getTransactionVersionDecoder,
  getTransactionVersionEncoder,
  getU8Decoder,
  getU8Encoder,
  getUnionEncoder,
  transformDecoder,
  transformEncoder,
  type Address,
  type CompiledTransactionMessage,
  type CompiledTransactionMessageWithLifetime,
  type Decoder,
  type Encoder,
  type VariableSizeEncoder,
} from '@solana/kit';
import { keyBytes, keySpelling } from './solana-key.js';

export type SolanaMessage = CompiledTransactionMessage & CompiledTransactionMessageWithLifetime;

const keyDecoder: Decoder<Address> = transformDecoder(fixDecoderSize(getBytesDecoder(), 32), (b) =>
  keySpelling(b as Uint8Array),
);
const keyEncoder: Encoder<string> = transformEncoder(fixEncoderSize(getBytesEncoder(), 32), keyBytes);
const u8Decoder = getU8Decoder();
const u8Encoder = getU8Encoder();
const indexesDecoder = getArrayDecoder(u8Decoder, { size: getShortU16Decoder() });
const indexesEncoder = getArrayEncoder(u8Encoder, { size: getShortU16Encoder() });

const headerDecoder = getStructDecoder([
  ['numSignerAccounts', u8Decoder],
  ['numReadonlySignerAccounts', u8Decoder],
  ['numReadonlyNonSignerAccounts', u8Decoder],
]);
const headerEncoder = getStructEncoder([
  ['numSignerAccounts', u8Encoder],
  ['numReadonlySignerAccounts', u8Encoder],
  ['numReadonlyNonSignerAccounts', u8Encoder],
]);

type Instruction = SolanaMessage['instructions'][number];

/** An instruction, without its account indices or data when they are empty (as kit's decoder leaves them out). */
const instructionDecoder: Decoder<Instruction> = transformDecoder(
  getStructDecoder([
    ['programAddressIndex', u8Decoder],
    ['accountIndices', indexesDecoder],
    ['data', addDecoderSizePrefix(getBytesDecoder(), getShortU16Decoder())],
  ]),
  ({ accountIndices, data, ...rest }) => ({
    ...rest,
    ...(accountIndices.length ? { accountIndices } : null),
    ...((data as Uint8Array).byteLength ? { data: data as Uint8Array } : null),
  }),
);
const instructionEncoder: Encoder<Instruction> = transformEncoder(
  getStructEncoder([
    ['programAddressIndex', u8Encoder],
    ['accountIndices', indexesEncoder],
    ['data', addEncoderSizePrefix(getBytesEncoder(), getShortU16Encoder())],
  ]),
  (ix: Instruction) => ({ ...ix, accountIndices: ix.accountIndices ?? [], data: ix.data ?? new Uint8Array(0) }),
);

const lookupsDecoder = getArrayDecoder(
  getStructDecoder([
    ['lookupTableAddress', keyDecoder],
    ['writableIndexes', indexesDecoder],
    ['readonlyIndexes', indexesDecoder],
  ]),
  { size: getShortU16Decoder() },
);
const lookupsEncoder = getArrayEncoder(
  getStructEncoder([
    ['lookupTableAddress', keyEncoder],
    ['writableIndexes', indexesEncoder],
    ['readonlyIndexes', indexesEncoder],
  ]),
  { size: getShortU16Encoder() },
);

const messageDecoder = transformDecoder(
  getStructDecoder([
    ['version', getTransactionVersionDecoder()],
    ['header', headerDecoder],
    ['staticAccounts', getArrayDecoder(keyDecoder, { size: getShortU16Decoder() })],
    ['lifetimeToken', keyDecoder],
    ['instructions', getArrayDecoder(instructionDecoder, { size: getShortU16Decoder() })],
    ['addressTableLookups', lookupsDecoder],
  ]),
  ({ addressTableLookups, ...rest }) =>
    rest.version === 'legacy' || !addressTableLookups.length ? rest : { ...rest, addressTableLookups },
);

const prelude = [
  ['version', getTransactionVersionEncoder()],
  ['header', headerEncoder],
  ['staticAccounts', getArrayEncoder(keyEncoder, { size: getShortU16Encoder() })],
  // A message without a lifetime token is written with 32 zero bytes in its place, as kit writes it.
  [
    'lifetimeToken',
    getUnionEncoder([getConstantEncoder(new Uint8Array(32)), keyEncoder], (v) => (v === undefined ? 0 : 1)),
  ],
  ['instructions', getArrayEncoder(instructionEncoder, { size: getShortU16Encoder() })],
] as const;
// Kit's message types are readonly where its struct codecs take mutable values: the two are the same shape.
const legacyEncoder = getStructEncoder([...prelude]) as unknown as VariableSizeEncoder<SolanaMessage>;
const versionedEncoder = getStructEncoder([
  ...prelude,
  ['addressTableLookups', lookupsEncoder],
]) as unknown as VariableSizeEncoder<SolanaMessage>;
/** A v0 message with its lookups written even when it has none (an empty list), as kit writes it. */
const withLookups = (m: SolanaMessage): SolanaMessage =>
  ({
    ...m,
    addressTableLookups: ('addressTableLookups' in m ? m.addressTableLookups : undefined) ?? [],
  }) as SolanaMessage;

/** Reads a compiled message (throws on bytes kit's decoder would throw on). */
export const solanaMessageDecoder = messageDecoder as unknown as Decoder<SolanaMessage>;

/** Writes a compiled message as kit's encoder writes it. */
export const solanaMessageEncoder: Encoder<SolanaMessage> = createEncoder({
  getSizeFromValue: (m: SolanaMessage) =>
    m.version === 'legacy' ? legacyEncoder.getSizeFromValue(m) : versionedEncoder.getSizeFromValue(withLookups(m)),
  write: (m: SolanaMessage, bytes, offset) =>
    m.version === 'legacy'
      ? legacyEncoder.write(m, bytes, offset)
      : versionedEncoder.write(withLookups(m), bytes, offset),
});
