/**
 * The EIP-712 digest of an EIP-3009 TransferWithAuthorization, computed by the signer itself from the
 * structured domain and message with viem's hashTypedData — never hand-rolled. Checked against the x402
 * specification's vector (test/vectors/eip3009-x402-spec-vector.json).
 *
 * Protects against: signing a digest chosen by the caller — there is no path by which one is supplied.
 * Addresses are hashed case-insensitively (EIP-55 checksums are checked before, in assert.ts).
 * The digest is viem's EIP-712 composition, keccak256(0x1901 ‖ hashStruct(domain) ‖ hashStruct(message)),
 * with the domain separator memoised per domain (a handful of tokens): it is most of the hashing work.
 * Inputs were validated by the protocol schema, so viem's own validation pass is not repeated; unit tests
 * compare the result with viem's hashTypedData and the x402 vector.
 * Known limits: the domain name/version come from the request (Base "USD Coin", Base Sepolia "USDC");
 * a wrong one yields a signature the token contract rejects, not a loss.
 */
import { concat, getTypesForEIP712Domain, keccak256, type Hex } from 'viem';
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

/** Addresses enter EIP-712 as uint160, so case is irrelevant; lower-case keeps viem's checksum check quiet. */
const lower = (address: string) => address.toLowerCase() as Hex;

const MAX_DOMAINS = 1024;
const separators = new Map<string, Hex>();

/** The EIP-712 domain separator (viem's hashStruct of EIP712Domain), memoised per domain. */
export function domainSeparator(domain: { name: string; version?: string; chainId: number; verifyingContract: string }): Hex {
  const key = `${domain.name}\u0000${domain.version ?? ''}\u0000${domain.chainId}\u0000${domain.verifyingContract.toLowerCase()}`;
  let separator = separators.get(key);
  if (separator === undefined) {
    const data = { ...domain, verifyingContract: lower(domain.verifyingContract) };
    separator = hashStruct({ data, primaryType: 'EIP712Domain', types: { EIP712Domain: getTypesForEIP712Domain({ domain: data }) } });
    if (separators.size >= MAX_DOMAINS) separators.clear();
    separators.set(key, separator);
  }
  return separator;
}

export function hashTransferAuthorization(domain: Eip712Domain, message: TransferWithAuthorization): Hex {
  const struct = hashStruct({
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    data: {
      from: lower(message.from),
      to: lower(message.to),
      value: BigInt(message.value),
      validAfter: BigInt(message.validAfter),
      validBefore: BigInt(message.validBefore),
      nonce: message.nonce as Hex,
    },
  });
  return keccak256(concat(['0x1901', domainSeparator(domain), struct]));
}
