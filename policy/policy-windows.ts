/**
 * UTC calendar windows for the window caps (day from 00:00 UTC, ISO week from Monday 00:00 UTC, month from
 * the 1st 00:00 UTC) and the start of the rolling velocity window. Pure: time is always passed in.
 */
export interface PolicyWindows {
  dayStart: Date;
  weekStart: Date;
  monthStart: Date;
}

export function policyWindows(now: Date): PolicyWindows {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  const dayStart = new Date(Date.UTC(y, m, d));
  const sinceMonday = (now.getUTCDay() + 6) % 7;
  return { dayStart, weekStart: new Date(Date.UTC(y, m, d - sinceMonday)), monthStart: new Date(Date.UTC(y, m, 1)) };
}

export function velocityWindowStart(windowSeconds: number, now: Date): Date {
  return new Date(now.getTime() - windowSeconds * 1000);
}
