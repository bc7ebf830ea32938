/**
 * The sandbox's local chain (./chain/local-chain.ts): anvil from npm (chain id 84532), the EIP-3009 test USDC at
 * the Base Sepolia USDC address, a faucet and an x402 facilitator on the official packages, on the ports
 * TREASURY_SANDBOX_{RPC,FAUCET,FACILITATOR}_PORT name (8545, 8547, 4022; 0 = any free port), logging under the
 * data directory. TREASURY_SANDBOX_CHAIN=0 skips it, and with it the demo seller and the gate.
 * Does not: reach a public chain.
 */
import path from 'node:path';
import { startLocalChain, type LocalChain } from './chain/local-chain.js';
import { dataDir, sandboxPort, say } from './sandbox-settings.js';

export async function startSandboxChain(): Promise<LocalChain | undefined> {
  if (process.env.TREASURY_SANDBOX_CHAIN === '0') return undefined;
  say('• starting the local chain (anvil, test USDC, faucet, x402 facilitator)');
  const anvilPort = sandboxPort('TREASURY_SANDBOX_RPC_PORT', 8545);
  const faucetPort = sandboxPort('TREASURY_SANDBOX_FAUCET_PORT', 8547);
  const facilitatorPort = sandboxPort('TREASURY_SANDBOX_FACILITATOR_PORT', 4022);
  const pino = (await import('pino')).default;
  const chainLog = pino(
    { level: 'info' },
    pino.destination({ dest: path.join(dataDir, 'chain.log'), append: true, mkdir: true, sync: false }),
  );
  return startLocalChain({
    anvilLogFile: path.join(dataDir, 'anvil.log'),
    cacheDir: path.join(dataDir, 'cache'),
    logger: chainLog,
    ...(anvilPort === undefined ? {} : { anvilPort }),
    ...(faucetPort === undefined ? {} : { faucetPort }),
    ...(facilitatorPort === undefined ? {} : { facilitatorPort }),
  });
}
