/**
 * What a sandbox demo registered with the local API (its seller, PATs, pay-to address), kept in a state file
 * (0600) for the next start. The demo seller and the gate's demo seller both start this way.
 *
 * Defends: a demo left holding a PAT the API no longer knows (the database was reset since) or a pay-to address
 * it no longer uses — the stored registration is reused only while `stillGood` says so, else registered anew.
 * Does not: encrypt the file (the sandbox is loopback only; the file holds sandbox PATs).
 */
import fs from 'node:fs';

export async function reuseOrRegister<S>(
  stateFile: string,
  stillGood: (stored: S) => Promise<boolean>,
  register: () => Promise<S>,
): Promise<{ state: S; registered: boolean }> {
  if (fs.existsSync(stateFile)) {
    const stored = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as S;
    if (await stillGood(stored)) return { state: stored, registered: false };
  }
  const state = await register();
  fs.writeFileSync(stateFile, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
  fs.chmodSync(stateFile, 0o600);
  return { state, registered: true };
}

/** Whether the API answers a request carrying `bearer` with a 2xx; false when it cannot be reached. */
export function bearerAccepted(url: string, bearer: string, init: { method?: string } = {}): Promise<boolean> {
  return fetch(url, { ...init, headers: { authorization: `Bearer ${bearer}` } }).then(
    (r) => r.ok,
    () => false,
  );
}
