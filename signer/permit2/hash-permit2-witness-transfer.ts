/**
 * The EIP-712 digest of a Permit2 `PermitWitnessTransferFrom` carrying the x402 `upto` witness
 * `Witness(address to,address facilitator,uint256 validAfter)`, computed by the signer itself from the
 * structured domain and message with viem's EIP-712 struct hashing (memoised domain separator, as for
 * EIP-3009) — never hand-rolled. The types are the ones
 * the official x402 `upto` client signs and the x402 upto proxy passes to Permit2 as its witness type
 * string; the digest is checked against `@x402/evm`'s own types in the unit tests.
 *
 * Protects against: signing a digest chosen by the caller (there is no such path), and any other Permit2
 * witness shape — only this one type is known here.
 * Known limits: Permit2's domain carries no version; a wrong chain id or Permit2 address yields a
 * signature that verifies nowhere (assert.ts pins the address).
 */
import { bytesToHex, hexToBytes, type Hex } from 'viem';
import { hashStruct } from 'viem/utils';
import { typedDataDigest } from '../eip3009/hash-transfer-authorization.js';
import type { Permit2Domain, Permit2WitnessTransfer } from '../protocol/signer-protocol.js';

export const UPTO_PERMIT2_WITNESS_TYPES = {
  PermitWitnessTransferFrom: [
    { name: 'permitted', type: 'TokenPermissions' },
    { name: 'spender', type: 'address' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
    { name: 'witness', type: 'Witness' },
  ],
  TokenPermissions: [
    { name: 'token', type: 'address' },
    { name: 'amount', type: 'uint256' },
  ],
  Witness: [
    { name: 'to', type: 'address' },
    { name: 'facilitator', type: 'address' },
    { name: 'validAfter', type: 'uint256' },
  ],
} as const;

/** Addresses enter EIP-712 as uint160, so case is irrelevant; lower-case keeps viem's checksum check quiet. */
const lower = (address: string) => address.toLowerCase() as Hex;

/** The digest as 32 bytes, as the backend signs it. */
export function permit2WitnessTransferDigest(domain: Permit2Domain, message: Permit2WitnessTransfer): Uint8Array {
  const struct = hashStruct({
    types: UPTO_PERMIT2_WITNESS_TYPES,
    primaryType: 'PermitWitnessTransferFrom',
    data: {
      permitted: { token: lower(message.permitted.token), amount: BigInt(message.permitted.amount) },
      spender: lower(message.spender),
      nonce: BigInt(message.nonce),
      deadline: BigInt(message.deadline),
      witness: {
        to: lower(message.witness.to),
        facilitator: lower(message.witness.facilitator),
        validAfter: BigInt(message.witness.validAfter),
      },
    },
  });
  return typedDataDigest(
    { name: domain.name, chainId: domain.chainId, verifyingContract: domain.verifyingContract },
    hexToBytes(struct),
  );
}

/** The digest as 0x hex. */
export function hashPermit2WitnessTransfer(domain: Permit2Domain, message: Permit2WitnessTransfer): Hex {
  return bytesToHex(permit2WitnessTransferDigest(domain, message));
}
