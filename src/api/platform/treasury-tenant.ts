/**
 * The tenant a Treasury account counts under where shares are kept per tenant (the signer calls'
 * ../signing/signer-call-admission.ts): the platform account of the owner whose agent holds it, else the Treasury
 * account itself (an operator-minted one) — as ../wallets/wallet-tenant.ts names a bearer's tenant on the routes.
 * An agent never changes owner, so each answer is remembered (at most 10,000, least recently used forgotten).
 *
 * Defends: one owner multiplying its share by holding many agents (each its own Treasury account). Does not defend:
 * one person's many platform accounts.
 */
import { LRUCache } from 'lru-cache';

export function treasuryTenantOf(
  ownerOfTreasury: (treasuryAccountId: string) => Promise<string | null>,
): (treasuryAccountId: string) => Promise<string> {
  const known = new LRUCache<string, string>({ max: 10_000 });
  return async (treasuryAccountId) => {
    const remembered = known.get(treasuryAccountId);
    if (remembered !== undefined) return remembered;
    const tenant = (await ownerOfTreasury(treasuryAccountId)) ?? treasuryAccountId;
    known.set(treasuryAccountId, tenant);
    return tenant;
  };
}
