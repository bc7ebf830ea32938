/**
 * Temporary directories that live as long as the test file that made them: `fileTempDir(prefix)` creates one
 * under the system's temporary folder and records it, and the root hooks remove every recorded directory when
 * the file ends (./root-hooks.ts), so a run leaves none behind (an `xx` home per CLI test, hundreds a run).
 * Does not: remove a directory a test still uses after its file ended, or clean up after a killed process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made = new Set<string>();

/** A new directory `<tmp>/<prefix>XXXXXX`, removed when the current test file ends. */
export function fileTempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** Removes every directory fileTempDir made so far (the root hooks call it as each file ends). */
export function removeFileTempDirs(): void {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
  made.clear();
}
