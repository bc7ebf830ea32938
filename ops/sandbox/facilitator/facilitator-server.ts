/**
 * The sandbox's local x402 facilitator: the official `x402Facilitator` (@x402/core/facilitator) with the
 * official EVM `exact` scheme (@x402/evm/exact/facilitator, EIP-3009 and Permit2 paths) and the official
 * EVM `upto` scheme (@x402/evm/upto/facilitator, Permit2 witness transfers through the x402 upto proxy)
 * over a viem wallet client on the local anvil chain, wrapped in a small loopback HTTP server with the
 * reference facilitator's HTTP contract:
 *
 *   POST /verify  {x402Version, paymentPayload, paymentRequirements} → 200 VerifyResponse (also isValid:false)
 *   POST /settle  {x402Version, paymentPayload, paymentRequirements} → 200 SettleResponse (also success:false)
 *                 {success, transaction, network, payer, ...} plus `txHash` (alias of `transaction`)
 *   GET /supported → {kinds, extensions, signers}     GET /health     GET /metrics
 *   400 {error} when paymentPayload or paymentRequirements is missing; 500 {error} when the facilitator throws.
 *
 * Signer: anvil dev account #1 by default; it pays the gas of settlements and is the `upto` kind's
 * `extra.facilitatorAddress`. Settlements are serialised (one sending account, no nonce races).
 * Every eth_call (the schemes' settlement simulations) is sent from the signer's address: the upto proxy
 * only lets witness.facilitator call `settle`, so a simulation from any other address would fail.
 * What it defends: only what the official schemes check (signature, recipient, time window, amount,
 * asset code, facilitator binding, simulation; replay protection is the token's EIP-3009 nonce or
 * Permit2's nonce bitmap on chain). It refuses to start unless the RPC is anvil with the configured chain
 * id, so it never spends gas on a real network.
 * What it does not defend: no authentication, no rate limiting, no persistence of pending settlements
 * beyond the process; it listens on 127.0.0.1 only and is a development tool.
 *
 * On-chain prerequisites (placed by deploy-upto-contracts.ts): Permit2, the upto proxy (our stand-in,
 * not the audited contract) and Multicall3 (our stand-in; the schemes diagnose failed simulations with
 * it, e.g. `permit2_allowance_required`). The `exact` scheme's Permit2 path also needs the x402 exact
 * Permit2 proxy, which the sandbox does not place: exact payments work through EIP-3009 (the USDC default).
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { createWalletClient, http as viemHttp, publicActions, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { x402Facilitator } from '@x402/core/facilitator';
import type { Network, PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { EIP2612_GAS_SPONSORING } from '@x402/extensions';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/facilitator';
import { UptoEvmScheme } from '@x402/evm/upto/facilitator';
import { anvilDevAccount, FACILITATOR_ACCOUNT_INDEX } from '../chain/anvil-dev-accounts.js';
import { assertAnvilChain, BASE_SEPOLIA_CHAIN_ID, localChain } from '../chain/deploy-test-usdc.js';
import { createFacilitatorMetrics } from '../chain/sandbox-metrics.js';
import {
  sandboxServerLogger,
  createSerialQueue,
  HttpBodyError,
  listenOnLoopback,
  readJsonBody,
  sendJson,
  sendText,
} from '../chain/sandbox-http.js';

export interface StartFacilitatorOptions {
  rpcUrl: string;
  /** The sandbox chain id; the facilitator serves `eip155:<chainId>`. */
  chainId: number;
  /** Key of the account that submits settlements (default: anvil dev account #1). */
  privateKey?: Hex;
  /** Port on 127.0.0.1 (default: any free port). */
  port?: number;
  /** Metrics registry (default: a fresh one, exposed on GET /metrics). */
  registry?: Registry;
  logger?: Logger;
}

export interface FacilitatorHandle {
  url: string;
  port: number;
  /** The facilitator's signer address (pays gas). */
  address: Address;
  network: `eip155:${number}`;
  registry: Registry;
  /** The in-process facilitator, for callers that want to skip HTTP (self-facilitation). */
  facilitator: x402Facilitator;
  stop(): Promise<void>;
}

/** A settle reply in the official shape plus the `txHash` alias some clients (and the spec's hybrid) read. */
export type SandboxSettleResponse = SettleResponse & { txHash: string };

interface FacilitatorRequestBody {
  x402Version?: unknown;
  paymentPayload?: unknown;
  paymentRequirements?: unknown;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The payer of an EIP-3009 or Permit2 payload, when the facilitator's reply does not name one. */
function payerOf(payload: PaymentPayload): string | undefined {
  const inner = payload.payload as Record<string, unknown> | undefined;
  const auth = (inner?.authorization ?? inner?.permit2Authorization) as { from?: unknown } | undefined;
  return typeof auth?.from === 'string' ? auth.from : undefined;
}

type Account = ReturnType<typeof privateKeyToAccount>;
type SandboxChain = ReturnType<typeof localChain>;
type SandboxClient = ReturnType<typeof sandboxClient>;

/** The facilitator's wallet client on the sandbox chain (no retries: a failure shows at once). */
function sandboxClient(account: Account, chain: SandboxChain, rpcUrl: string) {
  return createWalletClient({
    account,
    chain,
    transport: viemHttp(rpcUrl, { retryCount: 0, timeout: 30_000 }),
    pollingInterval: 100,
  }).extend(publicActions);
}

/**
 * The official signer contract over viem; the casts bridge its loosely typed (unknown ABI) arguments
 * to viem's ABI-generic signatures.
 */
function facilitatorSigner(client: SandboxClient, account: Account, chain: SandboxChain) {
  return toFacilitatorEvmSigner({
    address: account.address,
    getCode: (args) => client.getCode(args),
    // `account` explicit: simulations must come from the facilitator's address (see the header).
    readContract: (args) =>
      client.readContract({ ...args, args: args.args ?? [], account } as Parameters<typeof client.readContract>[0]),
    verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
    writeContract: (args) =>
      client.writeContract({ ...args, account, chain } as Parameters<typeof client.writeContract>[0]),
    sendTransaction: (args) => client.sendTransaction({ to: args.to, data: args.data, account, chain }),
    waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
  });
}

/** The official facilitator with the exact and upto schemes (and v1 exact when the chain is Base Sepolia's). */
function createX402Facilitator(network: Network, chainId: number, signer: ReturnType<typeof facilitatorSigner>) {
  const facilitator = new x402Facilitator()
    .register(network, new ExactEvmScheme(signer))
    .register(network, new UptoEvmScheme(signer))
    // Advertises the EIP-2612 gas-sponsoring extension in GET /supported (the upto scheme honours a payload's
    // permit whether or not it is registered: settleWithPermit through the upto proxy).
    .registerExtension(EIP2612_GAS_SPONSORING);
  // Legacy v1 clients name the network `base-sepolia` (v1 names are not CAIP-2, hence the cast); serve
  // it only when this chain impersonates Base Sepolia.
  if (chainId === BASE_SEPOLIA_CHAIN_ID)
    facilitator.registerV1('base-sepolia' as Network, new ExactEvmSchemeV1(signer));
  return facilitator;
}

/** The body of POST /verify and /settle: a payment payload and its requirements. */
async function readFacilitatorBody(
  req: http.IncomingMessage,
): Promise<{ payload: PaymentPayload; requirements: PaymentRequirements } | { error: string }> {
  let body: unknown;
  try {
    body = await readJsonBody(req);
  } catch (err) {
    return { error: err instanceof HttpBodyError ? err.message : 'unreadable request body' };
  }
  const { paymentPayload, paymentRequirements } = (isObject(body) ? body : {}) as FacilitatorRequestBody;
  if (!isObject(paymentPayload) || !isObject(paymentRequirements))
    return { error: 'Missing paymentPayload or paymentRequirements' };
  return {
    payload: paymentPayload as unknown as PaymentPayload,
    requirements: paymentRequirements as unknown as PaymentRequirements,
  };
}

/** Runs one route, answering its result as JSON (a throw: 500), counted and timed by route and outcome. */
async function runRoute(
  { logger, metrics }: { logger: Logger; metrics: ReturnType<typeof createFacilitatorMetrics> },
  res: http.ServerResponse,
  name: string,
  run: () => Promise<{ status: number; body: unknown; outcome: string }>,
): Promise<void> {
  const started = performance.now();
  let outcome = 'error';
  try {
    const result = await run();
    outcome = result.outcome;
    sendJson(res, result.status, result.body);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    logger.error({ route: name, err: message }, 'facilitator request failed');
    sendJson(res, 500, { error: message });
  } finally {
    metrics.requests.inc({ route: name, outcome });
    metrics.duration.observe({ route: name }, (performance.now() - started) / 1000);
  }
}

/** The settlement as the sandbox answers it: `txHash` beside `transaction`, the network and payer filled in. */
function settleResponse(
  settled: Awaited<ReturnType<x402Facilitator['settle']>>,
  parsed: { payload: PaymentPayload; requirements: PaymentRequirements },
): SandboxSettleResponse {
  return {
    ...settled,
    transaction: settled.transaction ?? '',
    network: settled.network ?? parsed.requirements.network,
    payer: settled.payer ?? payerOf(parsed.payload),
    txHash: settled.transaction ?? '',
  };
}

export async function startFacilitator(options: StartFacilitatorOptions): Promise<FacilitatorHandle> {
  const logger = options.logger ?? sandboxServerLogger('treasury-sandbox-facilitator');
  await assertAnvilChain(options.rpcUrl, options.chainId);
  const metrics = createFacilitatorMetrics(options.registry);
  const network = `eip155:${options.chainId}` as const;
  const account = privateKeyToAccount(options.privateKey ?? anvilDevAccount(FACILITATOR_ACCOUNT_INDEX).privateKey);
  const chain = localChain(options.chainId, options.rpcUrl);
  const client = sandboxClient(account, chain, options.rpcUrl);

  const signer = facilitatorSigner(client, account, chain);

  const facilitator = createX402Facilitator(network, options.chainId, signer);
  const serial = createSerialQueue();

  const observed = { logger, metrics };
  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '') || '/';
    if (req.method === 'GET' && pathname === '/health') return sendJson(res, 200, { status: 'ok' });
    if (req.method === 'GET' && pathname === '/metrics')
      return sendText(res, 200, metrics.registry.contentType, await metrics.registry.metrics());
    if (req.method === 'GET' && pathname === '/supported') {
      return runRoute(observed, res, 'supported', async () => ({
        status: 200,
        body: facilitator.getSupported(),
        outcome: 'ok',
      }));
    }
    if (pathname === '/verify' || pathname === '/settle') {
      if (req.method !== 'POST') {
        res.setHeader('allow', 'POST');
        return sendJson(res, 405, { error: `use POST ${pathname}` });
      }
      const name = pathname.slice(1);
      return runRoute(observed, res, name, async () => {
        const parsed = await readFacilitatorBody(req);
        if ('error' in parsed) return { status: 400, body: { error: parsed.error }, outcome: 'bad_request' };
        if (name === 'verify') {
          const result = await facilitator.verify(parsed.payload, parsed.requirements);
          logger.info(
            { route: name, is_valid: result.isValid, invalid_reason: result.invalidReason, payer: result.payer },
            'verify',
          );
          return { status: 200, body: result, outcome: result.isValid ? 'valid' : 'invalid' };
        }
        const settled = await serial(() => facilitator.settle(parsed.payload, parsed.requirements));
        const body = settleResponse(settled, parsed);
        logger.info(
          {
            route: name,
            success: body.success,
            error_reason: body.errorReason,
            transaction: body.transaction,
            payer: body.payer,
          },
          'settle',
        );
        return { status: 200, body, outcome: body.success ? 'success' : 'failure' };
      });
    }
    sendJson(res, 404, { error: 'not found; routes: POST /verify, POST /settle, GET /supported' });
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err: err instanceof Error ? err.message : String(err) }, 'facilitator handler crashed');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  const listening = await listenOnLoopback(server, options.port ?? 0);
  logger.info({ url: listening.url, network, signer: account.address }, 'facilitator ready');
  return {
    url: listening.url,
    port: listening.port,
    address: account.address,
    network,
    registry: metrics.registry,
    facilitator,
    stop: () => listening.close(),
  };
}
