/**
 * A snapshot's wallet policy in the form the rules read (policy/parse-policy.ts), parsed once per snapshot read
 * instead of once per payment. A wallet's snapshot is remembered between its payments (./snapshot-cache.ts) and
 * keeps the policy object it was read with, so the payments decided on it evaluate one parsed form; a policy at its
 * bounds (1,000 allowed and 1,000 blocked addresses, 256 capability caps) cost about 0.8 ms of the API's CPU to
 * parse, on every payment.
 *
 * Defends: a parsed form that no longer matches its policy — only a policy sealed here when its snapshot was read
 * (deeply frozen, so nothing can change it afterwards) has its parsed form remembered, by identity; any other value
 * is parsed every time, as before. A policy that does not parse throws PolicyInputError at each decision on it (a
 * refusal is never remembered), and the caller fails closed as before. Memory: a form is remembered only while its
 * policy lives (held by its snapshot), and only while the forms remembered hold at most MAX_REMEMBERED_ENTRIES
 * addresses and capability caps in all; past that, a policy is parsed for each decision as before (nothing is
 * evicted, so many large policies paid in turn cannot make each one be parsed, kept and dropped again), and many
 * large policies cannot double what the remembered snapshots hold. A form's entries are given back once its policy
 * is collected (FinalizationRegistry), so the bound errs on the strict side until then.
 * Does not defend: anything about the policy's content — parsePolicy and the rules decide that, unchanged.
 */
import { parsePolicy } from '../../../policy/parse-policy.js';
import type { ParsedPolicy } from '../../../policy/policy-types.js';

/**
 * Addresses and capability caps of the parsed forms remembered at once: about 80 bytes each (measured: a policy at
 * its bounds, 2,257 entries, is 179 KiB parsed, beside the 152 KiB its snapshot holds as read), so at most about
 * 40 MB — some 220 policies at their bounds, or every remembered wallet's policy of a few dozen entries.
 */
const MAX_REMEMBERED_ENTRIES = 500_000;

/** Policies deeply frozen by sealPolicy: the only ones whose parsed form is remembered. */
const sealed = new WeakSet<object>();
/** Each remembered form lives as long as its policy (its snapshot, read or remembered), never longer. */
const parsed = new WeakMap<object, ParsedPolicy>();
/** Entries (addresses and caps) of the forms remembered and not yet known to be collected with their policy. */
let rememberedEntries = 0;
const collected = new FinalizationRegistry<number>((entries) => {
  rememberedEntries -= entries;
});

/** A parsed form's size in entries: one, plus its addresses and capability caps. */
const entriesOf = (p: ParsedPolicy) =>
  1 + (p.counterpartyAllowlist?.size ?? 0) + (p.counterpartyBlocklist?.size ?? 0) + (p.capabilityCaps?.size ?? 0);

/** Deeply freezes a policy as its snapshot was read (JSON: no cycles) and marks it as parsed at most once. */
export function sealPolicy<T>(policy: T): T {
  if (policy === null || typeof policy !== 'object') return policy;
  deepFreeze(policy);
  sealed.add(policy);
  return policy;
}

/** The rules' form of `policy`: remembered for a sealed policy, parsed anew otherwise (throws PolicyInputError). */
export function parsedPolicyOf(policy: unknown): ParsedPolicy {
  if (policy === null || typeof policy !== 'object' || !sealed.has(policy)) return parsePolicy(policy);
  let form = parsed.get(policy);
  if (form === undefined) {
    form = Object.freeze(parsePolicy(policy));
    // Past the bound, parsed for this decision only (as before): nothing is evicted, so nothing is parsed in turn.
    const entries = entriesOf(form);
    if (rememberedEntries + entries <= MAX_REMEMBERED_ENTRIES) {
      parsed.set(policy, form);
      rememberedEntries += entries;
      collected.register(policy, entries);
    }
  }
  return form;
}

function deepFreeze(value: object): void {
  Object.freeze(value);
  for (const inner of Object.values(value))
    if (inner !== null && typeof inner === 'object') deepFreeze(inner as object);
}
