/**
 * The wallet policy object (spec §2.3), as `POST /v1/wallets` accepts it under `policy` and
 * `PUT /v1/wallets/{id}/policy` sets it. Every field is optional; unknown fields are refused.
 *
 * Defends: money as canonical decimal strings only; addresses as 20-byte hex whose mixed case must carry a
 * valid EIP-55 checksum; bounded list and map sizes; an address in both lists is a contradiction.
 * Does not defend: a policy that is merely unwise (e.g. a daily cap below the per-tx cap) — allowed.
 */
import { z } from 'zod';
import { getAddress, isAddress } from 'viem';
import { isUsdString } from './money.js';

export const usdAmountSchema = z
  .string()
  .refine(isUsdString, 'expected a USD decimal string with at most 6 decimals, e.g. "12.50"')
  .refine((v) => !/^0(\.0+)?$/.test(v), 'a cap must be above zero (revoke the wallet to stop all spending)');

/** A 20-byte address: all-lower or all-upper hex, or mixed case with a valid EIP-55 checksum. */
export const evmAddressSchema = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x-prefixed 20-byte hex address')
  .refine((v) => isAddress(v, { strict: true }) || /^0x[0-9a-f]{40}$/.test(v) || /^0x[0-9A-F]{40}$/.test(v), 'mixed-case address with a wrong EIP-55 checksum')
  .transform((v) => getAddress(v.toLowerCase()));

export const capabilitySchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[a-z0-9][a-z0-9._:\-/]*\*?$/, 'capability: lower-case letters, digits and . _ : - /, optional trailing *');

export const walletPolicySchema = z
  .object({
    per_tx_cap_usd: usdAmountSchema.optional(),
    daily_cap_usd: usdAmountSchema.optional(),
    weekly_cap_usd: usdAmountSchema.optional(),
    monthly_cap_usd: usdAmountSchema.optional(),
    velocity_cap: z
      .object({
        max_count: z.number().int().min(1).max(1_000_000),
        window_seconds: z.number().int().min(1).max(31 * 86_400),
      })
      .strict()
      .optional(),
    counterparty_allowlist: z.array(evmAddressSchema).max(1000).optional(),
    counterparty_blocklist: z.array(evmAddressSchema).max(1000).optional(),
    cooling_off: z.number().int().min(0).max(30 * 86_400).optional(),
    capability_cap_usd: z
      .record(capabilitySchema, usdAmountSchema)
      .refine((m) => Object.keys(m).length <= 256, 'at most 256 capability caps')
      .optional(),
  })
  .strict()
  .superRefine((policy, ctx) => {
    const allow = new Set(policy.counterparty_allowlist ?? []);
    for (const address of policy.counterparty_blocklist ?? []) {
      if (allow.has(address)) ctx.addIssue({ code: 'custom', path: ['counterparty_blocklist'], message: `${address} is in both the allowlist and the blocklist` });
    }
  });

export type WalletPolicy = z.infer<typeof walletPolicySchema>;
