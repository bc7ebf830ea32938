/**
 * The parts of a running sandbox, in the order they were started: the child processes (signer, API, gate) and
 * the in-process servers (KMS emulator, local chain, Solana chain, demo seller, demo origin), with the way to stop the
 * embedded PostgreSQL. One object, filled as each part starts, so that the shutdown (./sandbox-shutdown.ts)
 * stops exactly what is running, including after a start that failed half-way.
 * Does not: start or stop anything itself.
 */
import type { ChildProcess } from 'node:child_process';
import type { KmsEmulator } from '../kms-emulator/kms-emulator.js';
import type { LocalChain } from './chain/local-chain.js';
import type { SandboxSolana } from './sandbox-solana.js';
import type { DemoSeller } from './demo-seller.js';
import type { DemoOrigin } from './demo-origin.js';
import type { SandboxKeyBackend } from './sandbox-settings.js';

export interface NamedChild {
  name: string;
  child: ChildProcess;
}

export interface SandboxParts {
  /** Child processes, in the order they were spawned (registered at spawn, before they are ready). */
  children: NamedChild[];
  localChain?: LocalChain;
  /** The offline Solana chain with its faucet and demo seller. */
  solana?: SandboxSolana;
  demoSeller?: DemoSeller;
  demoOrigin?: DemoOrigin;
  kmsEmulator?: KmsEmulator;
  stopDatabase: () => Promise<void>;
  /** Set once the shutdown has begun: a child exiting after it is expected. */
  stopping: boolean;
}

export function noParts(): SandboxParts {
  return { children: [], stopDatabase: async () => undefined, stopping: false };
}

/** The gate in front of the demo origin, as sandbox.json and the summary name it. */
export interface DemoGate {
  url: string;
  demoUrl: string;
  sellerId: string;
  originUrl: string;
}

/** A sandbox once every part is up: what sandbox.json records and the summary prints. */
export interface StartedSandbox {
  parts: SandboxParts;
  apiUrl: string;
  adminToken: string;
  signerSocket: string;
  keyBackend: SandboxKeyBackend;
  dashboardUrl: string;
  sandboxFile: string;
  gate?: DemoGate;
}
