/**
 * The tenant a Treasury account counts under where shares are kept per tenant (the signer calls'
 * ../signing/signer-call-admission.ts): the platform account of the owner whose agent holds it, else the Treasury
 * account itself (an operator-minted one) — as ../auth/wallet-tenant.ts names a bearer's tenant on the routes.
 * An agent never changes owner, so each answer is remembered (at most 10,000, least recently used forgotten).
 *
 * Never waits: a Treasury account not yet known counts as itself while its owner is looked up in the background
 * (one lookup per account at a time; a failed one is tried again at its next call). Its callers may hold a database
 * transaction and lock with a second connection (a wallet's key made under its owner's count lock): a lookup they
 * waited for would take a third connection from a pool sized for two.
 *
 * Defends: one owner multiplying its share by holding many agents (each its own Treasury account), from each agent's
 * second call on. Does not defend: one person's many platform accounts.
 */
import { LRUCache } from 'lru-cache';

export function treasuryTenantOf(
  ownerOfTreasury: (treasuryAccountId: string) => Promise<string | null>,
): (treasuryAccountId: string) => string {
  const known = new LRUCache<string, string>({ max: 10_000 });
  const looking = new Set<string>();
  return (treasuryAccountId) => {
    const remembered = known.get(treasuryAccountId);
    if (remembered !== undefined) return remembered;
    if (!looking.has(treasuryAccountId)) {
      looking.add(treasuryAccountId);
      ownerOfTreasury(treasuryAccountId)
        .then(
          (owner) => known.set(treasuryAccountId, owner ?? treasuryAccountId),
          () => undefined, // tried again at its next call
        )
        .finally(() => looking.delete(treasuryAccountId));
    }
    return treasuryAccountId;
  };
}
