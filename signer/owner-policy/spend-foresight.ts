/**
 * Whether a payment's spend will be allowed, told before its batch is decided (./spend-batch.ts), from what this
 * process already holds: the wallet's policy as it last read it (./signed-spends.ts `PolicyCache`), the spend
 * state its own last commit left (./spend-state-cache.ts), and every spend of the wallet asked for and not yet
 * resolved, each counted as if it were allowed. The signer then signs while the spend commits
 * (../signer-service.ts); the signature still leaves only after the commit.
 *
 * Why a payment foreseen allowed is allowed by the batch, when no other process spends from the wallet: the batch
 * decides on the same policy (a new one fails the commit's check and is read again) and on a state that counts no
 * more than the remembered one plus the spends still unresolved — a spend leaves this set only once its batch
 * resolved, after the state it left is remembered — and every rule refuses more when more was spent
 * (./spend-state-cache.ts). So on one signer process the HSM is never asked for a payment the owner's policy
 * refuses. When another process shares the wallet, its spends may make the batch refuse what was foreseen: that
 * signature is made and discarded (counted: `treasury_signer_early_signatures_total{outcome="discarded"}`).
 *
 * Defends: a refusal reaching the HSM on what this process could already know. Does not defend: what may leave —
 * only a spend the store committed lets its signature out (../signer-service.ts).
 */
import { counterpartyKey } from '../../policy/counterparty-address.js';
import type { Spend } from './owner-policy-store.js';
import type { PolicyCache } from './signed-spends.js';
import { stateQuery, withSpend, type SpendEntry } from './spend-decisions.js';
import type { SpendStateCache } from './spend-state-cache.js';

/** The spends asked for and not yet resolved, by wallet (as the store keeps it: 0x lower-case, base58 as spelled): in flight only, so bounded by the server's. */
export class UnresolvedSpends {
  private readonly byWallet = new Map<string, Set<Spend>>();

  /** Adds `spend`; returns what removes it (call once its outcome resolved). */
  add(address: string, spend: Spend): () => void {
    let spends = this.byWallet.get(address);
    if (!spends) {
      spends = new Set();
      this.byWallet.set(address, spends);
    }
    const set = spends;
    set.add(spend);
    return () => {
      set.delete(spend);
      if (set.size === 0 && this.byWallet.get(address) === set) this.byWallet.delete(address);
    };
  }

  of(address: string): Iterable<Spend> {
    return this.byWallet.get(address) ?? [];
  }
}

export interface ForesightContext {
  lookBackMs: number;
  policies: PolicyCache;
  states?: SpendStateCache;
}

/**
 * True only when `entry`'s wallet has a policy and a remembered state this process may decide on, and its
 * decision allows the spend on that state with every spend of `unresolved` added. No I/O.
 */
export function foresee(ctx: ForesightContext, entry: SpendEntry, unresolved: Iterable<Spend>): boolean {
  const address = counterpartyKey(entry.spend.address);
  const current = ctx.policies.get(address);
  if (!current || !ctx.states) return false;
  const kept = ctx.states.get(stateQuery(ctx.lookBackMs, entry, address, current), current.version);
  if (!kept) return false;
  let state = kept.state;
  for (const spend of unresolved) state = withSpend(state, spend.amount, spend.at);
  try {
    return entry.decide(current, state).record;
  } catch {
    return false;
  }
}
