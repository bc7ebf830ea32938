/**
 * The velocity cap's rolling window as a remembered state carries it between payments: the count of payments
 * inside the window and the times of its oldest ones (up to VELOCITY_TIMES_KEPT, in microseconds since the epoch,
 * as PostgreSQL stores them) — read with the count by the API's snapshot (src/api/pay/store/pay-statements.ts
 * SNAPSHOT_SQL) and by the signer's store (signer/owner-policy/spend-statements.ts `readSpendStates`). Pure.
 *
 * Why: the window only loses payments as time passes, one at a time, each when its own time leaves it. A
 * count remembered with only its oldest payment is exact until that one leaves — for a wallet paid steadily
 * that is about every payment, so nearly every payment read the wallet again. Knowing the oldest times, the
 * count is aged exactly: each known time that left the window takes one off; the unknown ones are all newer
 * than the newest known one, so while one known time is still inside, the count is exact.
 *
 * When every known time has left and unknown ones remain, the API reads the window on rather than counting it
 * again (`velocityReadPoint`, `velocityWindowReadOn`; src/api/pay/store/pay-statements.ts VELOCITY_READ_ON_SQL):
 * the times of the next payments in it, and how many of the unknown ones left it since the last known time —
 * rows between that time and the window's start, not every row of the window. A wallet paid R times a second
 * with a window of W seconds was otherwise counted in full (R × W rows) every 32 payments. The signer keeps the
 * count it has then, aged by every time it knew (`ageVelocityWindowFrom`): too high at worst, which its store
 * decides again on a read before a refusal stands.
 *
 * Defends: a decision on a count lower than the database's — the count is aged only by times known to have
 * left (compared in microseconds with the same bound as the SQL: created_at > now − window), and when no
 * known time is left while unknown ones remain the count is not taken as exact (read on, read again, or kept
 * high). Read on, the count loses only rows found between the newest known time and the window's start, less
 * the known ones at that very time (already taken off): a payment at the same time as the last known one is
 * never taken off twice, and one released meanwhile is not found, so the count can only stay high. A read
 * on that cannot agree with the count (more times found in the window than it holds) is not used: the
 * wallet is read again in full.
 * Does not defend: payments released or given back since the read — the remembered count still holds them,
 * which can only deny, never allow, too much (the API forgets a snapshot whose reservation this process
 * releases, and one released through another process appends to the wallet's audit chain, which refuses the
 * next write decided on it: docs/adr/0006); a clock stepped back — payments the window lost at a later reading
 * are not counted again, as the database would count them at the earlier one (a time listed out of order only
 * keeps the count high: it is read on from the newest known time).
 */

/** Oldest payment times a read returns with the count. */
export const VELOCITY_TIMES_KEPT = 32;

export interface VelocityWindow {
  /** Payments inside the window (released ones excluded). */
  count: number;
  /** The oldest of them, oldest first, in µs since the epoch: all of them when `count === oldest_us.length`. */
  oldest_us: number[];
}

/** Where the window of `windowSeconds` ending at `now` starts (exclusive, µs since the epoch), as the SQL bounds it. */
const windowStartUs = (windowSeconds: number, now: Date) => now.getTime() * 1000 - windowSeconds * 1_000_000;

/**
 * The window at `now` (the count exact at `now`), or undefined when it cannot be known without reading it
 * again: every known time left the window and others, unknown, remain.
 */
export function ageVelocityWindow(
  recent: VelocityWindow,
  windowSeconds: number,
  now: Date,
): VelocityWindow | undefined {
  const aged = ageVelocityWindowFrom(recent, windowStartUs(windowSeconds, now));
  if (aged.oldest_us.length === 0 && aged.count > 0) return undefined;
  return aged;
}

/**
 * The window once it starts at `startUs` (exclusive, µs since the epoch): every known time at or before it taken
 * off, from the oldest on. Exact while a known time is still inside; once none is, the unknown ones that left are
 * still counted — never fewer than the store holds.
 */
export function ageVelocityWindowFrom(recent: VelocityWindow, startUs: number): VelocityWindow {
  let left = 0;
  while (left < recent.oldest_us.length && recent.oldest_us[left]! <= startUs) left++;
  return left === 0 ? recent : { count: recent.count - left, oldest_us: recent.oldest_us.slice(left) };
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

/**
 * Where a window whose known times have all left is read on from: the newest known time (µs), how many known
 * times were at exactly that time (already taken off the count), and the count once they were.
 */
export interface VelocityReadPoint {
  lastKnownUs: number;
  knownAtLast: number;
  count: number;
}

/**
 * What a read on found (the API's VELOCITY_READ_ON_SQL, the signer's `readVelocityOn`): the oldest times still in the window, and the payments from the
 * last known time to the window's start (counted only when the times fill a list; 0 otherwise).
 */
export interface VelocityReadOn {
  left: number;
  oldest_us: number[];
}

/**
 * The point to read `recent` on from at `now`, when `ageVelocityWindow` cannot know its count there (every
 * known time left, unknown ones remain); undefined otherwise.
 */
export function velocityReadPoint(
  recent: VelocityWindow,
  windowSeconds: number,
  now: Date,
): VelocityReadPoint | undefined {
  return velocityReadPointFrom(recent, windowStartUs(windowSeconds, now));
}

/** `velocityReadPoint` for a window starting at `startUs` (exclusive, µs since the epoch). */
export function velocityReadPointFrom(recent: VelocityWindow, startUs: number): VelocityReadPoint | undefined {
  const known = recent.oldest_us;
  if (known.length === 0 || recent.count <= known.length) return undefined;
  // The newest known time, not the last listed: a clock stepped back appends an older time after newer ones, and a
  // known time after the point would be found left again and taken off twice.
  let lastKnownUs = known[0]!;
  let knownAtLast = 0;
  for (const t of known) {
    if (t > lastKnownUs) [lastKnownUs, knownAtLast] = [t, 0];
    if (t === lastKnownUs) knownAtLast++;
  }
  if (lastKnownUs > startUs) return undefined;
  return { lastKnownUs, knownAtLast, count: recent.count - known.length };
}

/**
 * The window once read on from `point`, or undefined when the read cannot agree with the count (read the wallet
 * again in full). Fewer than VELOCITY_TIMES_KEPT times found is every payment in the window, as a full read
 * would count it (the caller reads on after the wallet's writes in this process committed).
 */
export function velocityWindowReadOn(point: VelocityReadPoint, found: VelocityReadOn): VelocityWindow | undefined {
  const { oldest_us } = found;
  if (oldest_us.length > VELOCITY_TIMES_KEPT || !Number.isSafeInteger(found.left)) return undefined;
  if (oldest_us.length < VELOCITY_TIMES_KEPT) return { count: oldest_us.length, oldest_us };
  const left = Math.max(0, found.left - point.knownAtLast);
  const count = point.count - left;
  return count >= oldest_us.length ? { count, oldest_us } : undefined;
}

/** A time in µs since the epoch as PostgreSQL reads a timestamptz to the microsecond (a Date holds only milliseconds). */
export function timestampFromUs(us: number): string {
  const ms = Math.floor(us / 1000);
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, -1)}${String(us - ms * 1000).padStart(3, '0')}Z`;
}
