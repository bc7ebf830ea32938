/**
 * The sandbox's Solana demo seller: one paid route, `GET /joke` at $0.01 USDC `exact` on the offline Solana
 * chain's network, served by the official x402 packages only — `@x402/core`'s `x402HTTPResourceServer` with
 * `@x402/svm`'s `exact` server scheme, its facilitator the chain's official SVM facilitator — over node:http
 * (a ~40-line adapter, as the official Express one is). It knows nothing of Treasury: it is the stranger a
 * Treasury Solana wallet pays. Its pay-to is a key pair generated at start (the chain lives only as long as the
 * sandbox), its USDC account created empty so that payments to it can land.
 * Defends against: nothing beyond the official packages (they verify and settle through the facilitator).
 * Does not: report to Treasury's ledger, persist anything, or listen beyond 127.0.0.1.
 */
import http from 'node:http';
import type { Logger } from 'pino';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import {
  FacilitatorResponseError,
  HTTPFacilitatorClient,
  x402HTTPResourceServer,
  x402ResourceServer,
  type HTTPAdapter,
  type HTTPRequestContext,
  type HTTPResponseInstructions,
} from '@x402/core/server';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import type { LocalSolana } from '../../solana/local-solana.js';
import { listenOnLoopback, sendJson, type LoopbackServer } from '../chain/sandbox-http.js';

export const SOLANA_DEMO_JOKE = {
  joke: 'Why did the agent pay in USDC on Solana? The fee payer was buying.',
  paid: true,
};

export interface SolanaDemoSeller {
  /** The paid URL (`…/joke`). */
  url: string;
  payTo: Address;
  stop(): Promise<void>;
}

function adapterOf(req: http.IncomingMessage, url: URL): HTTPAdapter {
  const header = (name: string) => {
    const value = req.headers[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  };
  return {
    getHeader: header,
    getMethod: () => req.method ?? 'GET',
    getPath: () => url.pathname,
    getUrl: () => url.href,
    getAcceptHeader: () => header('accept') ?? '',
    getUserAgent: () => header('user-agent') ?? '',
    getQueryParams: () => Object.fromEntries(url.searchParams),
    getQueryParam: (name) => url.searchParams.get(name) ?? undefined,
  };
}

function send(res: http.ServerResponse, answer: HTTPResponseInstructions): void {
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  if (answer.isHtml) {
    res.writeHead(answer.status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(String(answer.body ?? ''));
  } else sendJson(res, answer.status, answer.body ?? {});
}

/** The official flow: challenge or verify → serve → settle → answer with the settlement header. */
async function servePaid(server: x402HTTPResourceServer, context: HTTPRequestContext, res: http.ServerResponse) {
  const result = await server.processHTTPRequest(context);
  if (result.type === 'payment-error') return send(res, result.response);
  const body = JSON.stringify(SOLANA_DEMO_JOKE);
  if (result.type === 'payment-verified') {
    const settled = await server.processSettlement(
      result.paymentPayload,
      result.paymentRequirements,
      result.declaredExtensions,
      { request: context, responseBody: Buffer.from(body) },
    );
    if (!settled.success) return send(res, settled.response);
    for (const [name, value] of Object.entries(settled.headers)) res.setHeader(name, value);
  }
  sendJson(res, 200, SOLANA_DEMO_JOKE);
}

function createHandler(server: x402HTTPResourceServer, logger: Logger) {
  return async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
    if (req.method === 'GET' && url.pathname === '/health') return sendJson(res, 200, { ok: true });
    const adapter = adapterOf(req, url);
    const context: HTTPRequestContext = {
      adapter,
      path: url.pathname,
      method: req.method ?? 'GET',
      ...((adapter.getHeader('payment-signature') ?? adapter.getHeader('x-payment'))
        ? { paymentHeader: adapter.getHeader('payment-signature') ?? adapter.getHeader('x-payment') }
        : {}),
    };
    if (!server.requiresPayment(context)) return sendJson(res, 404, { error_code: 'not_found' });
    try {
      await servePaid(server, context, res);
    } catch (err) {
      if (!(err instanceof FacilitatorResponseError)) throw err;
      logger.warn({ err: err.message }, 'the facilitator failed');
      sendJson(res, 502, { error: err.message });
    }
  };
}

export async function startSolanaDemoSeller(
  solana: LocalSolana,
  options: { port?: number; logger: Logger },
): Promise<SolanaDemoSeller> {
  const payTo = (await generateKeyPairSigner()).address;
  await solana.faucet.fundUsdc(payTo, 0n); // its USDC account: a transfer to a missing one cannot land
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: solana.facilitatorUrl }));
  resourceServer.register(solana.network, new ExactSvmScheme());
  const server = new x402HTTPResourceServer(resourceServer, {
    'GET /joke': {
      accepts: { scheme: 'exact', network: solana.network, payTo, price: '$0.01' },
      description: 'A joke, paid per call in USDC on Solana',
    },
  });
  await server.initialize();
  const handle = createHandler(server, options.logger);
  const http1 = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      options.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'solana demo seller failed');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  const listening: LoopbackServer = await listenOnLoopback(http1, options.port ?? 0);
  options.logger.info({ url: listening.url, pay_to: payTo }, 'solana demo seller ready');
  return {
    url: `${listening.url}/joke`,
    payTo,
    stop: async () => {
      http1.closeAllConnections();
      await listening.close();
    },
  };
}
