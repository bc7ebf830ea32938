/**
 * A Node child process for the bench's machine baselines (./wake-up-cost.ts, ./wake-placement.ts): it runs
 * `code`, which listens on the unix socket path it gets as its argument and prints "up" once listening, and
 * the bench holds a connected socket to it (no Nagle delay). `stop` ends the child and removes the socket's
 * directory.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export async function startSocketChild(code: string): Promise<{ socket: net.Socket; stop(): void }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-bench-child-'));
  const socketPath = path.join(dir, 'child.sock');
  const child = spawn(process.execPath, ['-e', code, socketPath], { stdio: ['ignore', 'pipe', 'inherit'] });
  const stop = () => {
    child.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout!.once('data', () => resolve());
      child.once('exit', (exitCode) => reject(new Error(`bench child process exited (${exitCode})`)));
    });
    const socket = net.connect(socketPath);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.setNoDelay(true);
    return { socket, stop };
  } catch (err) {
    stop();
    throw err;
  }
}
