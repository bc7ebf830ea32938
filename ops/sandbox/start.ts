/**
 * `npm start`: the local sandbox on embedded defaults, everything under ./.treasury/ (git-ignored), started in
 * this order, each step in a file of its own:
 * embedded PostgreSQL (unless DATABASE_URL is set) → migrations (their own step; ./sandbox-database.ts) → the
 * signer's own database and role (./sandbox-signer-database.ts) →
 * SoftHSM token and root KEK, or the KMS emulator with TREASURY_SANDBOX_KEY_BACKEND=aws-kms
 * (./sandbox-key-backend.ts) → local chain (./sandbox-chain.ts; TREASURY_SANDBOX_CHAIN=0 skips it) → the offline
 * Solana chain, its faucet and demo seller (./sandbox-solana.ts; TREASURY_SANDBOX_SOLANA=0 skips it) →
 * treasury-signer → treasury-api (./sandbox-services.ts) → the demo seller, and the demo origin behind
 * treasury-gate (./sandbox-demos.ts, docs/gate.md). Writes ./.treasury/sandbox.json (mode 0600;
 * ./sandbox-file.ts) once ready, prints where everything is (./sandbox-summary.ts), and stops everything on
 * Ctrl-C / SIGTERM or when its parent goes away (./sandbox-shutdown.ts). Ports and variables:
 * ./sandbox-settings.ts and docs/configuration.md.
 * Does not: outlive its parent, nor leave a child running after it stops (each child exits with its parent).
 */
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, say } from './sandbox-settings.js';
import { noParts, type SandboxParts } from './sandbox-parts.js';
import type { ProcessOwner } from './sandbox-process.js';
import { shutdownSandbox } from './sandbox-shutdown.js';
import { startSandboxDatabase } from './sandbox-database.js';
import { startSandboxKeys } from './sandbox-key-backend.js';
import { sandboxSignerDatabase } from './sandbox-signer-database.js';
import { startSandboxChain } from './sandbox-chain.js';
import { checkSandboxSolanaSettings, startSandboxSolana } from './sandbox-solana.js';
import { SandboxError } from './sandbox-error.js';
import { startSandboxApi, startSandboxSigner } from './sandbox-services.js';
import { startSandboxDemos } from './sandbox-demos.js';
import { writeSandboxFile } from './sandbox-file.js';
import { saySummary } from './sandbox-summary.js';

const parts: SandboxParts = noParts();
const shutdown = (code: number) => shutdownSandbox(parts, code);
const owner: ProcessOwner = {
  children: parts.children,
  onLateExit: (name, code, signal) => {
    if (parts.stopping) return;
    say(`${name} exited unexpectedly (code ${code}, signal ${signal}); stopping the sandbox`);
    void shutdown(1);
  },
};

/** Stops on Ctrl-C, SIGTERM, or when the parent goes away (npm does not forward SIGTERM to its script). */
function stopWithSignalsAndParent(): void {
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void shutdown(0);
  }, 1000).unref();
}

async function main(): Promise<void> {
  // When npm has already gone (Ctrl-C reaches it too), writing to its closed pipe must not kill the shutdown.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o711 });
  stopWithSignalsAndParent();
  checkSandboxSolanaSettings();

  const databaseUrl = await startSandboxDatabase(parts);
  const signerStore = await sandboxSignerDatabase(databaseUrl, !process.env.DATABASE_URL);
  const { keyBackend, signerEnv } = await startSandboxKeys(parts);
  parts.localChain = await startSandboxChain();
  parts.solana = await startSandboxSolana();
  const signerSocket = await startSandboxSigner(owner, { ...signerEnv, ...signerStore });
  const { localChain, solana } = parts;
  const { apiUrl, adminToken } = await startSandboxApi(owner, { databaseUrl, signerSocket, localChain, solana });
  const gate = await startSandboxDemos(parts, owner, apiUrl);
  const started = {
    parts,
    apiUrl,
    adminToken,
    signerSocket,
    keyBackend,
    dashboardUrl: (process.env.TREASURY_DASHBOARD_URL ?? `${apiUrl}/dashboard`).replace(/\/+$/, ''),
    sandboxFile: path.join(dataDir, 'sandbox.json'),
    ...(gate ? { gate } : {}),
  };
  writeSandboxFile(started);
  saySummary(started);
}

main().catch(async (err: unknown) => {
  const code = err instanceof SandboxError ? ` (${err.code})` : '';
  process.stderr.write(`sandbox failed to start${code}: ${err instanceof Error ? err.message : String(err)}\n`);
  await shutdown(1);
});
