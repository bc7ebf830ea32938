/**
 * The sandbox's managed-proxy seller (docs/gate.md): registers, once, a seller with protocol `mpp` whose origin
 * is the demo origin (demo-origin.ts), one paid endpoint (`GET /forecast`, 0.01 USDC), a proven pay-to address
 * (a public anvil dev key signs the claim, so its ledger rows verify on chain), and a gate PAT (scope `gate`)
 * for the sandbox's gate. Keeps them in `<dataDir>/demo-gate.json` (0600) for the next start, re-registering
 * when the stored gate PAT no longer reads the catalogue (a reset database); the origin's address is written
 * to the seller on every start (its port may change) and verified again (the demo origin serves the token; the
 * gate sells verified origins only). Loopback only.
 */
import path from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { call, registerPaidSeller } from './demo-seller.js';
import { bearerAccepted, reuseOrRegister } from './demo-state-file.js';

interface DemoGateState {
  seller_id: string;
  slug: string;
  /** The seller's service PAT (updates its origin). */
  service_pat: string;
  /** The gate bearer (scope `gate`). */
  gate_pat: string;
  pay_to: string;
}

export interface DemoGateSeller {
  sellerId: string;
  slug: string;
  gatePat: string;
  payTo: string;
}

async function register(
  apiUrl: string,
  publicUrl: string,
  chainId: number,
  originUrl: string,
  payToKey: `0x${string}`,
): Promise<DemoGateState> {
  const { session, seller, payTo } = await registerPaidSeller(
    { apiUrl, publicUrl, chainId, payToKey },
    { name: 'Sandbox gate demo seller', slugPrefix: 'gate-demo', protocol: 'mpp', origin: originUrl },
    'forecast',
  );
  const gate = (await call(apiUrl, 'POST', '/v1/pats', session, { scope_type: 'gate', label: 'sandbox gate' })) as {
    pat: string;
  };
  return {
    seller_id: seller.seller_id,
    slug: seller.slug,
    service_pat: seller.pat,
    gate_pat: gate.pat,
    pay_to: payTo,
  };
}

export async function registerDemoGateSeller(options: {
  apiUrl: string;
  publicUrl: string;
  chainId: number;
  originUrl: string;
  /** Makes the demo origin serve the seller's verification token. */
  serveVerification: (token: string) => void;
  payToKey: `0x${string}`;
  dataDir: string;
}): Promise<DemoGateSeller> {
  const payTo = privateKeyToAccount(options.payToKey).address;
  const { state, registered } = await reuseOrRegister<DemoGateState>(
    path.join(options.dataDir, 'demo-gate.json'),
    async (stored) =>
      (await bearerAccepted(`${options.apiUrl}/v1/gate/catalogue`, stored.gate_pat)) && stored.pay_to === payTo,
    () => register(options.apiUrl, options.publicUrl, options.chainId, options.originUrl, options.payToKey),
  );
  if (!registered)
    await call(options.apiUrl, 'PATCH', `/v1/sellers/${state.seller_id}`, state.service_pat, {
      origin: options.originUrl,
    });
  const route = `/v1/sellers/${state.seller_id}/verify`;
  const { token } = (await call(options.apiUrl, 'GET', route, state.service_pat)) as { token: string };
  options.serveVerification(token);
  await call(options.apiUrl, 'POST', route, state.service_pat);
  return { sellerId: state.seller_id, slug: state.slug, gatePat: state.gate_pat, payTo: state.pay_to };
}
