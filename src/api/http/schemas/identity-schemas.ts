/** Request schemas of identity and PAT routes. */
import { z } from 'zod';
import { patLifetimeSeconds, plainText, usdAmount } from './common-schemas.js';

/** A sign-in message: SIWE (EIP-4361) or SIWS text, a few KB at most, well-formed Unicode. */
const signInMessage = z
  .string()
  .min(1)
  .max(4096)
  .refine((v) => v.isWellFormed(), 'must be well-formed Unicode');

/** base58 alphabet only (no 0, O, I, l), lengths as 32 and 64 bytes encode; decoded lengths are checked after. */
const base58Text = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .regex(/^[1-9A-HJ-NP-Za-km-z]+$/, 'expected base58');

/** A Sign In With Solana attestation (src/api/identity/siws-attestation.ts). */
export const siwsAttestationSchema = z
  .object({
    message: signInMessage,
    /** ed25519 signature over the message's UTF-8 bytes: 64 bytes, base58. */
    signature: base58Text(64, 88),
    /** The Solana address: a 32-byte ed25519 public key, base58. */
    public_key: base58Text(32, 44),
  })
  .strict();

export const initBodySchema = z.discriminatedUnion('chain', [
  z
    .object({
      chain: z.literal('evm'),
      message: signInMessage,
      signature: z
        .string()
        .min(1)
        .max(512)
        .regex(/^[0-9A-Za-z]+$/, 'expected a hex (0x…) signature'),
      /**
       * A SIWS attestation of the same seed's Solana key, carrying the SIWE message's nonce: links that
       * Solana address to the account (one seed, one account), or signs in to the account it is linked to.
       */
      link_solana: siwsAttestationSchema.optional(),
    })
    .strict(),
  siwsAttestationSchema.extend({ chain: z.literal('solana') }).strict(),
]);

export type InitBody = z.infer<typeof initBodySchema>;

export const createPatBodySchema = z
  .object({
    scope_type: z.enum(['agent', 'treasury', 'service', 'gate']),
    scope_id: z
      .string()
      .regex(/^[a-z]{3,4}_[0-9a-f]{24}$/, 'expected an id such as agt_… or acct_…')
      .optional(),
    /** Also carry the gate scope: with scope_type "treasury", one PAT for a gate that also pays (docs/gate.md). */
    gate: z.boolean().optional(),
    label: plainText(128).optional(),
    daily_cap_usd: usdAmount.optional(),
    single_use: z.boolean().optional(),
    expires_in_seconds: patLifetimeSeconds.optional(),
  })
  .strict();

export const patchPatBodySchema = z.object({ daily_cap_usd: usdAmount.nullable() }).strict();

export const patIdSchema = z.string().regex(/^pat_[0-9a-f]{24}$/, 'expected a PAT id (pat_…)');
