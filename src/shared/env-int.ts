/**
 * The zod schema of a whole-number environment variable within bounds, with its default: every process's
 * configuration (the API's, the gate's) reads its counts, sizes and time-outs this way.
 *
 * Defends: a variable that is not a whole number, or out of its range, stops the start (zod names it);
 * an unset one takes its default. Does not: say the unit — the variable's name and its docs do.
 */
import { z } from 'zod';

export function envInt(min: number, max: number, fallback: number) {
  return z.coerce.number().int().min(min).max(max).default(fallback);
}
