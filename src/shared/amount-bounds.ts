/**
 * The bound every amount Treasury accepts is held to, shared by the API's route schemas and the seller
 * middleware's ledger reports so both sides refuse the same values.
 *
 * Defends: an amount that passes a schema and then overflows the column or the running total that stores it
 * (bigint micro-USD columns; docs/security-model.md, "Input bounds"). 10^15 micro-USD (10^9 USD) is exact as
 * a JSON double and far above what the signer signs in one authorization.
 * Does not defend: an amount that is in bounds but larger than a wallet's policy allows (policy/ decides).
 */
import { z } from 'zod';
import { formatUsd, isRawAmount } from '../../policy/money.js';

/** The largest amount any route takes, in micro-USD (= raw USDC units): 10^9 USD. */
export const MAX_AMOUNT_MICRO = 10n ** 15n;
export const MAX_AMOUNT_USD = formatUsd(MAX_AMOUNT_MICRO);

/** A positive raw token amount (6 decimals: one unit is one micro-USD), at most MAX_AMOUNT_MICRO. */
export const rawAmount = z
  .string()
  .refine(
    (v) => isRawAmount(v) && v !== '0' && BigInt(v) <= MAX_AMOUNT_MICRO,
    `expected a positive raw token amount (base-10 integer string, 6 decimals) of at most ${MAX_AMOUNT_MICRO} (${MAX_AMOUNT_USD} USD)`,
  );
