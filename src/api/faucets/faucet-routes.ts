/**
 * GET /v1/sandbox/faucets: where the sandbox's faucets listen (TREASURY_SANDBOX_FAUCET_URL,
 * TREASURY_SANDBOX_SOLANA_FAUCET_URL, which `npm start` sets), so the CLI funds a wallet from the API URL alone;
 * 404 `not_found` on an API that is not a sandbox (neither is set: production mode refuses them).
 *
 * Defends: `xx fund --testnet` run outside the checkout silently not funding. Public: a faucet URL is a loopback
 * address of the sandbox's own machine, and only that machine can reach it. Does not defend: the faucets
 * themselves (ops/sandbox/).
 */
import Router from '@koa/router';
import type { SandboxFaucets } from '../../shared/api-responses/sandbox-responses.js';
import { AppError } from '../errors/app-error.js';

export function sandboxRoutes(deps: { faucets: SandboxFaucets }): Router {
  const router = new Router();
  router.get('/v1/sandbox/faucets', (ctx) => {
    if (deps.faucets.faucet_url === null && deps.faucets.solana_faucet_url === null) throw new AppError('not_found');
    ctx.body = deps.faucets satisfies SandboxFaucets;
  });
  return router;
}
