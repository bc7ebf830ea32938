/**
 * Treasury's two core processes in the sandbox: treasury-signer on `<data dir>/signer.sock` with the key
 * backend's environment, then treasury-api on the database, the signer's socket and the operator token (from
 * TREASURY_ADMIN_TOKEN, else generated once and kept in `<data dir>/admin-token`, 0600), with the local chain's
 * RPC and facilitator when there is one, and the Solana chain's RPC (TREASURY_SOLANA_RPC_URL) when there is one. Builds the dashboard first when it is stale; a failed build leaves the
 * API running (/dashboard/ answers 503 dashboard_not_built until it is built).
 * Does not: expose either beyond loopback unless TREASURY_HOST says so; TREASURY_VERIFY_ALLOW_PRIVATE=1 is set
 * because the sandbox's sellers are on loopback.
 */
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { dashboardIsStale, ensureDashboardBuilt } from '../dashboard/build-dashboard.js';
import type { LocalChain } from './chain/local-chain.js';
import { sandboxSolanaApiEnv, type SandboxSolana } from './sandbox-solana.js';
import { apiHost, apiPort, dataDir, readOrCreateSecret, say } from './sandbox-settings.js';
import { startProcess, type ProcessOwner } from './sandbox-process.js';

/** Starts the signer; resolves with its socket once it is ready. */
export async function startSandboxSigner(owner: ProcessOwner, signerEnv: NodeJS.ProcessEnv): Promise<string> {
  const signerSocket = path.join(dataDir, 'signer.sock');
  say('• starting treasury-signer');
  await startProcess(owner, {
    name: 'signer',
    entry: 'signer/main.ts',
    env: { TREASURY_SIGNER_SOCKET: signerSocket, TREASURY_SIGNER_BACKEND: undefined, ...signerEnv },
    ready: (msg) => msg === 'signer ready',
  });
  return signerSocket;
}

async function buildDashboardWhenStale(): Promise<void> {
  if (!dashboardIsStale()) return;
  say('• building the dashboard (npm run build:dashboard)');
  // A failed build leaves the API running: /dashboard/ answers 503 dashboard_not_built until it is built.
  await ensureDashboardBuilt().catch((err: unknown) =>
    say(`• the dashboard did not build (${err instanceof Error ? err.message : String(err)}); the API runs without it`),
  );
}

export interface SandboxApi {
  apiUrl: string;
  adminToken: string;
}

/** Starts the API; resolves with its URL and the operator token once it is ready. */
export async function startSandboxApi(
  owner: ProcessOwner,
  {
    databaseUrl,
    signerSocket,
    localChain,
    solana,
  }: { databaseUrl: string; signerSocket: string; localChain?: LocalChain; solana?: SandboxSolana },
): Promise<SandboxApi> {
  const adminToken =
    process.env.TREASURY_ADMIN_TOKEN ??
    readOrCreateSecret(path.join(dataDir, 'admin-token'), () => `xx_admin_${randomBytes(32).toString('base64url')}`);
  await buildDashboardWhenStale();
  say('• starting treasury-api');
  await startProcess(owner, {
    name: 'api',
    entry: 'src/api/main.ts',
    env: {
      DATABASE_URL: databaseUrl,
      TREASURY_SIGNER_SOCKET: signerSocket,
      TREASURY_ADMIN_TOKEN: adminToken,
      TREASURY_PORT: String(apiPort),
      TREASURY_HOST: apiHost,
      TREASURY_DATA_DIR: dataDir,
      TREASURY_VERIFY_ALLOW_PRIVATE: '1',
      // The Solana chain the API reads (loopback only; none with TREASURY_SANDBOX_SOLANA=0 and no local validator).
      ...sandboxSolanaApiEnv(solana),
      // Where the faucets listen, for `xx fund --testnet` run from anywhere (GET /v1/sandbox/faucets).
      ...(solana ? { TREASURY_SANDBOX_SOLANA_FAUCET_URL: solana.faucetUrl } : {}),
      ...(localChain
        ? {
            TREASURY_SANDBOX_FAUCET_URL: localChain.faucetUrl,
            TREASURY_RPC_URLS: JSON.stringify({ [localChain.network]: localChain.rpcUrl }),
            // Payouts to platform_mor sellers (the demo seller) are settled by the local facilitator.
            TREASURY_FACILITATOR_URL: localChain.facilitatorUrl,
          }
        : {}),
    },
    ready: (msg) => msg === 'treasury-api ready',
  });
  return { apiUrl: `http://${apiHost}:${apiPort}`, adminToken };
}
