/**
 * How many public catalogue reads one API process runs against PostgreSQL at once (reads the answer cache,
 * ./discovery-cache.ts, could not answer): at most `max` (DISCOVERY_READ_SLOTS, 4 of the pool's 20
 * connections); a read asked for while they are all taken is refused at once — 503 `database_busy` with
 * Retry-After: 1 — not queued. A slot is given back when its read settles, however it settles.
 *
 * Defends: anonymous catalogue searches holding the whole connection pool (and the database's CPU), so that
 * payments, sign-ins and every tenant's other reads wait behind them. Does not defend: the catalogue itself
 * against such a flood (its readers get 503s while it lasts; the per-address rate limit,
 * src/api/http/middleware/rate-limit.ts, is what spreads it between callers); several API processes (each has
 * its own slots).
 */
import { AppError } from '../errors/app-error.js';

/** Catalogue reads one process runs at once, at most. */
export const DISCOVERY_READ_SLOTS = 4;

export class DiscoveryReadSlots {
  private taken = 0;

  constructor(readonly max: number = DISCOVERY_READ_SLOTS) {}

  /** `read()`'s answer if a slot is free (held until it settles); else a 503 `database_busy`. */
  async run<T>(read: () => Promise<T>): Promise<T> {
    if (this.taken >= this.max)
      throw new AppError('database_busy', {
        message: 'The public catalogue is answering as many reads as it may at once; retry shortly.',
        headers: { 'Retry-After': '1' },
      });
    this.taken++;
    try {
      return await read();
    } finally {
      this.taken--;
    }
  }

  /** Slots taken now (for tests and metrics). */
  get inUse(): number {
    return this.taken;
  }
}
