/**
 * The CLI's home directory (XX_HOME, default ~/.xx: ./cli-paths.ts) as `xx` accepts it, the way ssh accepts
 * ~/.ssh: when it exists it must be owned by the user running `xx` (or root) and not writable by group or
 * others; else every command stops with `unsafe_home` (exit 1) naming the directory and the fix. A home that
 * does not exist yet is fine (the CLI creates it 0700: ./secret-file.ts). Not checked where there are no
 * POSIX owners (Windows).
 *
 * Defends: another local user planting settings in the home (`env/<XX_ENV>.env` sets XX_API_URL: the PAT
 * would go to their server), or swapping the credentials and agent records in it. Does not: check the
 * directories above it, nor paths moved out of it by XX_*_PATH overrides.
 */
import fs from 'node:fs';
import { CliError } from './cli-error.js';

export function checkHomeDir(root: string, named: boolean): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  let stat: fs.Stats;
  try {
    stat = fs.statSync(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const what = named ? `XX_HOME (${root})` : `The CLI's home ${root}`;
  const mode = (stat.mode & 0o777).toString(8).padStart(3, '0');
  const refuse = (why: string, fix: string) =>
    new CliError({
      code: 'unsafe_home',
      userMessage: `${what} ${why}: another user could change its settings and credentials. ${fix}`,
      details: { path: root, owner_uid: stat.uid, mode },
    });
  if (!stat.isDirectory())
    throw new CliError({ code: 'unsafe_home', userMessage: `${what} is not a directory.`, details: { path: root } });
  if (stat.uid !== uid && stat.uid !== 0)
    throw refuse(`is owned by uid ${stat.uid}, not by you (uid ${uid})`, 'Use a directory of your own.');
  if (stat.mode & 0o022)
    throw refuse(`is writable by group or others (mode ${mode})`, `Run \`chmod go-w ${root}\` (or chmod 700).`);
}
