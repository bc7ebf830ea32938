/**
 * A child process as the leader of its own process group (`detached`), so that a test can signal the whole
 * group as a terminal's Ctrl-C would, with its standard output and error captured together. For the sandbox
 * harness and the embedded PostgreSQL tests. It does not stop the group: each caller signals it as its test
 * requires.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

export interface DetachedChild {
  child: ChildProcess;
  /** Everything it wrote to standard output and error so far. */
  output(): string;
  /** Resolves with its exit code once it has exited. */
  exited: Promise<number | null>;
}

export function spawnDetached(
  command: string,
  args: string[],
  options: Omit<SpawnOptions, 'stdio' | 'detached'>,
): DetachedChild {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}
