/**
 * Stops a sandbox (./sandbox-parts.ts) in the reverse order of its start, each step bounded so that one stuck
 * part cannot keep the rest from stopping: the demo seller first (its last ledger reports need the API), then
 * the child processes newest first (SIGTERM, SIGKILL after 10 s), the demo origin, the KMS emulator, the
 * Solana chain (its demo seller and faucet first), the local chain and PostgreSQL (20 s each); then removes sandbox.json and exits with `code`. Runs once: a second
 * call (a second Ctrl-C, a child exiting during the shutdown) returns at once.
 * Does not: wait for a part that did not stop in its bound; it says so and moves on.
 */
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, say } from './sandbox-settings.js';
import type { NamedChild, SandboxParts } from './sandbox-parts.js';

const STEP_WITHIN_MS = 20_000;
const CHILD_WITHIN_MS = 10_000;

/** Waits for one shutdown step, at most 20 s, so one stuck part cannot keep the sandbox from stopping. */
async function bounded(step: Promise<void> | undefined, what: string): Promise<void> {
  if (!step) return;
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = await Promise.race([
    step.then(
      () => false,
      () => false,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), STEP_WITHIN_MS))),
  ]);
  clearTimeout(timer);
  if (gaveUp) say(`• ${what} did not stop within 20 s; moving on`);
}

const hasExited = ({ child }: NamedChild) => child.exitCode !== null || child.signalCode !== null;

/** SIGTERM, then SIGKILL after 10 s; resolves with whether it had to be killed. */
async function stopChild(named: NamedChild): Promise<boolean> {
  const { child } = named;
  child.kill('SIGTERM');
  return new Promise<boolean>((resolve) => {
    if (hasExited(named)) return resolve(false);
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(true);
    }, CHILD_WITHIN_MS);
    child.once('exit', () => {
      clearTimeout(t);
      resolve(false);
    });
  });
}

export async function shutdownSandbox(parts: SandboxParts, code: number): Promise<void> {
  if (parts.stopping) return;
  parts.stopping = true;
  const began = Date.now();
  const took = () => `${((Date.now() - began) / 1000).toFixed(1)} s`;
  say('• stopping');
  // The demo seller first: its last ledger reports need the API, which stops with the children below.
  await bounded(parts.demoSeller?.stop(), 'the demo seller');
  for (const named of [...parts.children].reverse()) {
    if (hasExited(named)) continue;
    const killed = await stopChild(named);
    say(
      killed ? `• ${named.name} did not stop within 10 s; killed (${took()})` : `• ${named.name} stopped (${took()})`,
    );
  }
  await bounded(parts.demoOrigin?.stop(), 'the demo origin');
  if (parts.kmsEmulator) {
    await bounded(parts.kmsEmulator.close(), 'the KMS emulator');
    say(`• KMS emulator stopped (${took()})`);
  }
  if (parts.solana) {
    await bounded(parts.solana.stop(), 'the Solana chain');
    say(`• Solana chain stopped (${took()})`);
  }
  if (parts.localChain) {
    await bounded(parts.localChain.stop(), 'the local chain');
    say(`• local chain stopped (${took()})`);
  }
  await bounded(parts.stopDatabase(), 'PostgreSQL');
  fs.rmSync(path.join(dataDir, 'sandbox.json'), { force: true });
  say(`sandbox stopped (${took()})`);
  process.exit(code);
}
