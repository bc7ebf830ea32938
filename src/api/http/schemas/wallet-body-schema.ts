/**
 * The body that creates a wallet, shared by the two routes that do: POST /v1/wallets (the wallets wing) and
 * POST /v1/agents/{id}/wallets (the platform wing, which extends it). It stands below both wings so neither
 * imports the other's schemas.
 */
import { z } from 'zod';
import { boundedPolicy, plainText, storedString } from './common-schemas.js';

export const createWalletBodySchema = z
  .object({
    label: plainText(128).optional(),
    chain: storedString(64).min(1).optional(),
    policy: boundedPolicy.optional(),
  })
  .strict();
