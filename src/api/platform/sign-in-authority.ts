/**
 * Whom the signer is asked to record as the policy authority of an agent's Treasury account
 * (docs/adr/0012-owner-signed-policies.md): the owner, named with the SIWE sign-in (message and signature) of
 * the session that makes the account — the signer verifies that the signature recovers to the address the
 * message names; without such a proof (a SIWS sign-in, a session from before proofs were kept), the
 * deployment's approver.
 *
 * Defends: an owner named without the owner's own signature (the signer refuses it anyway). Does not defend:
 * which sign-in is the account owner's — the session's, as authenticated by the caller.
 */
import { parseSiweMessage } from 'viem/siwe';
import {
  signInProofSchema,
  type AuthorityRequest,
  type SignInProof,
} from '../../../signer/protocol/signer-protocol.js';

/** The owner authority a SIWE proof names; the approver when there is none, or it is not one the signer takes. */
export function signInAuthority(proof: SignInProof | undefined): AuthorityRequest {
  // A signature the signer cannot take (a contract wallet's ERC-1271 / ERC-6492 form is longer than 65 bytes)
  // names no owner: the approver, rather than a sign-in the signer would refuse.
  if (!proof || !signInProofSchema.safeParse(proof).success) return { kind: 'approver' };
  let address: string | undefined;
  try {
    address = parseSiweMessage(proof.message).address;
  } catch {
    address = undefined;
  }
  // SIWS-only sign-ins carry no SIWE proof: their accounts stay under the approver for now.
  if (!address) return { kind: 'approver' };
  return { kind: 'owner', address, sign_in: { message: proof.message, signature: proof.signature } };
}
