/**
 * The CLI handoff (`xx dashboard` opens /dashboard/cli-handoff#pat=…): the fragment is read and removed
 * from the address bar and from history before anything renders (history.replaceState), so the PAT is not
 * left in the tab, a bookmark or a screenshot. The fragment never reaches a server. `next` (optional, a path
 * inside the dashboard) is where the CLI meant to land.
 */
import { BASE } from '../ui/paths';

export interface Handoff {
  pat: string;
  next: string;
}

let taken: Handoff | null = null;

/** Reads and clears the fragment; call once, first thing. */
export function captureHandoff(): void {
  if (location.pathname !== `${BASE}/cli-handoff` || !location.hash) return;
  const fields = new URLSearchParams(location.hash.slice(1));
  history.replaceState(null, '', location.pathname + location.search);
  const pat = fields.get('pat');
  const next = fields.get('next') ?? '/';
  if (pat) taken = { pat, next: next.startsWith('/') && !next.startsWith('//') ? next : '/' };
}

/** The captured handoff, once. */
export function takeHandoff(): Handoff | null {
  const h = taken;
  taken = null;
  return h;
}
