/**
 * Profile names of the credentials file (docs/cli.md, "Credentials") and the one way a profile is looked up:
 * a name as `--profile` takes it (PROFILE_NAME: a letter or digit, then letters, digits, `_`, `.` or `-`, at
 * most 64 characters; anything else is exit 2 naming the flag), and a lookup that finds the file's own
 * profiles only. `loadCredentials` (./cli-state.ts) hands the profiles out as a record with no prototype, so
 * a write under any name stays a profile too.
 *
 * Defends: a user-chosen name reaching the object prototype — `--profile constructor` finding a "profile"
 * that is `Object`, `--profile __proto__` storing a token that is never written — and so a command running
 * with another bearer, or none, instead of `profile_not_found`. Does not: check the token a profile holds.
 */
import { CliError } from './cli-error.js';
import type { Credentials } from './cli-state.js';

export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export type Profile = Credentials['profiles'][string];

/** A profile name from a flag (or argument), or `invalid_argument` (exit 2) naming it. */
export function profileNameArgument(name: string, flag = '--profile'): string {
  if (PROFILE_NAME.test(name)) return name;
  throw new CliError({
    code: 'invalid_argument',
    userMessage: `${flag}: a profile name is a letter or digit, then letters, digits, _ . or - (at most 64).`,
    exitCode: 2,
    details: { flag },
  });
}

/** The profile of that name the file holds itself (never one of the object prototype's keys), or undefined. */
export function profileOf(credentials: Credentials, name: string | undefined): Profile | undefined {
  return name !== undefined && Object.hasOwn(credentials.profiles, name) ? credentials.profiles[name] : undefined;
}
