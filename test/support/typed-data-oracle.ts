/**
 * The tests' own EIP-712 oracle: a struct as its EIP publishes it (the `encodeType` string, e.g. EIP-3009's
 * `TransferWithAuthorization(address from,…)`), and from it the typed data viem's recoverTypedDataAddress
 * and verifyTypedData take, for a message as the API and the signer protocol carry it (decimal strings for
 * integers, hex for addresses and bytes).
 * What it defends: the tests' independence from what they check. Nothing here comes from signer/, so a
 * signer hashing another type name, field, field order or field type signs something that recovers to
 * another address, and the test that recovers it fails.
 * What it does not: nested structs or arrays (no test recovers a Permit2 witness transfer this way), and it
 * checks nothing itself: the caller compares the address recovered (or the verification) with the wallet's.
 */
import { getAddress, type Hex, type TypedDataDefinition, type TypedDataParameter } from 'viem';

/** EIP-3009, as in the USDC (FiatTokenV2) contract. */
export const TRANSFER_WITH_AUTHORIZATION =
  'TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)';
/** EIP-2612. */
export const PERMIT = 'Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)';

/** A token's EIP-712 domain as the tests hold it (the verifying contract in any letter case). */
export interface TokenDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: string;
}

/** The struct's name and its fields, read from its `encodeType` string. */
function parseEncodeType(encodeType: string): { primaryType: string; fields: TypedDataParameter[] } {
  const parts = /^([A-Za-z]\w*)\(([^()]*)\)$/.exec(encodeType);
  if (!parts) throw new Error(`not a flat EIP-712 encodeType: ${encodeType}`);
  const fields = parts[2]!.split(',').map((field) => {
    const [type, name, ...rest] = field.split(' ');
    if (!type || !name || rest.length > 0) throw new Error(`not a "type name" field: ${field}`);
    return { name, type };
  });
  return { primaryType: parts[1]!, fields };
}

/** One field's value as EIP-712 takes it: an address checksummed, an integer as a bigint, bytes as hex. */
function fieldValue(field: TypedDataParameter, value: string | undefined): unknown {
  if (value === undefined) throw new Error(`the message has no ${field.name}`);
  if (field.type === 'address') return getAddress(value);
  if (/^u?int\d*$/.test(field.type)) return BigInt(value);
  if (/^bytes\d+$/.test(field.type)) return value as Hex;
  throw new Error(`field type ${field.type} is not handled here`);
}

/** The typed data of `message` as the struct `encodeType` on `domain`, for viem to recover or verify. */
export function typedData(
  encodeType: string,
  domain: TokenDomain,
  message: Readonly<Record<string, string>>,
): TypedDataDefinition<Record<string, unknown>, string> {
  const { primaryType, fields } = parseEncodeType(encodeType);
  return {
    domain: { ...domain, verifyingContract: getAddress(domain.verifyingContract) },
    types: { [primaryType]: fields },
    primaryType,
    message: Object.fromEntries(fields.map((field) => [field.name, fieldValue(field, message[field.name])])),
  };
}
