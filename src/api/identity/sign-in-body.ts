/**
 * The body of POST /v1/identity/init, as zod schemas: a SIWE sign-in (`chain: 'evm'`, optionally with the
 * same seed's SIWS attestation to link) or a SIWS one (`chain: 'solana'`). Here, beside the verifiers
 * (./sign-in-message.ts, ./siws-attestation.ts), so that the route, the OpenAPI document and the identity
 * service take their types from one definition.
 *
 * Defends: bounded, well-formed input before any parsing or signature check (a message of a few KB at most,
 * base58 text as long as 32- and 64-byte values encode; decoded lengths are checked by the verifier). The
 * message is stored with the session it signs in (`api_tokens.sign_in_message`) and later shown to the signer
 * as the owner's proof, so it is held to the stored-prose rule (src/shared/storable-text.ts): no control,
 * bidirectional-control, invisible or line-separator character, line breaks and tabs aside.
 */
import { z } from 'zod';
import { storedProse } from '../http/schemas/common-schemas.js';

/** A sign-in message: SIWE (EIP-4361) or SIWS text, a few KB at most, storable prose. */
const signInMessage = storedProse(4096).min(1);

/** base58 alphabet only (no 0, O, I, l), lengths as 32 and 64 bytes encode; decoded lengths are checked after. */
const base58Text = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .regex(/^[1-9A-HJ-NP-Za-km-z]+$/, 'expected base58');

/** A Sign In With Solana attestation (./siws-attestation.ts). */
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

export type SiwsAttestation = z.infer<typeof siwsAttestationSchema>;
