/**
 * The tenant a wallet request is counted and queued under: the platform account that owns the bearer (a
 * signed-in owner's session and PATs, its agents' PATs and exchanged sessions — every Treasury account of its
 * agents together), else the Treasury account the bearer reaches (an operator-minted account's api key and
 * PATs). The `policy`, `receipt` and `account` rate-limit buckets (../http/middleware/rate-limit.ts) count per
 * tenant, the pay admission gives each tenant its share (../pay/pay-admission.ts), and the wallet audit's full
 * verifications are served round-robin per tenant (../wallets/wallet-history-service.ts).
 *
 * Defends: one tenant multiplying its share by minting more tokens or more agents (each agent has a Treasury
 * account of its own). Does not defend: one person signing in as many accounts (the `init` bucket bounds that
 * per client address only).
 */
import type { Principal } from './principal.js';

/** Platform accounts are `acc_…` and Treasury accounts `acct_…`: the two never name the same tenant. */
export function walletTenant(principal: Principal, treasuryAccountId: string): string {
  return principal.kind === 'token' && principal.accountId !== null ? principal.accountId : treasuryAccountId;
}
