/**
 * The offline Solana chain's x402 facilitator: the official `x402Facilitator` (@x402/core/facilitator) with
 * the official SVM `exact` scheme (@x402/svm/exact/facilitator) on the local chain's network
 * (`solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1`, devnet's id), served with the sandbox facilitator's HTTP
 * contract (ops/sandbox/facilitator/facilitator-server.ts):
 *
 *   POST /verify  {x402Version, paymentPayload, paymentRequirements} → 200 VerifyResponse (also isValid:false)
 *   POST /settle  {x402Version, paymentPayload, paymentRequirements} → 200 SettleResponse (also success:false)
 *                 plus `txHash` (alias of `transaction`)
 *   GET /supported → {kinds, extensions, signers}     GET /health
 *   400 {error} when the body is not {paymentPayload, paymentRequirements}; 500 {error} when the facilitator throws.
 *
 * Fee payer: a key pair generated in this process at start (a development chain only: it never leaves the
 * process, and is lost on stop); the caller funds it with SOL. The scheme reaches the chain through
 * `toFacilitatorSvmSigner(signer, {defaultRpcUrl})`. Settlements are serialised.
 * What it defends: only what the official scheme checks (instruction layout, fee payer isolation, mint,
 * destination, exact amount, signatures, simulation; duplicates by message hash for 120 s, in memory).
 * What it does not defend: no authentication, no rate limiting, no persistence of the settlement cache or
 * pending settlements beyond the process; it listens on 127.0.0.1 only.
 */
import http from 'node:http';
import type { Logger } from 'pino';
import { generateKeyPairSigner, type Address, type KeyPairSigner } from '@solana/kit';
import { z } from 'zod';
import { x402Facilitator } from '@x402/core/facilitator';
import type { Network, PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/facilitator';
import { assertLoopbackHost } from './loopback-host.js';
import { LOCAL_SOLANA_NETWORK } from './solana-devnet.js';
import {
  createSerialQueue,
  HttpBodyError,
  listenOnLoopback,
  readJsonBody,
  sendJson,
} from '../sandbox/chain/sandbox-http.js';

export interface StartSvmFacilitatorOptions {
  rpcUrl: string;
  /** Port on 127.0.0.1 (default: any free port). */
  port?: number;
  /** Must be 127.0.0.1 (the default). */
  host?: string;
  /** The fee payer (default: a key pair generated now). */
  feePayer?: KeyPairSigner;
  logger: Logger;
}

export interface SvmFacilitatorHandle {
  url: string;
  port: number;
  /** The fee payer's address (the `extra.feePayer` sellers advertise). */
  feePayer: Address;
  network: Network;
  facilitator: x402Facilitator;
  stop(): Promise<void>;
}

const facilitatorBodySchema = z.object({
  x402Version: z.number().int().min(1).max(2).optional(),
  paymentPayload: z.looseObject({}),
  paymentRequirements: z.looseObject({}),
});

type Parsed = { payload: PaymentPayload; requirements: PaymentRequirements };

async function readFacilitatorBody(req: http.IncomingMessage): Promise<Parsed | { error: string }> {
  let body: unknown;
  try {
    body = await readJsonBody(req);
  } catch (err) {
    return { error: err instanceof HttpBodyError ? err.message : 'unreadable request body' };
  }
  const parsed = facilitatorBodySchema.safeParse(body);
  if (!parsed.success) return { error: 'Missing paymentPayload or paymentRequirements' };
  return {
    payload: parsed.data.paymentPayload as unknown as PaymentPayload,
    requirements: parsed.data.paymentRequirements as unknown as PaymentRequirements,
  };
}

/** The payer as the scheme reports it; the settle reply in the sandbox's shape (with `txHash`). */
async function routePayment(
  facilitator: x402Facilitator,
  serial: ReturnType<typeof createSerialQueue>,
  name: 'verify' | 'settle',
  parsed: Parsed,
): Promise<{ body: unknown; summary: Record<string, unknown> }> {
  if (name === 'verify') {
    const result = await facilitator.verify(parsed.payload, parsed.requirements);
    return { body: result, summary: { is_valid: result.isValid, invalid_reason: result.invalidReason } };
  }
  const settled = await serial(() => facilitator.settle(parsed.payload, parsed.requirements));
  const body = {
    ...settled,
    transaction: settled.transaction ?? '',
    network: settled.network ?? parsed.requirements.network,
    txHash: settled.transaction ?? '',
  };
  return { body, summary: { success: body.success, error_reason: body.errorReason, transaction: body.transaction } };
}

function createHandler(facilitator: x402Facilitator, logger: Logger) {
  const serial = createSerialQueue();
  return async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '') || '/';
    if (req.method === 'GET' && pathname === '/health') return sendJson(res, 200, { status: 'ok' });
    if (req.method === 'GET' && pathname === '/supported') return sendJson(res, 200, facilitator.getSupported());
    if (pathname !== '/verify' && pathname !== '/settle')
      return sendJson(res, 404, { error: 'not found; routes: POST /verify, POST /settle, GET /supported' });
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return sendJson(res, 405, { error: `use POST ${pathname}` });
    }
    const name = pathname === '/verify' ? 'verify' : 'settle';
    const parsed = await readFacilitatorBody(req);
    if ('error' in parsed) return sendJson(res, 400, { error: parsed.error });
    try {
      const { body, summary } = await routePayment(facilitator, serial, name, parsed);
      logger.info({ route: name, ...summary }, name);
      sendJson(res, 200, body);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      logger.error({ route: name, err: message }, 'facilitator request failed');
      sendJson(res, 500, { error: message });
    }
  };
}

export async function startSvmFacilitator(options: StartSvmFacilitatorOptions): Promise<SvmFacilitatorHandle> {
  assertLoopbackHost(options.host);
  const feePayer = options.feePayer ?? (await generateKeyPairSigner());
  const signer = toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: options.rpcUrl });
  const facilitator = new x402Facilitator().register(LOCAL_SOLANA_NETWORK, new ExactSvmScheme(signer));
  const handle = createHandler(facilitator, options.logger);
  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      options.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'facilitator handler crashed');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  const listening = await listenOnLoopback(server, options.port ?? 0);
  options.logger.info(
    { url: listening.url, network: LOCAL_SOLANA_NETWORK, fee_payer: feePayer.address },
    'svm facilitator ready',
  );
  return {
    url: listening.url,
    port: listening.port,
    feePayer: feePayer.address,
    network: LOCAL_SOLANA_NETWORK,
    facilitator,
    stop: () => listening.close(),
  };
}
