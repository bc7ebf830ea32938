/**
 * Whether a payment may be signed for the origin whose 402 asked for it, when its payee is a Treasury seller's
 * (pure; the owners are read by ./store/pg-payee-owners.ts, the refusal recorded by ./refuse-challenge-origin.ts).
 *
 * A payee belongs to the sellers that hold it: the seller whose collection wallet it is on the payment's network
 * (one per seller and network, docs/adr/0011-merchant-of-record.md — a platform_mor seller's buyers pay it, and
 * nothing in the challenge but that address names the seller) and every seller that proved it as its pay-to (only
 * the address's key holder can). Where such a seller sells: its verified origin (a middleware seller's 402s come
 * from it; the public catalogue lists it there) and, for a managed-proxy (`mpp`) seller, its account's gate at the
 * gate's verified public address — and, when that gate's base domain is verified too, at the seller's own
 * host-routed name `<slug>.<base domain>` (the gate URL's scheme and port; only when the slug is a DNS label). A
 * payee is bound when it has owners and the platform knows where each of them sells; a bound payee is paid only
 * for a challenge of one of those origins.
 *
 * Defends: a page that copies a Treasury seller's 402 verbatim but names itself as the resource — the buyer would
 * pay the seller's payee and hand the page a payment it can replay at the seller (an x402 payment signs no
 * resource). Nobody but a payee's owners can bind or unbind it (a collection wallet is the platform's per seller; a
 * pay-to needs its key's signature), so no one can have another seller's buyers refused or let through: a base
 * domain adds only the owner's own slug under its own account's proven domain (proving one takes a token served
 * at a random name under it: src/api/sellers/gate-address/gate-address-service.ts), and slugs are unique.
 * Does not defend: a payee with an owner the platform cannot place (no verified origin; an `mpp` seller whose
 * gate address is unproven; more than MAX_PAYEE_OWNERS owners) — unbound, paid as before; a seller selling one
 * payee at an origin it did not verify (refused: each origin is a seller of its own); a gate's host routing while
 * its base domain is unproven, or for a slug that is no DNS label (those purchases are refused); an origin or
 * domain that changed hands after it was verified; a buyer that does not say which origin asked (old SDKs).
 */
import { hostRoutedOrigin } from '../../shared/gate-address-schema.js';

/** The most owners of one payee read; a payee with more is left unbound (its origins are not all known). */
export const MAX_PAYEE_OWNERS = 16;

/** One seller holding a payee, and what the platform proved of where it sells. */
export interface PayeeOwner {
  sellerId: string;
  /** `x402` (its own middleware) or `mpp` (its account's gate). */
  protocol: string;
  origin: string | null;
  originVerified: boolean;
  /** The account's gate address (`mpp` sellers only), and whether it is verified. */
  gateUrl: string | null;
  gateVerified: boolean;
  /** The seller's slug: its host-routed name is `<slug>.<gateBaseDomain>`. */
  slug: string | null;
  /** The gate's base domain (`mpp` sellers only), and whether it is verified. */
  gateBaseDomain: string | null;
  gateBaseDomainVerified: boolean;
}

/** A payee the platform cannot bind, and why; or the origins its challenges may come from. */
export type PayeeBinding =
  | { kind: 'unbound'; reason: 'no_owner' | 'owner_unplaced' | 'too_many_owners' }
  | { kind: 'bound'; origins: readonly string[]; sellerIds: readonly string[] };

/** The origin `url` names (`URL.origin`), or undefined when it is none. */
function originOf(url: string | null): string | undefined {
  if (url === null) return undefined;
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/** The owner's host-routed name at its gate, when the gate's base domain is verified and the slug a DNS label. */
function hostRouted(owner: PayeeOwner, gateUrl: string): string | undefined {
  if (!owner.gateBaseDomainVerified || owner.gateBaseDomain === null || owner.slug === null) return undefined;
  return hostRoutedOrigin(gateUrl, owner.gateBaseDomain, owner.slug);
}

/**
 * Where one owner's 402s come from: its verified origin, and for an `mpp` seller its gate's verified address and,
 * with a verified base domain, its host-routed name there; undefined when the platform cannot place it (a
 * middleware seller without a verified origin, a gate seller whose gate address is not verified).
 */
function ownerOrigins(owner: PayeeOwner): string[] | undefined {
  const own = owner.originVerified ? originOf(owner.origin) : undefined;
  if (owner.protocol === 'mpp') {
    const gate = owner.gateVerified ? originOf(owner.gateUrl) : undefined;
    if (gate === undefined) return undefined;
    const byHost = hostRouted(owner, gate);
    return [gate, ...(byHost === undefined ? [] : [byHost]), ...(own === undefined ? [] : [own])];
  }
  return own === undefined ? undefined : [own];
}

/** The payee's binding from its owners (`truncated`: more than MAX_PAYEE_OWNERS were there). */
export function payeeBinding(owners: readonly PayeeOwner[], truncated: boolean): PayeeBinding {
  if (truncated) return { kind: 'unbound', reason: 'too_many_owners' };
  if (owners.length === 0) return { kind: 'unbound', reason: 'no_owner' };
  const origins = new Set<string>();
  for (const owner of owners) {
    const placed = ownerOrigins(owner);
    if (placed === undefined) return { kind: 'unbound', reason: 'owner_unplaced' };
    for (const origin of placed) origins.add(origin);
  }
  return { kind: 'bound', origins: [...origins].sort(), sellerIds: [...new Set(owners.map((o) => o.sellerId))] };
}

/** Whether a payment to a payee bound so may be signed for a challenge of `challengeOrigin` (`URL.origin` form). */
export function challengeOriginAllowed(binding: PayeeBinding, challengeOrigin: string): boolean {
  return binding.kind === 'unbound' || binding.origins.includes(challengeOrigin);
}
