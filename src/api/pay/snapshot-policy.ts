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
 *
 * Its size: a sealed policy's estimated size in memory (`policyBytesOf`) is worked out once, in the walk that
 * freezes it, so the snapshot memory can bound what it remembers by bytes (./snapshot-cache.ts,
 * TREASURY_PAY_SNAPSHOT_MEMORY_BYTES) without walking or serialising a policy on the path of a payment. The two
 * bounds agree: a parsed form lives only while its policy does, so the parsed forms of the remembered snapshots
 * are at most about 1.2 times the snapshot budget's policies (a policy at its bounds: ~165 KB estimated, 179 KiB
 * parsed), and never more than MAX_REMEMBERED_ENTRIES' ~40 MB — under a sixth of the default budget (256 MiB).
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

/** Policies deeply frozen by sealPolicy (the only ones whose parsed form is remembered), with their size. */
const sealed = new WeakMap<object, number>();
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

/**
 * Deeply freezes a policy as its snapshot was read (JSON: no cycles), marks it as parsed at most once and records
 * its estimated size (`policyBytesOf`).
 */
export function sealPolicy<T>(policy: T): T {
  if (policy === null || typeof policy !== 'object') return policy;
  if (!sealed.has(policy)) sealed.set(policy, freezeAndMeasure(policy));
  return policy;
}

/**
 * A policy's estimated size in memory, in bytes: recorded when it was sealed (no walk then), else estimated by
 * walking it (a policy built in code). Deterministic: the same JSON value is the same size, wherever it is held.
 */
export function policyBytesOf(policy: unknown): number {
  if (policy !== null && typeof policy === 'object') {
    const bytes = sealed.get(policy);
    if (bytes !== undefined) return bytes;
  }
  return estimate(policy, false);
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

/**
 * What V8 holds for a JSON value, roughly (a policy as JSON.parse leaves it; measured: a policy at its bounds,
 * 96,569 characters of JSON, holds 156.5 KiB; estimated here 165 KB): a string its header and its characters (one
 * byte each: a policy's strings are ASCII), rounded to 8; an object or array its header, a slot per element and a
 * property entry per key (its name counted as a string); a number or boolean a boxed value.
 */
const STRING_HEADER = 16;
const OBJECT_HEADER = 32;
const SLOT = 8;
const PROPERTY = 16;
const BOXED = 16;

const stringBytes = (s: string) => STRING_HEADER + Math.ceil(s.length / 8) * 8;

/** `value`'s estimated size (see above), each object frozen on the way when `freeze`. */
function estimate(value: unknown, freeze: boolean): number {
  if (typeof value === 'string') return stringBytes(value);
  if (value === null || typeof value !== 'object') return BOXED;
  if (freeze) Object.freeze(value);
  let bytes = OBJECT_HEADER;
  if (Array.isArray(value)) {
    for (const inner of value as unknown[]) bytes += SLOT + estimate(inner, freeze);
    return bytes;
  }
  for (const [key, inner] of Object.entries(value)) bytes += PROPERTY + stringBytes(key) + estimate(inner, freeze);
  return bytes;
}

/** Deeply freezes `value` (see sealPolicy), answering its estimated size: one walk for both. */
function freezeAndMeasure(value: object): number {
  return estimate(value, true);
}
