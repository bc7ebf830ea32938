/**
 * Starts and stops the server children of `bench/x402-middleware-bench.ts` (bench/support/x402-bench-servers.ts,
 * one role per process) and asks them for their CPU counters over IPC, one question at a time. Every child is
 * started the same way whatever our code's mode (`--import tsx`; BENCH_CODE only changes where the koa and gate
 * roles import our modules from), so @x402/express's process is the same in every run.
 *
 * Limits: a child that never reports ready fails the run after 60 s; stats time out after 5 s.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerStats } from './x402-bench-servers.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');

export type ServerRole = 'express' | 'koa' | 'platform' | 'facilitator' | 'origin' | 'gate';

export interface ServerChild {
  name: string;
  port: number;
  child: ChildProcess;
  /** Its counters; with `collect`, after a full collection, with the live heap (at a run's start and end only). */
  stats(collect?: boolean): Promise<ServerStats>;
}

/** The stats question, queued so that two answers are never confused. */
function statsOf(child: ChildProcess, role: string): (collect?: boolean) => Promise<ServerStats> {
  let queue = Promise.resolve() as Promise<unknown>;
  return (collect = false) => {
    const next = queue.then(
      () =>
        new Promise<ServerStats>((res, rej) => {
          const t = setTimeout(() => rej(new Error(`${role} server did not answer a stats request`)), 5_000);
          child.once('message', (m: ServerStats) => {
            clearTimeout(t);
            res(m);
          });
          child.send({ type: 'stats', collect });
        }),
    );
    queue = next.catch(() => undefined);
    return next;
  };
}

export function startServer(
  role: ServerRole,
  env: NodeJS.ProcessEnv,
  profileName: string = role,
): Promise<ServerChild> {
  const profileDir = process.env.BENCH_CPU_PROFILE_DIR;
  const execArgv = [
    '--import',
    'tsx',
    ...(profileDir && role !== 'platform' && role !== 'origin'
      ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, profileName)}`]
      : []),
  ];
  const child = fork(path.join(HERE, 'x402-bench-servers.ts'), [role], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${role} server not ready after 60 s`)), 60_000);
    child.once('exit', (code, signal) =>
      reject(new Error(`${role} server exited (${code ?? signal}) before it was ready`)),
    );
    child.on('message', function onReady(msg: { type?: string; port?: number }) {
      if (msg?.type !== 'ready') return;
      clearTimeout(timer);
      child.off('message', onReady);
      resolve({ name: role, port: msg.port!, child, stats: statsOf(child, role) });
    });
  });
}

export async function stopServer(server: ServerChild): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => server.child.once('exit', () => resolve()));
  // Disconnecting makes the child exit normally, so a --cpu-prof profile gets written.
  server.child.disconnect();
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
