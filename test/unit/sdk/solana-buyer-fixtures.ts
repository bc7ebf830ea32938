/**
 * A seller for the buyer's Solana tests, built from the official packages as
 * test/integration/solana/svm-x402-local.test.ts builds one: `@x402/express` with the `@x402/svm` server
 * scheme, verified and settled by the offline chain's facilitator (ops/solana/local-solana.ts). Routes:
 * `GET /solana` offers Solana only; `GET /both` offers Base Sepolia first, then Solana (the Base entry's
 * facilitator is a loopback stand-in that answers /supported and records any /verify or /settle — a buyer
 * that chose Solana never reaches it). Also a USDC balance reader on the local chain.
 */
import express from 'express';
import { createSolanaRpc, generateKeyPairSigner, type Address } from '@solana/kit';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { paymentMiddleware } from '@x402/express';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { ExactSvmScheme as ExactSvmServerScheme } from '@x402/svm/exact/server';
import type { LocalSolana } from '../../../ops/solana/local-solana.js';
import { associatedTokenAddress } from '../../../ops/solana/spl-token-layouts.js';
import { LoopbackServers } from '../../support/loopback-servers.js';

export const SOLANA_DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
export const BASE_SEPOLIA = 'eip155:84532';
/** "$0.01" in USDC base units (6 decimals). */
export const PRICE_UNITS = 10_000n;
const EVM_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

export interface SolanaSeller {
  url: string;
  payTo: Address;
  /** Paths the Base stand-in facilitator was asked (other than /supported). */
  evmFacilitatorCalls: string[];
  close(): Promise<void>;
}

export async function startSolanaSeller(solana: LocalSolana): Promise<SolanaSeller> {
  const servers = new LoopbackServers();
  const evmFacilitatorCalls: string[] = [];
  const evmFacilitatorUrl = await servers.listen((req, res) => {
    if (req.url === '/supported') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kinds: [{ x402Version: 2, scheme: 'exact', network: BASE_SEPOLIA }], extensions: [] }));
      return;
    }
    evmFacilitatorCalls.push(req.url ?? '');
    res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"not a facilitator"}');
  });
  const payTo = (await generateKeyPairSigner()).address;
  await solana.faucet.fundUsdc(payTo, 0n); // the payee's token account must exist
  const resourceServer = new x402ResourceServer([
    new HTTPFacilitatorClient({ url: solana.facilitatorUrl }),
    new HTTPFacilitatorClient({ url: evmFacilitatorUrl }),
  ]);
  resourceServer.register(SOLANA_DEVNET, new ExactSvmServerScheme());
  resourceServer.register(BASE_SEPOLIA, new ExactEvmServerScheme());
  const solanaEntry = { scheme: 'exact', network: SOLANA_DEVNET, payTo, price: '$0.01' } as const;
  const baseEntry = { scheme: 'exact', network: BASE_SEPOLIA, payTo: EVM_PAY_TO, price: '$0.01' } as const;
  const app = express();
  app.use(
    paymentMiddleware(
      {
        'GET /solana': { accepts: solanaEntry, description: 'paid on Solana' },
        'GET /both': { accepts: [baseEntry, solanaEntry], description: 'paid on Base or Solana' },
      },
      resourceServer,
    ),
  );
  app.get('/solana', (_req, res) => void res.json({ paid: 'solana' }));
  app.get('/both', (_req, res) => void res.json({ paid: 'both' }));
  const url = await servers.listen(app);
  return { url, payTo, evmFacilitatorCalls, close: () => servers.closeAll() };
}

/** The USDC of `owner` on the local chain (0 when its token account does not exist). */
export async function usdcOf(solana: LocalSolana, owner: string): Promise<bigint> {
  const rpc = createSolanaRpc(solana.rpcUrl);
  const account = await associatedTokenAddress(owner as Address, solana.mint);
  const info = await rpc.getAccountInfo(account, { encoding: 'base64' }).send();
  if (info.value === null) return 0n;
  return BigInt((await rpc.getTokenAccountBalance(account).send()).value.amount);
}
