/**
 * One line on a wallet's owner-signed policy (the `owner_policy` of GET /v1/wallets/{id}/policy,
 * ./api-responses/pay-responses.ts), worded once so that the `xx` CLI and the dashboard say the same thing:
 * "Owner-signed by 0x… (version N)", or that only the signer's ceilings apply.
 *
 * Defends: two clients describing the same state differently. Does not defend: a reply with wrong content —
 * it words what the API answered.
 */
import { getAddress } from 'viem';
import type { OwnerPolicy } from './api-responses/pay-responses.js';

/** An authority's address as a person reads it: EIP-55 for 0x addresses, a Solana key (base58) as it is. */
const spelled = (address: string) => (address.startsWith('0x') ? getAddress(address) : address);

/** The authority as a person reads it: its kind and its address (EIP-55 or base58; the signer answers 0x lower case). */
export function describeAuthority(authority: OwnerPolicy['authority']): string {
  if (!authority) return 'none';
  return authority.address ? `${authority.kind} ${spelled(authority.address)}` : authority.kind;
}

export function describeOwnerPolicy(owner: OwnerPolicy): string {
  if (owner.state === 'owner_signed') {
    const by = owner.authority?.address ? spelled(owner.authority.address) : 'an unnamed authority';
    return `Owner-signed by ${by} (version ${owner.version ?? '?'})`;
  }
  return "Not owner-signed: only the signer's ceilings apply";
}
