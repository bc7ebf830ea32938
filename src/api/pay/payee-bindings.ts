/**
 * The binding of a payee (./challenge-origin-binding.ts) as this process last read it: read through
 * ./store/pg-payee-owners.ts and kept PAYEE_BINDING_TTL_MS, at most MAX_REMEMBERED_PAYEES payees (lru-cache, O(1)
 * eviction), so that an agent paying the same seller again does not read its owners each time.
 *
 * Defends: memory (bounded entries, each a few origins); the database read on every payment that names its
 * challenge's origin. Does not defend: a change of a payee's owners (an origin verified, changed or a new pay-to
 * proven) reaching this process before PAYEE_BINDING_TTL_MS — until then the binding read before it applies.
 */
import { LRUCache } from 'lru-cache';
import { payeeBinding, type PayeeBinding } from './challenge-origin-binding.js';
import { storedPayee, type PgPayeeOwners } from './store/pg-payee-owners.js';

/** How long a payee's binding is used before it is read again. */
export const PAYEE_BINDING_TTL_MS = 30_000;
/** The most payees remembered at once. */
export const MAX_REMEMBERED_PAYEES = 10_000;

export class PayeeBindings {
  private readonly remembered = new LRUCache<string, PayeeBinding>({
    max: MAX_REMEMBERED_PAYEES,
    ttl: PAYEE_BINDING_TTL_MS,
  });

  constructor(private readonly store: Pick<PgPayeeOwners, 'ownersOf'>) {}

  /** The binding of `payTo` on `network`, remembered or read. */
  async of(network: string, payTo: string): Promise<PayeeBinding> {
    const key = `${network} ${storedPayee(payTo)}`;
    const known = this.remembered.get(key);
    if (known) return known;
    const { owners, truncated } = await this.store.ownersOf(network, payTo);
    const binding = payeeBinding(owners, truncated);
    this.remembered.set(key, binding);
    return binding;
  }
}
