/**
 * The sandbox's Solana faucet over HTTP: credits test USDC to the associated token account of an owner on the
 * offline Solana chain (ops/solana/solana-faucet.ts: the ATA is created when missing). No SOL: the x402
 * facilitator pays the fees of `exact` payments.
 *
 *   POST / or POST /fund  {address, amount_usd}
 *       → 200 {address, network, mint, token_account, amount_usd, amount_raw, balance_raw}
 *   GET /health → {status: 'ok'}
 *
 * `address` is a base58 Solana address (32 bytes), taken as it is (never case-folded); `amount_usd` as the EVM
 * faucet has it (> 0, ≤ 1,000,000, at most 6 decimals). Anything else → 400 {error_code: 'invalid_request',
 * user_message}; bodies over 4 KiB → 413; nothing is credited.
 * What it defends: it can only credit the in-process chain it was given (no RPC URL to misdirect); credits are
 * bounded (u64 and the faucet's own cap). What it does not defend: no authentication or rate limit — anyone who
 * reaches the loopback port mints test USDC on this development chain; it binds 127.0.0.1 only.
 */
import http from 'node:http';
import type { Logger } from 'pino';
import { isAddress, type Address } from '@solana/kit';
import { z } from 'zod';
import type { LocalSolana } from '../../solana/local-solana.js';
import { faucetAmountField, usdToRaw } from '../chain/faucet-server.js';
import { HttpBodyError, listenOnLoopback, readJsonBody, sendJson, type LoopbackServer } from '../chain/sandbox-http.js';

export const solanaFaucetRequestSchema = z
  .object({
    address: z
      .string()
      .min(32, 'address must be a base58 Solana address')
      .max(44, 'address must be a base58 Solana address')
      .refine((a) => isAddress(a), 'address must be a base58 Solana address'),
    amount_usd: faucetAmountField,
  })
  .strict();

type Refusal = { status: number; error_code: string; user_message: string };

async function readRequest(req: http.IncomingMessage): Promise<z.infer<typeof solanaFaucetRequestSchema> | Refusal> {
  let body: unknown;
  try {
    body = await readJsonBody(req, 4096);
  } catch (err) {
    if (err instanceof HttpBodyError)
      return { status: err.status === 413 ? 413 : 400, error_code: 'invalid_request', user_message: err.message };
    throw err;
  }
  const parsed = solanaFaucetRequestSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  const where = first && first.path.length > 0 ? `${first.path.join('.')}: ` : '';
  return { status: 400, error_code: 'invalid_request', user_message: `${where}${first?.message ?? 'invalid body'}` };
}

function createHandler(solana: LocalSolana, logger: Logger) {
  return async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method === 'GET' && pathname === '/health') return sendJson(res, 200, { status: 'ok' });
    if (pathname !== '/' && pathname !== '/fund')
      return sendJson(res, 404, { error_code: 'not_found', user_message: 'Unknown route. Use POST /fund.' });
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return sendJson(res, 405, {
        error_code: 'method_not_allowed',
        user_message: 'Use POST with a JSON body {address, amount_usd}.',
      });
    }
    const request = await readRequest(req);
    if ('error_code' in request) {
      const { status, ...body } = request;
      return sendJson(res, status, body);
    }
    const amountRaw = usdToRaw(request.amount_usd);
    const { tokenAccount, balance } = await solana.faucet.fundUsdc(request.address as Address, amountRaw);
    logger.info({ address: request.address, amount_raw: amountRaw.toString() }, 'solana faucet credited test USDC');
    sendJson(res, 200, {
      address: request.address,
      network: solana.network,
      mint: solana.mint,
      token_account: tokenAccount,
      amount_usd: request.amount_usd,
      amount_raw: amountRaw.toString(),
      balance_raw: balance.toString(),
    });
  };
}

/** Serves the faucet of `solana` on 127.0.0.1:`port` (0 or unset: any free port). */
export async function startSolanaFaucetServer(
  solana: LocalSolana,
  options: { port?: number; logger: Logger },
): Promise<LoopbackServer> {
  const handle = createHandler(solana, options.logger);
  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      options.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'solana faucet failed');
      if (!res.headersSent)
        sendJson(res, 500, { error_code: 'internal_error', user_message: 'The faucet could not credit; see its log.' });
      else res.destroy();
    });
  });
  const listening = await listenOnLoopback(server, options.port ?? 0);
  options.logger.info({ url: listening.url, network: solana.network }, 'solana faucet ready');
  return listening;
}
