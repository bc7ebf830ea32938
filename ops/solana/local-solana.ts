/**
 * Brings up the offline Solana chain in one call: litesvm behind a loopback JSON-RPC server that answers as
 * devnet → the USDC mint at devnet's USDC address → the faucet → the official x402 SVM facilitator, its
 * fee payer funded with SOL. stop() closes the facilitator, then the RPC server; a failure half-way stops
 * whatever already started. Every piece listens on 127.0.0.1 only.
 * Defends against: nothing beyond its parts (see their headers); it is a development chain.
 * Does not: persist anything (the chain lives in this process) nor reach a public network.
 */
import type { Address } from '@solana/kit';
import type { Network } from '@x402/core/types';
import type { Logger } from 'pino';
import { LocalSvm } from './local-svm.js';
import { startSolanaRpcServer } from './solana-rpc-server.js';
import { createSolanaFaucet, createUsdcMint, type SolanaFaucet } from './solana-faucet.js';
import { LOCAL_SOLANA_NETWORK } from './solana-devnet.js';
import { startSvmFacilitator } from './svm-facilitator-server.js';
import { sandboxServerLogger } from '../sandbox/chain/sandbox-http.js';

/** 100 SOL for the facilitator's fee payer: 20,000 settlements at 5,000 lamports each. */
const FEE_PAYER_LAMPORTS = 100_000_000_000n;

export interface StartLocalSolanaOptions {
  /** Port of the JSON-RPC server on 127.0.0.1 (default: any free port). */
  rpcPort?: number;
  /** Port of the facilitator on 127.0.0.1 (default: any free port). */
  facilitatorPort?: number;
  /** Logger of the RPC server and facilitator (children `solana-rpc` / `svm-facilitator`). */
  logger?: Logger;
}

export interface LocalSolana {
  rpcUrl: string;
  /** `solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1` (devnet's id: the only kind x402 accepts). */
  network: Network;
  /** The USDC mint, at devnet's USDC address (6 decimals). */
  mint: Address;
  faucet: SolanaFaucet;
  facilitatorUrl: string;
  /** The facilitator's fee payer (funded). */
  feePayer: Address;
  /** The in-process chain, for direct inspection. */
  chain: LocalSvm;
  stop(): Promise<void>;
}

export async function startLocalSolana(options: StartLocalSolanaOptions = {}): Promise<LocalSolana> {
  const logger = options.logger ?? sandboxServerLogger('treasury-local-solana');
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  };
  try {
    const chain = new LocalSvm();
    const mint = createUsdcMint(chain);
    const faucet = createSolanaFaucet(chain);
    const rpc = await startSolanaRpcServer({
      svm: chain,
      logger: logger.child({ component: 'solana-rpc' }),
      ...(options.rpcPort === undefined ? {} : { port: options.rpcPort }),
    });
    stops.push(() => rpc.close());
    const facilitator = await startSvmFacilitator({
      rpcUrl: rpc.url,
      logger: logger.child({ component: 'svm-facilitator' }),
      ...(options.facilitatorPort === undefined ? {} : { port: options.facilitatorPort }),
    });
    stops.push(() => facilitator.stop());
    faucet.fundSol(facilitator.feePayer, FEE_PAYER_LAMPORTS);
    return {
      rpcUrl: rpc.url,
      network: LOCAL_SOLANA_NETWORK,
      mint,
      faucet,
      facilitatorUrl: facilitator.url,
      feePayer: facilitator.feePayer,
      chain,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
