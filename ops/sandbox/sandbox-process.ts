/**
 * Starts one of Treasury's own processes for the sandbox (the signer, the API, the gate): compiled when
 * `npm run build` is current, else through tsx (bin/build-freshness.mjs, the rule bin/xx.mjs follows), with
 * its start-up flags (../node-flags.ts) and TREASURY_EXIT_WITH_PARENT=1 so that it never outlives the sandbox.
 * Each line it prints goes to `<data dir>/<name>.log` (0600); the start resolves once a line matches `ready`
 * (its message, its fields) and fails when the process exits first or is not ready within 60 s. The child is
 * registered as soon as it is spawned, so that a shutdown during the start stops it too.
 * Does not: restart a process; a process exiting after it was ready is reported to `onLateExit`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { nodeArgsFor } from '../../bin/build-freshness.mjs';
import { nodeFlagsFor } from '../node-flags.js';
import { dataDir, ROOT } from './sandbox-settings.js';
import type { NamedChild } from './sandbox-parts.js';

export type ReadyLine = (msg: string, fields: Record<string, unknown>) => boolean;

export interface ProcessToStart {
  name: string;
  entry: string;
  env: NodeJS.ProcessEnv;
  ready: ReadyLine;
}

export interface ProcessOwner {
  children: NamedChild[];
  /** Called when the process exits after it was ready. */
  onLateExit(name: string, code: number | null, signal: NodeJS.Signals | null): void;
}

const READY_WITHIN_MS = 60_000;

/** A log line's message and fields: a JSON line's `msg` and keys, or a plain line as it is. */
function parseLine(line: string): { msg: string; fields: Record<string, unknown> } {
  try {
    const fields = JSON.parse(line) as Record<string, unknown>;
    return { msg: String(fields.msg ?? line), fields };
  } catch {
    return { msg: line, fields: {} };
  }
}

export function startProcess(owner: ProcessOwner, { name, entry, env, ready }: ProcessToStart): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeFlagsFor(entry), ...nodeArgsFor(entry)], {
      cwd: ROOT,
      env: { ...process.env, ...env, TREASURY_EXIT_WITH_PARENT: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    owner.children.push({ name, child });
    const logPath = path.join(dataDir, `${name}.log`);
    const logFile = fs.createWriteStream(logPath, { flags: 'a', mode: 0o600 });
    let isReady = false;
    const timer = setTimeout(
      () => reject(new Error(`${name} did not become ready within 60 s; see ${logPath}`)),
      READY_WITHIN_MS,
    );
    for (const stream of [child.stdout!, child.stderr!]) {
      readline.createInterface({ input: stream }).on('line', (line) => {
        logFile.write(line + '\n');
        const { msg, fields } = parseLine(line);
        if (!isReady && ready(msg, fields)) {
          isReady = true;
          clearTimeout(timer);
          resolve(child);
        }
      });
    }
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (!isReady)
        reject(new Error(`${name} exited (code ${code}, signal ${signal}) before it was ready; see ${logPath}`));
      else owner.onLateExit(name, code, signal);
    });
  });
}
