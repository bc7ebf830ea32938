/**
 * The wallet policy object (docs/api.md, Policy) as `POST /v1/wallets` accepts it under `policy` and
 * `PUT /v1/wallets/{id}/policy` sets it: its fields, their bounds, and the `WalletPolicy` type derived from it.
 * Every field is optional; unknown fields are refused. Addresses come out checksummed; the canonical stored
 * form (de-duplicated, canonical decimal strings, capability keys sorted) is `walletPolicySchema`'s output
 * (./policy-schema.ts), which puts this schema's output through `normalizePolicy`.
 *
 * Protects against: ambiguous money (see money.ts); addresses that are not 20 bytes of hex, or mixed case
 * with a wrong EIP-55 checksum (a typo'd address), nor base58 of 32 bytes (a Solana payee); the zero address in a counterparty list (it can never be
 * paid — the pay path refuses it — so listing it is a mistake, e.g. an unset variable; so is Solana's all-zero key); an address in both
 * lists (a contradiction); unbounded lists and maps (the evaluator runs on the hot path); a zero per-tx or
 * window cap (freeze by revoking, or by a tiny cap — a zero cap is refused as a likely mistake). A zero
 * capability cap is allowed: it is the only way to forbid one capability while allowing others.
 * Known limits: a policy that is merely unwise (e.g. a daily cap below the per-tx cap) is accepted.
 */
import { z } from 'zod';
import { getAddress, isAddress } from 'viem';
import { isUsdString } from './money.js';
import { isSolanaAddress, SOLANA_ADDRESS_RE, SOLANA_ZERO_ADDRESS } from './counterparty-address.js';

export const POLICY_LIMITS = {
  maxListLength: 1_000,
  maxCapabilityCaps: 256,
  maxCapabilityLength: 128,
  maxVelocityCount: 1_000_000,
  maxVelocityWindowSeconds: 31 * 86_400,
  maxCoolingOffSeconds: 30 * 86_400,
} as const;

/** A capability a payment names: lower-case letters, digits and `. _ : - /`, starting with a letter or digit. */
export const CAPABILITY_NAME_RE = /^[a-z0-9][a-z0-9._:\-/]*$/;
/** A capability-cap key: a capability name, that name followed by `*` (prefix match), or a lone `*` (any). */
export const CAPABILITY_KEY_RE = /^(?:\*|[a-z0-9][a-z0-9._:\-/]*\*?)$/;

export function isCapabilityName(value: unknown): value is string {
  return (
    typeof value === 'string' && value.length <= POLICY_LIMITS.maxCapabilityLength && CAPABILITY_NAME_RE.test(value)
  );
}

export function isCapabilityKey(value: unknown): value is string {
  return (
    typeof value === 'string' && value.length <= POLICY_LIMITS.maxCapabilityLength && CAPABILITY_KEY_RE.test(value)
  );
}

/** A positive USD amount (caps, transfer amounts): a canonical-grammar decimal string above zero. */
export const usdAmountSchema = z
  .string()
  .refine(isUsdString, 'expected a USD decimal string with at most 6 decimals, e.g. "12.50"')
  .refine((v) => !/^0(\.0+)?$/.test(v), 'a cap must be above zero (revoke the wallet to stop all spending)');

/** A USD amount that may be zero (capability caps: "0" forbids that capability). */
export const usdAmountOrZeroSchema = z
  .string()
  .refine(isUsdString, 'expected a USD decimal string with at most 6 decimals, e.g. "12.50"');

/** A 20-byte address: all-lower or all-upper hex, or mixed case with a valid EIP-55 checksum. Output checksummed. */
export const evmAddressSchema = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x-prefixed 20-byte hex address')
  .refine(
    (v) => /^0x[0-9a-f]{40}$/.test(v) || /^0x[0-9A-F]{40}$/.test(v) || isAddress(v, { strict: true }),
    'mixed-case address with a wrong EIP-55 checksum',
  )
  .transform((v) => getAddress(v.toLowerCase()));

/** An EVM address in a counterparty list: as `evmAddressSchema`, and not the zero address. */
const evmCounterpartySchema = evmAddressSchema.refine(
  (a) => !/^0x0{40}$/.test(a),
  'the zero address can never be a recipient; remove it from the list',
);

/** A base58 Solana address (a Solana payee): exactly 32 bytes; kept as spelled (base58 is case-sensitive). */
export const solanaAddressSchema = z
  .string()
  .regex(SOLANA_ADDRESS_RE, 'expected a base58 Solana address')
  .refine(isSolanaAddress, 'expected a base58 Solana address of 32 bytes');

/** A Solana address in a counterparty list: as `solanaAddressSchema`, and not the all-zero key (nobody holds it). */
const solanaCounterpartySchema = solanaAddressSchema.refine(
  (a) => a !== SOLANA_ZERO_ADDRESS,
  'the all-zero Solana address can never be a recipient; remove it from the list',
);

/**
 * An address in a counterparty list: a base58 Solana address (./counterparty-address.ts) other than the all-zero
 * key, or else an EVM address as `evmAddressSchema` other than the zero address (and refused with its messages).
 */
export const counterpartyAddressSchema = z.string().transform((value, ctx): string => {
  const parsed = (SOLANA_ADDRESS_RE.test(value) ? solanaCounterpartySchema : evmCounterpartySchema).safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message });
  return z.NEVER;
});

/** A capability-cap key (see `CAPABILITY_KEY_RE`), at most 128 characters. */
export const capabilityKeySchema = z
  .string()
  .min(1)
  .max(POLICY_LIMITS.maxCapabilityLength)
  .regex(
    CAPABILITY_KEY_RE,
    'capability: lower-case letters, digits and . _ : - /, optional trailing * (or a lone * for any capability)',
  );

/**
 * Capability → USD cap. Checked on the raw object first: zod's record silently drops a `__proto__` key, and a
 * body holding one is refused, not quietly changed; the size bound is checked before any key is parsed.
 */
const capabilityCapsSchema = z
  .unknown()
  .refine(
    (v) => !(v !== null && typeof v === 'object' && Object.hasOwn(v, '__proto__')),
    'capability "__proto__" is not allowed',
  )
  .refine(
    (v) => !(v !== null && typeof v === 'object' && Object.keys(v).length > POLICY_LIMITS.maxCapabilityCaps),
    `at most ${POLICY_LIMITS.maxCapabilityCaps} capability caps`,
  )
  .pipe(z.record(capabilityKeySchema, usdAmountOrZeroSchema));

const counterpartyListSchema = z.array(counterpartyAddressSchema).max(POLICY_LIMITS.maxListLength);

export const walletPolicyObjectSchema = z
  .object({
    per_tx_cap_usd: usdAmountSchema.optional(),
    daily_cap_usd: usdAmountSchema.optional(),
    weekly_cap_usd: usdAmountSchema.optional(),
    monthly_cap_usd: usdAmountSchema.optional(),
    velocity_cap: z
      .object({
        max_count: z.number().int().min(1).max(POLICY_LIMITS.maxVelocityCount),
        window_seconds: z.number().int().min(1).max(POLICY_LIMITS.maxVelocityWindowSeconds),
      })
      .strict()
      .optional(),
    counterparty_allowlist: counterpartyListSchema.optional(),
    counterparty_blocklist: counterpartyListSchema.optional(),
    /** Seconds after the wallet's last signed payment during which the next is refused; 0 = off. */
    cooling_off: z.number().int().min(0).max(POLICY_LIMITS.maxCoolingOffSeconds).optional(),
    capability_cap_usd: capabilityCapsSchema.optional(),
    /**
     * With capability caps: refuse a payment that names no capability (fail-closed). Without it (or false), a
     * payment naming none passes the capability rule; the other rules still apply. Stored only when true.
     */
    capability_required: z.boolean().optional(),
    /**
     * In an owner-signed policy: the owner lets the wallet's key be destroyed (a rotation or a revocation). The
     * signer destroys the key of a wallet under a signed policy only when that policy says so
     * (docs/adr/0012-owner-signed-policies.md); the API's own policy carries it without effect. Stored only when true.
     */
    allow_key_destruction: z.boolean().optional(),
  })
  .strict()
  .superRefine((policy, ctx) => {
    const allow = new Set(policy.counterparty_allowlist ?? []);
    for (const [i, address] of (policy.counterparty_blocklist ?? []).entries()) {
      if (allow.has(address))
        ctx.addIssue({
          code: 'custom',
          path: ['counterparty_blocklist', i],
          message: `${address} is in both the allowlist and the blocklist`,
        });
    }
  });

/** The policy fields this version knows, straight from the schema (stored policies are checked against it). */
export const POLICY_FIELDS: ReadonlySet<string> = new Set(Object.keys(walletPolicyObjectSchema.shape));

/** A wallet policy (validated; `walletPolicySchema`'s output is also canonical, see `normalizePolicy`). */
export type WalletPolicy = z.output<typeof walletPolicyObjectSchema>;
/** What a client may send (before checksumming and canonical spelling). */
export type WalletPolicyInput = z.input<typeof walletPolicyObjectSchema>;
