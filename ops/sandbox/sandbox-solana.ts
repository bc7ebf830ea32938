/**
 * The sandbox's offline Solana chain (ops/solana/local-solana.ts, docs/solana-local-chain.md): litesvm behind a
 * loopback JSON-RPC that answers as devnet, the USDC mint, the official x402 SVM facilitator, then the faucet
 * over HTTP (./solana/solana-faucet-server.ts) and an official x402 seller paid in USDC on it
 * (./solana/solana-demo-seller.ts). Ports: TREASURY_SANDBOX_SOLANA_{RPC,FACILITATOR,FAUCET,SELLER}_PORT (8899,
 * 4023, 8548, 8406; 0 = any free port). TREASURY_SANDBOX_SOLANA=0 leaves all of it out. stop() closes the
 * seller, the faucet, then the chain; a start failing half-way stops what had started.
 * Does not: reach a public cluster; the RPC the sandbox's API reads is loopback only (./solana/solana-rpc-loopback.ts).
 */
import path from 'node:path';
import type { Logger } from 'pino';
import type { LocalSolana } from '../solana/local-solana.js';
import { dataDir, sandboxPort, say } from './sandbox-settings.js';
import { assertLoopbackSolanaRpc } from './solana/solana-rpc-loopback.js';

/** Each part's port variable and default (0 = any free port). */
const SOLANA_PORTS = {
  rpc: ['TREASURY_SANDBOX_SOLANA_RPC_PORT', 8899],
  facilitator: ['TREASURY_SANDBOX_SOLANA_FACILITATOR_PORT', 4023],
  faucet: ['TREASURY_SANDBOX_SOLANA_FAUCET_PORT', 8548],
  seller: ['TREASURY_SANDBOX_SOLANA_SELLER_PORT', 8406],
} as const;

/** `{ port }` for a part from its variable, or nothing (any free port). */
function portOf(part: keyof typeof SOLANA_PORTS): { port?: number } {
  const [name, fallback] = SOLANA_PORTS[part];
  const port = sandboxPort(name, fallback);
  return port === undefined ? {} : { port };
}

export interface SandboxSolana {
  chain: LocalSolana;
  faucetUrl: string;
  demoSellerUrl: string;
  demoSellerPayTo: string;
  stop(): Promise<void>;
}

/** Whether `npm start` runs the Solana chain (TREASURY_SANDBOX_SOLANA, default on). */
export function sandboxSolanaEnabled(): boolean {
  return process.env.TREASURY_SANDBOX_SOLANA !== '0';
}

/**
 * TREASURY_SOLANA_RPC_URL for the sandbox's API: the sandbox's own chain, else the one the environment names
 * (a local validator), else none (no Solana chain served). Each is loopback or the start stops here.
 */
export function sandboxSolanaApiEnv(solana: SandboxSolana | undefined): {
  TREASURY_SOLANA_RPC_URL: string | undefined;
} {
  const inherited = process.env.TREASURY_SOLANA_RPC_URL || undefined;
  if (inherited !== undefined) assertLoopbackSolanaRpc(inherited, 'TREASURY_SOLANA_RPC_URL');
  const url = solana?.chain.rpcUrl ?? inherited;
  return { TREASURY_SOLANA_RPC_URL: url === undefined ? undefined : assertLoopbackSolanaRpc(url, 'the Solana RPC') };
}

/** Refuses a bad Solana setting (a non-loopback inherited RPC, a port out of range) before any part starts. */
export function checkSandboxSolanaSettings(): void {
  sandboxSolanaApiEnv(undefined);
  if (!sandboxSolanaEnabled()) return;
  for (const part of Object.keys(SOLANA_PORTS) as Array<keyof typeof SOLANA_PORTS>) portOf(part);
}

async function solanaLogger(): Promise<Logger> {
  const pino = (await import('pino')).default;
  return pino(
    { level: 'info' },
    pino.destination({ dest: path.join(dataDir, 'solana.log'), append: true, mkdir: true, sync: false }),
  );
}

export async function startSandboxSolana(): Promise<SandboxSolana | undefined> {
  if (!sandboxSolanaEnabled()) return undefined;
  say('• starting the local Solana chain (litesvm as devnet, USDC, faucet, x402 facilitator, demo seller)');
  // Loaded only when the chain runs: litesvm and the x402 SVM packages take seconds to load on a busy machine.
  const [{ startLocalSolana }, { startSolanaFaucetServer }, { startSolanaDemoSeller }] = await Promise.all([
    import('../solana/local-solana.js'),
    import('./solana/solana-faucet-server.js'),
    import('./solana/solana-demo-seller.js'),
  ]);
  const logger = await solanaLogger();
  const { port: rpcPort } = portOf('rpc');
  const { port: facilitatorPort } = portOf('facilitator');
  const chain = await startLocalSolana({
    logger,
    ...(rpcPort === undefined ? {} : { rpcPort }),
    ...(facilitatorPort === undefined ? {} : { facilitatorPort }),
  });
  const stops: Array<() => Promise<void>> = [() => chain.stop()];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  };
  try {
    const faucet = await startSolanaFaucetServer(chain, {
      logger: logger.child({ component: 'solana-faucet' }),
      ...portOf('faucet'),
    });
    stops.push(() => faucet.close());
    const seller = await startSolanaDemoSeller(chain, {
      logger: logger.child({ component: 'solana-demo-seller' }),
      ...portOf('seller'),
    });
    stops.push(() => seller.stop());
    return { chain, faucetUrl: faucet.url, demoSellerUrl: seller.url, demoSellerPayTo: seller.payTo, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
