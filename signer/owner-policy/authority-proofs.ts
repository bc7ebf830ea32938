/**
 * The signatures the signer takes as a policy authority's word (docs/adr/0012-owner-signed-policies.md): the
 * owner's own sign-in when an account is made — SIWE (EIP-191, recovered to the address the message names) or
 * SIWS (Ed25519 over the message, by the key the message names) — and each signed policy document: EIP-712
 * from an EVM authority (policy/signed-policy.ts), in the form the document names (the policy's hash or its
 * text), the Ed25519-signed statement from a Solana one (policy/policy-statement.ts).
 *
 * Defends: an owner named with a sign-in another key made or that names another address; a document signed by
 * anyone but the expected authority, or signed in the other curve's form (an Ed25519 signature never stands for
 * an EVM authority, nor the reverse); an EIP-712 signature read under another form than the one named (it is
 * recovered under that form only, never tried under both). Does not defend: which sign-in is the account owner's
 * (the front's word, see the ADR) or whether the document's version rises (./owner-policies.ts).
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import { getAddressEncoder, isAddress } from '@solana/kit';
import { parseSignInMessage } from '@solana/wallet-standard-util';
import { getAddress, hexToBytes, recoverTypedDataAddress, verifyMessage, type Hex } from 'viem';
import { parseSiweMessage } from 'viem/siwe';
import { policyStatementBytes } from '../../policy/policy-statement.js';
import { policyTextTypedData, policyTypedData, type PolicyDocumentInput } from '../../policy/signed-policy.js';
import type { AuthorityRequest, SetWalletPolicyParams } from '../protocol/owner-policy-protocol.js';

type OwnerRequest = Extract<AuthorityRequest, { kind: 'owner' }>;

const addressEncoder = getAddressEncoder();
const utf8 = (text: string) => new TextEncoder().encode(text);

/** Strict RFC 8032 verification; false (never a throw) on anything malformed. */
function ed25519Verifies(signature: Uint8Array, message: Uint8Array, address: string): boolean {
  if (!isAddress(address) || signature.length !== 64) return false;
  try {
    return ed25519.verify(signature, message, addressEncoder.encode(address) as Uint8Array, { zip215: false });
  } catch {
    return false;
  }
}

/** The address the sign-in message names, when it parses as the scheme it claims to be. */
function namedBySignIn(request: OwnerRequest): string | undefined {
  try {
    if ('scheme' in request.sign_in) return parseSignInMessage(utf8(request.sign_in.message))?.address;
    return parseSiweMessage(request.sign_in.message).address;
  } catch {
    return undefined;
  }
}

/**
 * The owner's address in its stored spelling (EIP-55, or base58 as it is) when their sign-in verifies: the
 * message names `request.address` and the address's key signed it. Undefined when it does not.
 */
export async function verifiedOwnerAddress(request: OwnerRequest): Promise<string | undefined> {
  const named = namedBySignIn(request);
  if (named === undefined) return undefined;
  if ('scheme' in request.sign_in) {
    if (named !== request.address) return undefined;
    let signature: Uint8Array;
    try {
      signature = base58.decode(request.sign_in.signature);
    } catch {
      return undefined;
    }
    return ed25519Verifies(signature, utf8(request.sign_in.message), request.address) ? request.address : undefined;
  }
  if (named.toLowerCase() !== request.address.toLowerCase()) return undefined;
  const address = getAddress(request.address);
  const verified = await verifyMessage({
    address,
    message: request.sign_in.message,
    signature: request.sign_in.signature as Hex,
  }).catch(() => false);
  return verified ? address : undefined;
}

/** A policy document's signature as read: the EVM address it recovers to, or an Ed25519 signature to check. */
export type PolicySignature = { curve: 'secp256k1'; recovered: string | null } | { curve: 'ed25519' };

function documentOf(params: SetWalletPolicyParams): PolicyDocumentInput {
  return { wallet: params.address, policy: params.policy, version: params.version, issuedAt: params.issued_at };
}

/**
 * Reads the document's signature: 65 bytes are EIP-712, recovered now under the form the document names (absent:
 * `policy_hash`); 64 bytes Ed25519 (checked per authority; the caller refuses a `policy_text` form beside them).
 */
export async function readPolicySignature(params: SetWalletPolicyParams): Promise<PolicySignature> {
  if (params.signature.length === 2 + 128) return { curve: 'ed25519' };
  const document = documentOf(params);
  const signature = params.signature as Hex;
  const recovering =
    params.form === 'policy_text'
      ? recoverTypedDataAddress({ ...policyTextTypedData(document), signature })
      : recoverTypedDataAddress({ ...policyTypedData(document), signature });
  const recovered = await recovering.catch(() => null);
  return { curve: 'secp256k1', recovered };
}

/** Whether `authority` (an address, 0x or base58) signed the document. */
export function signedByAuthority(params: SetWalletPolicyParams, read: PolicySignature, authority: string): boolean {
  if (read.curve === 'secp256k1')
    return authority.startsWith('0x') && read.recovered?.toLowerCase() === authority.toLowerCase();
  if (authority.startsWith('0x')) return false;
  return ed25519Verifies(hexToBytes(params.signature as Hex), policyStatementBytes(documentOf(params)), authority);
}
