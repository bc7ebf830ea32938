/**
 * The sandbox's two demo sellers, on the local chain: a Koa seller with one paid route behind our x402
 * middleware (./demo-seller.ts, GET /joke), and a demo origin with no payment code (./demo-origin.ts),
 * registered as a managed-proxy (`mpp`) seller (./demo-gate.ts) with treasury-gate in front of it
 * (docs/gate.md, GET /forecast). Ports: TREASURY_SANDBOX_{SELLER,ORIGIN,GATE}_PORT (8403, 8405, 8404; 0 = any
 * free port). Each part is recorded in the sandbox's parts as soon as it runs.
 * Does not: pay anything; the gate may reach the loopback origin only because GATE_ALLOW_PRIVATE_ORIGINS=1.
 */
import { anvilDevAccount } from './chain/anvil-dev-accounts.js';
import type { LocalChain } from './chain/local-chain.js';
import { startDemoSeller } from './demo-seller.js';
import { startDemoOrigin } from './demo-origin.js';
import { registerDemoGateSeller } from './demo-gate.js';
import { dataDir, sandboxPort, say } from './sandbox-settings.js';
import { startProcess, type ProcessOwner } from './sandbox-process.js';
import type { DemoGate, SandboxParts } from './sandbox-parts.js';

const publicUrlOf = (apiUrl: string) => process.env.TREASURY_PUBLIC_URL ?? apiUrl;

async function startSeller(parts: SandboxParts, apiUrl: string, localChain: LocalChain): Promise<void> {
  say('• starting the demo seller (GET /joke, 0.01 USDC)');
  const sellerPort = sandboxPort('TREASURY_SANDBOX_SELLER_PORT', 8403);
  parts.demoSeller = await startDemoSeller({
    apiUrl,
    publicUrl: publicUrlOf(apiUrl),
    facilitatorUrl: localChain.facilitatorUrl,
    chainId: localChain.chainId,
    network: localChain.network,
    payToKey: anvilDevAccount(2).privateKey,
    dataDir,
    ...(sellerPort === undefined ? {} : { port: sellerPort }),
  });
}

/** Ready once it has read its catalogue (the platform is up, so the first read answers at once). */
async function waitForGateReady(gateUrl: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const status = await fetch(`${gateUrl}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function startGate(
  owner: ProcessOwner,
  env: { gatePat: string; apiUrl: string; localChain: LocalChain },
): Promise<string> {
  const gatePort = sandboxPort('TREASURY_SANDBOX_GATE_PORT', 8404);
  let gateUrl = '';
  await startProcess(owner, {
    name: 'gate',
    entry: 'src/gate/main.ts',
    env: {
      GATE_HOST: '127.0.0.1',
      GATE_PORT: String(gatePort ?? 0),
      GATE_TOKEN: env.gatePat,
      GATE_API_URL: env.apiUrl,
      GATE_NETWORK: env.localChain.network,
      FACILITATOR_URL: env.localChain.facilitatorUrl,
      FACILITATOR_ADDRESS: env.localChain.facilitatorAddress,
      GATE_ALLOW_PRIVATE_ORIGINS: '1', // the demo origin is on loopback
    },
    ready: (msg, fields) => {
      if (msg !== 'treasury-gate ready') return false;
      gateUrl = String(fields.url);
      return true;
    },
  });
  await waitForGateReady(gateUrl);
  return gateUrl;
}

async function startOriginBehindGate(
  parts: SandboxParts,
  owner: ProcessOwner,
  apiUrl: string,
  localChain: LocalChain,
): Promise<DemoGate> {
  say('• starting the demo origin (no payment code) and treasury-gate in front of it (GET /forecast, 0.01 USDC)');
  const originPort = sandboxPort('TREASURY_SANDBOX_ORIGIN_PORT', 8405);
  const demoOrigin = await startDemoOrigin(originPort === undefined ? {} : { port: originPort });
  parts.demoOrigin = demoOrigin;
  const gateSeller = await registerDemoGateSeller({
    apiUrl,
    publicUrl: publicUrlOf(apiUrl),
    chainId: localChain.chainId,
    originUrl: demoOrigin.url,
    serveVerification: demoOrigin.serveVerification,
    payToKey: anvilDevAccount(20).privateKey,
    dataDir,
  });
  const gateUrl = await startGate(owner, { gatePat: gateSeller.gatePat, apiUrl, localChain });
  return {
    url: gateUrl,
    demoUrl: `${gateUrl}/${gateSeller.slug}/forecast`,
    sellerId: gateSeller.sellerId,
    originUrl: demoOrigin.url,
  };
}

/** Starts both demos when there is a local chain; resolves with the gate's addresses (undefined without one). */
export async function startSandboxDemos(
  parts: SandboxParts,
  owner: ProcessOwner,
  apiUrl: string,
): Promise<DemoGate | undefined> {
  const { localChain } = parts;
  if (!localChain) return undefined;
  await startSeller(parts, apiUrl, localChain);
  return startOriginBehindGate(parts, owner, apiUrl, localChain);
}
