/**
 * The sandbox faucet: a loopback HTTP server that mints test USDC on the local anvil chain.
 *
 *   POST / or POST /fund  {address, amount_usd, approve_permit2?}
 *       → 200 {address, amount_usd, amount_raw, tx_hash, balance_raw[, permit2_approval_tx]}
 *   GET /health → {status: 'ok'}        GET /metrics → Prometheus text
 *
 * `address` is 0x + 40 hex (a mixed-case address must carry a valid EIP-55 checksum); `amount_usd` is a
 * USD decimal string with at most 6 decimals, > 0 and ≤ 1,000,000 (1 USDC = 1 USD = 10^6 raw units,
 * bigint only, no floating point). Anything else → 400 {error_code: 'invalid_request', user_message} and
 * nothing is minted. `approve_permit2: true` (optional boolean) additionally makes `address` approve
 * Permit2 (0x000000000022D473030F116dDEE9F6B43aC78BA3) for the maximum uint256 on the test USDC, the
 * one-time on-chain step before x402 `upto` (Permit2) payments: after minting, anvil impersonates the
 * address (`anvil_impersonateAccount`; its ETH balance is raised to 1 ETH with `anvil_setBalance` when it
 * holds less than 0.01 ETH for gas), sends `approve` from it and stops impersonating, also on failure.
 *
 * What it defends: before every mint it asks the RPC for its chain id and `web3_clientVersion` and
 * refuses with 503 `faucet_wrong_chain` unless the chain id is the configured sandbox chain id AND the
 * node is anvil, so a misconfigured RPC URL can never make it send transactions to a real network (where
 * the minter key, anvil's public dev key #0, would be worthless anyway). Mints are serialised (one
 * sending account, no nonce races; approvals run in the same queue, so impersonations never overlap).
 * Logs are structured JSON without keys or request bodies.
 * What it does not defend: there is no authentication or rate limit; anyone who can reach the loopback
 * port can mint unlimited test money, and make any address approve Permit2 (anvil lets it send from any
 * address: on this chain that is no more than minting already allows). It binds 127.0.0.1 only and must
 * stay a local tool.
 */
import http from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import {
  createPublicClient,
  createWalletClient,
  getAddress,
  http as viemHttp,
  isAddress,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { z } from 'zod';
import { anvilDevAccount, MINTER_ACCOUNT_INDEX } from './anvil-dev-accounts.js';
import { localChain } from './deploy-test-usdc.js';
import { createFaucetMetrics } from './sandbox-metrics.js';
import { FaucetError, FaucetMinter } from './faucet-minter.js';
import {
  createSerialQueue,
  HttpBodyError,
  listenOnLoopback,
  readJsonBody,
  sandboxServerLogger,
  sendJson,
  sendText,
} from './sandbox-http.js';

export const MAX_FAUCET_AMOUNT_RAW = 1_000_000n * 1_000_000n;

/** A USD decimal string: no sign, no exponent, no leading zeros, at most 7 integer digits and 6 decimals. */
const usdAmountPattern = /^(0|[1-9][0-9]{0,6})(\.[0-9]{1,6})?$/;

/** `amount_usd` of a faucet request (this one and the Solana faucet's): > 0, ≤ 1,000,000, at most 6 decimals. */
export const faucetAmountField = z
  .string()
  .regex(usdAmountPattern, 'amount_usd must be a USD decimal string with at most 6 decimals, e.g. "12.50"')
  .refine((a) => !usdAmountPattern.test(a) || usdToRaw(a) > 0n, 'amount_usd must be greater than 0')
  .refine(
    (a) => !usdAmountPattern.test(a) || usdToRaw(a) <= MAX_FAUCET_AMOUNT_RAW,
    'amount_usd must be at most 1000000',
  );

export const faucetRequestSchema = z
  .object({
    address: z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, 'address must be 0x followed by 40 hex digits')
      .refine((a) => isAddress(a, { strict: true }), 'address has an invalid EIP-55 checksum'),
    amount_usd: faucetAmountField,
    approve_permit2: z.boolean({ error: 'approve_permit2 must be true or false' }).optional(),
  })
  .strict();

export type FaucetRequest = z.infer<typeof faucetRequestSchema>;

/** "12.5" → 12_500_000n (6 decimals). Input must already match the USD pattern. */
export function usdToRaw(amount: string): bigint {
  if (!usdAmountPattern.test(amount)) throw new RangeError(`not a USD decimal string: ${JSON.stringify(amount)}`);
  const [whole, fraction = ''] = amount.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
}

export interface StartFaucetOptions {
  rpcUrl: string;
  /** The sandbox chain id; the faucet refuses to mint on any other. */
  chainId: number;
  /** The test USDC address. */
  usdc: Address;
  /** The minter's key (default: anvil dev account #0, the deployer). */
  minterKey?: Hex;
  /** Port on 127.0.0.1 (default: any free port). */
  port?: number;
  /** Metrics registry (default: a fresh one, exposed on GET /metrics). */
  registry?: Registry;
  logger?: Logger;
}

export interface FaucetHandle {
  url: string;
  port: number;
  minter: Address;
  registry: Registry;
  stop(): Promise<void>;
}

/** The request body: at most 4 KiB of JSON, as `faucetRequestSchema` has it; else a FaucetError (400 or 413). */
async function readFaucetRequest(req: http.IncomingMessage): Promise<FaucetRequest> {
  let body: unknown;
  try {
    body = await readJsonBody(req, 4096);
  } catch (err) {
    if (err instanceof HttpBodyError)
      throw new FaucetError(err.status === 413 ? 413 : 400, 'invalid_request', err.message);
    throw err;
  }
  const parsed = faucetRequestSchema.safeParse(body);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first && first.path.length > 0 ? `${first.path.join('.')}: ` : '';
    throw new FaucetError(400, 'invalid_request', `${where}${first?.message ?? 'invalid body'}`);
  }
  return parsed.data;
}

/** A failed mint, counted by outcome: a FaucetError with its status and code, anything else 500 (logged). */
function answerFaucetFailure(
  res: http.ServerResponse,
  err: unknown,
  { metrics, logger }: { metrics: ReturnType<typeof createFaucetMetrics>; logger: Logger },
): void {
  if (err instanceof FaucetError) {
    metrics.mints.inc({
      outcome:
        err.code === 'invalid_request'
          ? 'invalid_request'
          : err.code === 'faucet_wrong_chain'
            ? 'wrong_chain'
            : 'error',
    });
    return sendJson(res, err.status, { error_code: err.code, user_message: err.message });
  }
  metrics.mints.inc({ outcome: 'error' });
  logger.error({ err: err instanceof Error ? err.message : String(err) }, 'faucet mint failed');
  sendJson(res, 500, { error_code: 'internal_error', user_message: 'The faucet could not mint; see its log.' });
}

export async function startFaucet(options: StartFaucetOptions): Promise<FaucetHandle> {
  const logger = options.logger ?? sandboxServerLogger('treasury-sandbox-faucet');
  const metrics = createFaucetMetrics(options.registry);
  const account = privateKeyToAccount(options.minterKey ?? anvilDevAccount(MINTER_ACCOUNT_INDEX).privateKey);
  const chain = localChain(options.chainId, options.rpcUrl);
  const transport = viemHttp(options.rpcUrl, { retryCount: 0, timeout: 10_000 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 });
  const wallet = createWalletClient({ chain, transport, account, pollingInterval: 100 });
  const usdc = getAddress(options.usdc);
  const minter = new FaucetMinter({
    publicClient,
    wallet,
    usdc,
    chainId: options.chainId,
    logger,
    metrics,
    serial: createSerialQueue(),
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method === 'GET' && pathname === '/health') return sendJson(res, 200, { status: 'ok' });
    if (req.method === 'GET' && pathname === '/metrics')
      return sendText(res, 200, metrics.registry.contentType, await metrics.registry.metrics());
    if (pathname !== '/' && pathname !== '/fund')
      return sendJson(res, 404, { error_code: 'not_found', user_message: 'Unknown route. Use POST /fund.' });
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return sendJson(res, 405, {
        error_code: 'method_not_allowed',
        user_message: 'Use POST with a JSON body {address, amount_usd[, approve_permit2]}.',
      });
    }
    try {
      const request = await readFaucetRequest(req);
      const address = getAddress(request.address);
      const amountRaw = usdToRaw(request.amount_usd);
      const result = await minter.fund(address, request.amount_usd, amountRaw, request.approve_permit2 === true);
      metrics.mints.inc({ outcome: 'minted' });
      logger.info(
        {
          address: result.address,
          amount_raw: result.amount_raw,
          tx_hash: result.tx_hash,
          permit2_approval_tx: result.permit2_approval_tx,
        },
        'faucet minted test USDC',
      );
      sendJson(res, 200, result);
    } catch (err) {
      answerFaucetFailure(res, err, { metrics, logger });
    }
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err: err instanceof Error ? err.message : String(err) }, 'faucet handler crashed');
      if (!res.headersSent) sendJson(res, 500, { error_code: 'internal_error', user_message: 'Internal error.' });
      else res.destroy();
    });
  });
  const listening = await listenOnLoopback(server, options.port ?? 0);
  logger.info({ url: listening.url, chain_id: options.chainId, usdc, minter: account.address }, 'faucet ready');
  return {
    url: listening.url,
    port: listening.port,
    minter: account.address,
    registry: metrics.registry,
    stop: () => listening.close(),
  };
}
