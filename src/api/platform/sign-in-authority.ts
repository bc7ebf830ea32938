/**
 * Whom the signer is asked to record as the policy authority of an agent's Treasury account
 * (docs/adr/0012-owner-signed-policies.md): the owner, named with the sign-in (message and signature) of the
 * session that makes the account — SIWE (the signer checks that the signature recovers to the address the
 * message names) or SIWS (the signer checks the Ed25519 signature by the key the message names); without such a
 * proof (a session from before proofs were kept), the deployment's approver.
 *
 * Defends: an owner named without the owner's own signature (the signer refuses it anyway). Does not defend:
 * which sign-in is the account owner's — the session's, as authenticated by the caller.
 */
import { parseSignInMessage } from '@solana/wallet-standard-util';
import { parseSiweMessage } from 'viem/siwe';
import {
  authorityRequestSchema,
  signInProofSchema,
  siwsProofSchema,
  type AuthorityRequest,
  type SignInProof,
} from '../../../signer/protocol/signer-protocol.js';

const APPROVER: AuthorityRequest = { kind: 'approver' };

/** A SIWE proof's owner; undefined when the proof is not one (or its signature is not one the signer takes). */
function siweOwner(proof: { message: string; signature: string }): AuthorityRequest | undefined {
  // A contract wallet's ERC-1271 / ERC-6492 signature is longer than 65 bytes: the signer cannot take it.
  if (!signInProofSchema.safeParse(proof).success) return undefined;
  try {
    const address = parseSiweMessage(proof.message).address;
    return address
      ? { kind: 'owner', address, sign_in: { message: proof.message, signature: proof.signature } }
      : undefined;
  } catch {
    return undefined;
  }
}

/** A SIWS proof's owner: the address its message names, with the base58 signature. */
function siwsOwner(proof: { message: string; signature: string }): AuthorityRequest | undefined {
  const siws = siwsProofSchema.safeParse({ scheme: 'siws', ...proof });
  if (!siws.success) return undefined;
  let address: string | undefined;
  try {
    address = parseSignInMessage(new TextEncoder().encode(proof.message))?.address;
  } catch {
    address = undefined;
  }
  return address ? { kind: 'owner', address, sign_in: siws.data } : undefined;
}

/** The owner authority a sign-in proof names; the approver when there is none, or it is not one the signer takes. */
export function signInAuthority(
  proof: SignInProof | { message: string; signature: string } | undefined,
): AuthorityRequest {
  if (!proof) return APPROVER;
  const owner = siweOwner(proof) ?? siwsOwner(proof);
  // Only a request the signer's schema takes: anything else would fail the account's creation, not name the approver.
  return owner && authorityRequestSchema.safeParse(owner).success ? owner : APPROVER;
}
