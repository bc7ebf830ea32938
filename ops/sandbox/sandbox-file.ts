/**
 * Writes `<data dir>/sandbox.json` (mode 0600) once the sandbox is up: the addresses and the operator token
 * that `xx`, scripts and tests read to use it. Written aside and renamed into place, so whoever waits for the
 * file never reads it half written: it appears whole or not at all.
 * Does not: hold a secret besides the operator token (the sandbox's own); the shutdown removes the file.
 */
import fs from 'node:fs';
import type { StartedSandbox } from './sandbox-parts.js';

/** The file's fields, in the order it has always listed them. */
function sandboxRecord(s: StartedSandbox): Record<string, unknown> {
  const { kmsEmulator, localChain, demoSeller, solana } = s.parts;
  return {
    api_url: s.apiUrl,
    admin_token: s.adminToken,
    signer_socket: s.signerSocket,
    database: process.env.DATABASE_URL ? 'external' : 'embedded',
    key_backend: s.keyBackend,
    ...(kmsEmulator
      ? { kms_endpoint: kmsEmulator.url, kms_emulator: 'test-double', kms_region: kmsEmulator.region }
      : {}),
    metrics_url: `${s.apiUrl}/metrics`,
    dashboard_url: s.dashboardUrl,
    ...(localChain
      ? {
          rpc_url: localChain.rpcUrl,
          chain_id: localChain.chainId,
          network: localChain.network,
          usdc: localChain.usdc,
          facilitator_url: localChain.facilitatorUrl,
          facilitator_address: localChain.facilitatorAddress,
          faucet_url: localChain.faucetUrl,
          permit2: localChain.permit2,
          upto_proxy: localChain.uptoProxy,
        }
      : {}),
    ...(demoSeller
      ? {
          demo_seller_url: `${demoSeller.url}/joke`,
          demo_seller_id: demoSeller.sellerId,
          demo_seller_pay_to: demoSeller.payTo,
          demo_seller_collect_to: demoSeller.collectTo,
        }
      : {}),
    ...(solana
      ? {
          solana_rpc_url: solana.chain.rpcUrl,
          solana_network: solana.chain.network,
          solana_usdc_mint: solana.chain.mint,
          solana_facilitator_url: solana.chain.facilitatorUrl,
          solana_fee_payer: solana.chain.feePayer,
          solana_faucet_url: solana.faucetUrl,
          solana_demo_seller_url: solana.demoSellerUrl,
          solana_demo_seller_pay_to: solana.demoSellerPayTo,
        }
      : {}),
    ...(s.gate
      ? {
          gate_url: s.gate.url,
          gate_demo_url: s.gate.demoUrl,
          gate_demo_seller_id: s.gate.sellerId,
          gate_demo_origin_url: s.gate.originUrl,
        }
      : {}),
    started_at: new Date().toISOString(),
  };
}

export function writeSandboxFile(s: StartedSandbox): void {
  const partial = `${s.sandboxFile}.${process.pid}.tmp`;
  fs.writeFileSync(partial, JSON.stringify(sandboxRecord(s), null, 2) + '\n', { mode: 0o600 });
  fs.chmodSync(partial, 0o600);
  fs.renameSync(partial, s.sandboxFile);
}
