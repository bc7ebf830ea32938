/**
 * The CLI handoff (`xx dashboard`). A browser asks for it first: /dashboard/cli-handoff without a fragment
 * makes a random code (128 bits, `startHandoff`), keeps it in this origin's localStorage for ten minutes and
 * shows it; `xx dashboard` takes the code and opens /dashboard/cli-handoff#pat=…&state=<code>. Here the
 * fragment is read and removed from the address bar and history before anything renders
 * (history.replaceState), so the PAT is not left in the tab, a bookmark or a screenshot, and the code is
 * taken out of storage (single use). A PAT whose link carries no code, or another code than the one this
 * browser asked with, is refused and never exchanged: a link someone else made cannot sign this browser in
 * as their agent.
 *
 * The code sits in localStorage, not sessionStorage: the CLI opens the link in a new tab, which starts with
 * an empty sessionStorage. It is no credential (it grants nothing without the PAT). `next` (optional, a path
 * inside the dashboard) is where the CLI meant to land. Does not defend: a person who types or pastes an
 * attacker's code into their own `xx dashboard`.
 */
import { BASE } from '../ui/paths';

export type Handoff =
  | { kind: 'handoff'; pat: string; next: string }
  /** A PAT this browser did not ask for (no code, another code, or the code expired): not exchanged. */
  | { kind: 'unrequested' };

const STATE_KEY = 'treasury.cli-handoff';
const STATE_TTL_MS = 10 * 60_000;

let taken: Handoff | null = null;

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** The code this browser asked with, if still fresh; never a stale or malformed one. */
function storedState(): string | null {
  try {
    const held = JSON.parse(localStorage.getItem(STATE_KEY) ?? 'null') as { state?: unknown; at?: unknown } | null;
    if (typeof held?.state !== 'string' || typeof held.at !== 'number') return null;
    return Date.now() - held.at < STATE_TTL_MS ? held.state : null;
  } catch {
    return null;
  }
}

/** The code for `xx dashboard --state`: the live one this browser already asked with, or a new one. */
export function startHandoff(): string {
  const live = storedState();
  if (live) return live;
  const state = base64url(crypto.getRandomValues(new Uint8Array(16)));
  localStorage.setItem(STATE_KEY, JSON.stringify({ state, at: Date.now() }));
  return state;
}

/** Reads and clears the fragment, and the stored code with it; call once, first thing. */
export function captureHandoff(): void {
  if (location.pathname !== `${BASE}/cli-handoff` || !location.hash) return;
  const fields = new URLSearchParams(location.hash.slice(1));
  history.replaceState(null, '', location.pathname + location.search);
  const pat = fields.get('pat');
  if (!pat) return;
  const asked = storedState();
  localStorage.removeItem(STATE_KEY);
  const state = fields.get('state');
  if (asked === null || state !== asked) {
    taken = { kind: 'unrequested' };
    return;
  }
  const next = fields.get('next') ?? '/';
  taken = { kind: 'handoff', pat, next: next.startsWith('/') && !next.startsWith('//') ? next : '/' };
}

/** The captured handoff, once. */
export function takeHandoff(): Handoff | null {
  const h = taken;
  taken = null;
  return h;
}
