/**
 * The canonical stored form of a validated policy: fields in a fixed order, USD amounts in their shortest
 * spelling ("1.50" → "1.5"), EVM addresses EIP-55 checksummed (base58 ones as spelled), all de-duplicated (first occurrence kept, order
 * otherwise kept), capability keys sorted, `capability_required` and `allow_key_destruction` only when true. Idempotent: normalizing a normalized policy changes nothing, so two
 * equal policies store as equal JSON and an audit diff shows only real changes.
 *
 * Protects against: one policy spelled many ways (audit noise, cache misses, "1.50" vs "1.5" surprises).
 * Known limits: expects an already validated policy (`walletPolicySchema` calls it); it re-parses USD strings
 * and throws a RangeError on a malformed one, but does not re-check list sizes or contradictions.
 * An empty list or map is kept as given: an empty allowlist means "no recipient is allowed".
 */
import { counterpartyKey, displayCounterparty } from './counterparty-address.js';
import { canonicalUsd } from './money.js';
import type { WalletPolicy } from './policy-object-schema.js';

/** EVM addresses checksummed, base58 ones as spelled; duplicates (EVM: in any case) dropped. */
function uniqueChecksummed(addresses: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const address of addresses) {
    const key = counterpartyKey(address);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(displayCounterparty(address));
  }
  return out;
}

export function normalizePolicy(policy: WalletPolicy): WalletPolicy {
  const out: WalletPolicy = {};
  if (policy.per_tx_cap_usd !== undefined) out.per_tx_cap_usd = canonicalUsd(policy.per_tx_cap_usd);
  if (policy.daily_cap_usd !== undefined) out.daily_cap_usd = canonicalUsd(policy.daily_cap_usd);
  if (policy.weekly_cap_usd !== undefined) out.weekly_cap_usd = canonicalUsd(policy.weekly_cap_usd);
  if (policy.monthly_cap_usd !== undefined) out.monthly_cap_usd = canonicalUsd(policy.monthly_cap_usd);
  if (policy.velocity_cap !== undefined) {
    out.velocity_cap = { max_count: policy.velocity_cap.max_count, window_seconds: policy.velocity_cap.window_seconds };
  }
  if (policy.counterparty_allowlist !== undefined)
    out.counterparty_allowlist = uniqueChecksummed(policy.counterparty_allowlist);
  if (policy.counterparty_blocklist !== undefined)
    out.counterparty_blocklist = uniqueChecksummed(policy.counterparty_blocklist);
  if (policy.cooling_off !== undefined) out.cooling_off = policy.cooling_off;
  if (policy.capability_cap_usd !== undefined) {
    const caps = policy.capability_cap_usd;
    out.capability_cap_usd = Object.fromEntries(
      Object.keys(caps)
        .sort()
        .map((key) => [key, canonicalUsd(caps[key]!)]),
    );
  }
  // Only `true` is stored: false is the default, and a policy without the field keeps its canonical hash.
  if (policy.capability_required === true) out.capability_required = true;
  // The same for `allow_key_destruction`: policies signed before it existed keep their hash.
  if (policy.allow_key_destruction === true) out.allow_key_destruction = true;
  return out;
}
