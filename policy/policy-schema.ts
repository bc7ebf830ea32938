/**
 * The wallet policy schema a policy body is parsed with (the API's routes, the signer, the CLI, the dashboard):
 * the policy object (./policy-object-schema.ts: its fields, bounds and refusals) whose parsed output is put in
 * the canonical stored form (`normalizePolicy`, ./normalize-policy.ts): checksummed, de-duplicated addresses,
 * canonical decimal strings, capability keys sorted. The object schema's names that importers use are re-exported
 * here, so one module names the policy's schema, its pieces and its type.
 */
import { walletPolicyObjectSchema, type WalletPolicy } from './policy-object-schema.js';
import { normalizePolicy } from './normalize-policy.js';

export {
  POLICY_FIELDS,
  POLICY_LIMITS,
  counterpartyAddressSchema,
  evmAddressSchema,
  isCapabilityKey,
  isCapabilityName,
  solanaAddressSchema,
  usdAmountOrZeroSchema,
  usdAmountSchema,
} from './policy-object-schema.js';
export type { WalletPolicy, WalletPolicyInput } from './policy-object-schema.js';

/** Validates a policy body and yields its canonical stored form. */
export const walletPolicySchema = walletPolicyObjectSchema.transform((policy): WalletPolicy => normalizePolicy(policy));
