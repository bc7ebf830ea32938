/**
 * Turns a stored policy (the canonical JSON `walletPolicySchema` produced, read back from the database) into
 * the internal form the rules use: bigint micro-USD, lower-cased address sets, a capability map.
 *
 * Protects against: a stored policy that does not parse being read as "no rule". Every field is re-checked
 * structurally and anything unexpected throws `PolicyInputError` — including an unknown field, which may be
 * a rule written by a newer version that this one cannot enforce. The caller's transaction then fails closed.
 * Known limits: deliberately cheaper than the zod schema on the hot path — it does not re-verify EIP-55
 * checksums (comparison is case-insensitive anyway) or the allowlist/blocklist contradiction (harmless: the
 * blocklist wins). A zero per-tx or window cap parses (it only restricts more).
 */
import { counterpartyKey, isSolanaAddress } from './counterparty-address.js';
import { parseUsd } from './money.js';
import { PolicyInputError } from './policy-errors.js';
import { POLICY_FIELDS, POLICY_LIMITS, isCapabilityKey } from './policy-schema.js';
import type { ParsedPolicy } from './policy-types.js';

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function usd(value: unknown, field: string): bigint {
  if (typeof value !== 'string') throw new PolicyInputError(field, `expected a USD string, got ${typeof value}`);
  try {
    return parseUsd(value);
  } catch {
    throw new PolicyInputError(field, 'not a USD amount');
  }
}

function integer(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new PolicyInputError(field, `expected an integer in [${min}, ${max}]`);
  }
  return value;
}

function addressSet(value: unknown, field: string): ReadonlySet<string> {
  if (!Array.isArray(value) || value.length > POLICY_LIMITS.maxListLength) {
    throw new PolicyInputError(field, `expected an array of at most ${POLICY_LIMITS.maxListLength} addresses`);
  }
  const set = new Set<string>();
  for (const [i, address] of value.entries()) {
    if (typeof address !== 'string' || !(ADDRESS_RE.test(address) || isSolanaAddress(address)))
      throw new PolicyInputError(`${field}[${i}]`, 'not a 20-byte hex address nor a base58 Solana address');
    set.add(counterpartyKey(address));
  }
  return set;
}

export function parsePolicy(policy: unknown): ParsedPolicy {
  if (!isPlainObject(policy)) throw new PolicyInputError('policy', 'expected a JSON object');
  for (const key of Object.keys(policy)) {
    if (!POLICY_FIELDS.has(key))
      throw new PolicyInputError(`policy.${key}`, 'unknown policy field (a rule this version cannot enforce)');
  }
  const parsed: ParsedPolicy = {};
  const p = policy;
  if (p.per_tx_cap_usd !== undefined) parsed.perTxCapMicro = usd(p.per_tx_cap_usd, 'policy.per_tx_cap_usd');
  if (p.daily_cap_usd !== undefined) parsed.dailyCapMicro = usd(p.daily_cap_usd, 'policy.daily_cap_usd');
  if (p.weekly_cap_usd !== undefined) parsed.weeklyCapMicro = usd(p.weekly_cap_usd, 'policy.weekly_cap_usd');
  if (p.monthly_cap_usd !== undefined) parsed.monthlyCapMicro = usd(p.monthly_cap_usd, 'policy.monthly_cap_usd');
  if (p.velocity_cap !== undefined) {
    const v = p.velocity_cap;
    if (!isPlainObject(v) || Object.keys(v).some((k) => k !== 'max_count' && k !== 'window_seconds')) {
      throw new PolicyInputError('policy.velocity_cap', 'expected {max_count, window_seconds}');
    }
    parsed.velocityCap = {
      maxCount: integer(v.max_count, 'policy.velocity_cap.max_count', 1, POLICY_LIMITS.maxVelocityCount),
      windowSeconds: integer(
        v.window_seconds,
        'policy.velocity_cap.window_seconds',
        1,
        POLICY_LIMITS.maxVelocityWindowSeconds,
      ),
    };
  }
  if (p.counterparty_allowlist !== undefined)
    parsed.counterpartyAllowlist = addressSet(p.counterparty_allowlist, 'policy.counterparty_allowlist');
  if (p.counterparty_blocklist !== undefined)
    parsed.counterpartyBlocklist = addressSet(p.counterparty_blocklist, 'policy.counterparty_blocklist');
  if (p.cooling_off !== undefined)
    parsed.coolingOffSeconds = integer(p.cooling_off, 'policy.cooling_off', 0, POLICY_LIMITS.maxCoolingOffSeconds);
  if (p.capability_cap_usd !== undefined) {
    const caps = p.capability_cap_usd;
    if (!isPlainObject(caps) || Object.keys(caps).length > POLICY_LIMITS.maxCapabilityCaps) {
      throw new PolicyInputError(
        'policy.capability_cap_usd',
        `expected an object of at most ${POLICY_LIMITS.maxCapabilityCaps} caps`,
      );
    }
    const map = new Map<string, bigint>();
    for (const [key, value] of Object.entries(caps)) {
      if (!isCapabilityKey(key))
        throw new PolicyInputError(
          'policy.capability_cap_usd',
          `not a capability key: ${JSON.stringify(key).slice(0, 40)}`,
        );
      map.set(key, usd(value, `policy.capability_cap_usd[${JSON.stringify(key)}]`));
    }
    parsed.capabilityCaps = map;
  }
  if (p.capability_required !== undefined) {
    if (typeof p.capability_required !== 'boolean')
      throw new PolicyInputError('policy.capability_required', 'expected a boolean');
    if (p.capability_required) parsed.capabilityRequired = true;
  }
  if (p.allow_key_destruction !== undefined) {
    if (typeof p.allow_key_destruction !== 'boolean')
      throw new PolicyInputError('policy.allow_key_destruction', 'expected a boolean');
    if (p.allow_key_destruction) parsed.allowKeyDestruction = true;
  }
  return parsed;
}
