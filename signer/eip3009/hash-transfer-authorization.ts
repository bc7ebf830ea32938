/**
 * The EIP-712 digest of an EIP-3009 TransferWithAuthorization, computed by the signer itself from the
 * structured domain and message with viem's hashTypedData — never hand-rolled. Checked against the x402
 * specification's vector (test/vectors/eip3009-x402-spec-vector.json).
 *
 * Protects against: signing a digest chosen by the caller — there is no path by which one is supplied.
 * Addresses are hashed case-insensitively (EIP-55 checksums are checked before, in assert.ts).
 * The digest is EIP-712's composition, keccak256(0x1901 ‖ hashStruct(domain) ‖ hashStruct(message)), with
 * the domain separator memoised per domain (a handful of tokens; viem's hashStruct computes it; keyed by the
 * JSON of the domain's fields, so two domains never share an entry). The
 * message's hashStruct is EIP-712's encodeData for a struct of static fields — keccak256 of the ABI encoding
 * of (typeHash, from, to, value, validAfter, validBefore, nonce), written word by word (static fields only) —
 * with EIP-3009's published TRANSFER_WITH_AUTHORIZATION_TYPEHASH, instead of viem re-deriving and hashing
 * the type string on every call (half the digest's cost). Inputs were validated by the protocol schema, so
 * viem's own validation pass is not repeated; unit tests compare the result with viem's hashTypedData for
 * many random messages, the type hash with keccak256 of the type string, and the x402 vector. The two
 * keccaks run on bytes (../keccak-256.ts: OpenSSL's where Node offers it, else @noble/hashes, the implementation
 * viem wraps): viem's keccak256 of a hex string converts it to bytes and back, which cost as much as the hashing
 * (28 µs against 12 µs each).
 * Known limits: the domain name/version come from the request (Base "USD Coin", Base Sepolia "USDC");
 * a wrong one yields a signature the token contract rejects, not a loss.
 */
import { keccak256 } from '../keccak-256.js';
import { bytesToHex, getTypesForEIP712Domain, hexToBytes, type Hex } from 'viem';
import { hashStruct } from 'viem/utils';
import type { Eip712Domain, TransferWithAuthorization } from '../protocol/signer-protocol.js';

export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/**
 * keccak256("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256
 * validBefore,bytes32 nonce)"), as published in EIP-3009 and in the USDC (FiatTokenV2) contract.
 */
export const TRANSFER_WITH_AUTHORIZATION_TYPEHASH: Hex =
  '0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267';

/** The field types of TransferWithAuthorization's encodeData, type hash first, in declaration order. */
const ENCODE_DATA_TYPES = [
  { type: 'bytes32' },
  ...TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization.map((f) => ({ type: f.type })),
] as const;

/** Addresses enter EIP-712 as uint160, so case is irrelevant; lower-case keeps viem's checksum check quiet. */
const lower = (address: string) => address.toLowerCase() as Hex;

const MAX_DOMAINS = 1024;
type DomainInput = { name: string; version?: string; chainId: number; verifyingContract: string };
/** Per domain, its EIP-712 separator (viem's hashStruct of EIP712Domain) as bytes, computed once. */
const separators = new Map<string, Uint8Array>();

/**
 * The cache key of a domain: the JSON of its fields as a tuple, so that no two domains share one — a joined
 * string would let ("a\0b", "c") and ("a", "b\0c") meet, and an absent version meet an empty one.
 */
function domainKey(domain: DomainInput): string {
  return JSON.stringify([domain.name, domain.version ?? null, domain.chainId, domain.verifyingContract.toLowerCase()]);
}

function separatorOf(domain: DomainInput): Uint8Array {
  const key = domainKey(domain);
  let separator = separators.get(key);
  if (separator === undefined) {
    const data = { ...domain, verifyingContract: lower(domain.verifyingContract) };
    separator = hexToBytes(
      hashStruct({
        data,
        primaryType: 'EIP712Domain',
        types: { EIP712Domain: getTypesForEIP712Domain({ domain: data }) },
      }),
    );
    if (separators.size >= MAX_DOMAINS) separators.clear();
    separators.set(key, separator);
  }
  return separator;
}

const TYPEHASH_BYTES = hexToBytes(TRANSFER_WITH_AUTHORIZATION_TYPEHASH);
const UINT256_LIMIT = 1n << 256n;

/** Writes `hex` (0x + `bytes` × 2 hex digits) right-aligned in the 32-byte word at `word`; anything else throws. */
function putHex(out: Buffer, word: number, hex: string, bytes: number): void {
  const written =
    hex.startsWith('0x') && hex.length === 2 + bytes * 2 ? out.write(hex.slice(2), word * 32 + 32 - bytes, 'hex') : 0;
  if (written !== bytes) throw new RangeError(`expected 0x and ${bytes * 2} hex digits`);
}

function putUint256(out: Buffer, word: number, value: bigint): void {
  if (value < 0n || value >= UINT256_LIMIT) throw new RangeError('expected a uint256');
  putHex(out, word, `0x${value.toString(16).padStart(64, '0')}`, 32);
}

/**
 * The digest as 32 bytes, as the backend signs it. The encodeData of seven static fields is written word by word
 * (ABI encoding of static types: each value right-aligned in 32 bytes), which is what viem's encodeAbiParameters
 * returns as hex — without the hex round trip, which cost as much as the two hashes (unit tests compare both).
 */
export function transferAuthorizationDigest(domain: Eip712Domain, message: TransferWithAuthorization): Uint8Array {
  const data = Buffer.alloc(32 * ENCODE_DATA_TYPES.length);
  data.set(TYPEHASH_BYTES, 0);
  putHex(data, 1, message.from, 20);
  putHex(data, 2, message.to, 20);
  putUint256(data, 3, BigInt(message.value));
  putUint256(data, 4, BigInt(message.validAfter));
  putUint256(data, 5, BigInt(message.validBefore));
  putHex(data, 6, message.nonce, 32);
  return typedDataDigest(domain, keccak256(data));
}

/** EIP-712's digest of a message whose struct hash is given: keccak256(0x19 0x01 ‖ domainSeparator ‖ structHash), as 32 bytes. */
export function typedDataDigest(domain: DomainInput, structHash: Uint8Array): Uint8Array {
  const data = new Uint8Array(66);
  data[0] = 0x19;
  data[1] = 0x01;
  data.set(separatorOf(domain), 2);
  data.set(structHash, 34);
  return keccak256(data);
}

/** The digest as 0x hex. */
export function hashTransferAuthorization(domain: Eip712Domain, message: TransferWithAuthorization): Hex {
  return bytesToHex(transferAuthorizationDigest(domain, message));
}
