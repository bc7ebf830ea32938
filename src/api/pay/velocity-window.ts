/**
 * The velocity cap's rolling window as a remembered snapshot carries it between payments: the count of
 * payments inside the window and the times of its oldest ones (SNAPSHOT_SQL `recent`: the count and up to
 * VELOCITY_TIMES_KEPT oldest times, in microseconds since the epoch, as PostgreSQL stores them).
 *
 * Why: the window only loses payments as time passes, one at a time, each when its own time leaves it. A
 * count remembered with only its oldest payment is exact until that one leaves — for a wallet paid steadily
 * that is about every payment, so nearly every payment read the wallet again. Knowing the oldest times, the
 * count is aged exactly: each known time that left the window takes one off; the unknown ones are all newer
 * than the newest known one, so while one known time is still inside, the count is exact.
 *
 * Defends: a decision on a count lower than the database's — the count is aged only by times known to have
 * left (compared in microseconds with the same bound as the SQL: created_at > now − window), and when no
 * known time is left while unknown ones remain the snapshot is not used (`undefined`: read again).
 * Does not defend: payments released since the read (a reservation given back no longer counts in the
 * database) — the remembered count still holds them, which can only deny, never allow, too much.
 */

/** Oldest payment times a snapshot read returns with the count (see SNAPSHOT_SQL). */
export const VELOCITY_TIMES_KEPT = 32;

export interface VelocityWindow {
  /** Payments inside the window (released ones excluded). */
  count: number;
  /** The oldest of them, oldest first, in µs since the epoch: all of them when `count === oldest_us.length`. */
  oldest_us: number[];
}

/**
 * The window at `now` (the count exact at `now`), or undefined when it cannot be known without reading it
 * again: every known time left the window and others, unknown, remain.
 */
export function ageVelocityWindow(
  recent: VelocityWindow,
  windowSeconds: number,
  now: Date,
): VelocityWindow | undefined {
  const startUs = now.getTime() * 1000 - windowSeconds * 1_000_000;
  let left = 0;
  while (left < recent.oldest_us.length && recent.oldest_us[left]! <= startUs) left++;
  const aged = left === 0 ? recent : { count: recent.count - left, oldest_us: recent.oldest_us.slice(left) };
  if (aged.oldest_us.length === 0 && aged.count > 0) return undefined;
  return aged;
}

/** The window after a payment at `at` (newer than every payment it holds) was reserved. */
export function addToVelocityWindow(recent: VelocityWindow, at: Date): VelocityWindow {
  const complete = recent.count === recent.oldest_us.length;
  // Only a complete list can take the new time at its end: otherwise unknown times lie between.
  const oldest =
    complete && recent.oldest_us.length < VELOCITY_TIMES_KEPT
      ? [...recent.oldest_us, at.getTime() * 1000]
      : recent.oldest_us;
  return { count: recent.count + 1, oldest_us: oldest };
}
