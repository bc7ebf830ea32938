/**
 * What every `xx mcp` tool reaches Treasury with: the buyer SDK's client (wallets, balance, pay) and the CLI's
 * API client (policy evaluate, payment history, whoami), both bearing the one agent PAT the server was started
 * with, the agent it acts as (asked of the server once, when first needed), and the default wallet (the
 * agent's first active one). The PAT stays inside these clients: no tool answer carries it. Sellers are reached
 * through `sellerFetch` (./seller-fetch.ts): public addresses only, unless the server was started with
 * `--allow-private-targets` or XX_MCP_ALLOW_PRIVATE_TARGETS=1.
 */
import { z } from 'zod';
import { TreasuryClient, type WalletView } from '../../../sdk/index.js';
import { ApiClient } from '../../core/api-client.js';
import type { BuyerBearer } from '../../core/buyer-bearer.js';
import { CliError } from '../../core/cli-error.js';
import { whoamiSchema } from '../../../shared/api-responses/identity-responses.js';
import { sellerFetch, type SellerFetch } from './seller-fetch.js';

export const walletIdInput = z
  .string()
  .regex(/^wal_[0-9a-f]{24}$/)
  .describe('A wallet id (wal_…) from list_wallets; default: the first active wallet');

export interface ToolContext {
  sdk: TreasuryClient;
  /** The Treasury API the tools talk to (which local sandbox, if any, is this one's). */
  apiUrl: string;
  api: ApiClient;
  /** How the pay tool reaches sellers (never Treasury). */
  sellerFetch: SellerFetch;
  agentId(): Promise<string>;
  /**
   * The wallet a tool acts on: the one named (must be active and the agent's), else the first active one (on
   * `network`, when given).
   */
  wallet(walletId: string | undefined, network?: string): Promise<WalletView>;
}

export interface ToolContextOptions {
  /** Let the pay tool reach loopback, private and other non-public addresses (the sandbox and tests). */
  allowPrivateTargets: boolean;
}

export function createToolContext(bearer: BuyerBearer, options: ToolContextOptions): ToolContext {
  const sdk = new TreasuryClient({ apiUrl: bearer.server, token: bearer.token });
  const api = new ApiClient({ baseUrl: bearer.server, token: bearer.token });
  let agentId: Promise<string> | undefined = bearer.agent ? Promise.resolve(bearer.agent.agent_id) : undefined;
  return {
    sdk,
    apiUrl: bearer.server,
    api,
    sellerFetch: sellerFetch({ allowPrivate: options.allowPrivateTargets }),
    agentId() {
      agentId ??= api.request('GET', '/v1/auth/whoami', { reply: whoamiSchema }).then((who) => {
        const id = who.scope_type === 'agent' ? who.scope_id : 'agent_id' in who ? who.agent_id : undefined;
        if (!id)
          throw new CliError({
            code: 'not_an_agent_bearer',
            userMessage: `xx mcp was started with a ${who.scope_type} bearer; it needs an agent PAT.`,
          });
        return id;
      });
      agentId.catch(() => (agentId = undefined)); // a failed ask is asked again next time
      return agentId;
    },
    async wallet(walletId, network) {
      if (walletId) {
        const wallet = await sdk.getWallet(walletId);
        if (wallet.status !== 'active')
          throw new CliError({ code: 'wallet_revoked', userMessage: `Wallet ${walletId} is revoked.` });
        return wallet;
      }
      const first = (await sdk.listWallets()).find(
        (w) => w.status === 'active' && (network === undefined || w.network === network),
      );
      if (!first) {
        const solana = network?.startsWith('solana:') === true;
        throw new CliError({
          code: 'no_wallet',
          userMessage: `The agent has no active managed wallet${network ? ` on ${network}` : ''}.`,
          recovery: {
            kind: 'create_wallet',
            chain: solana ? 'solana' : 'base',
            cli_command: `xx agent wallets add${solana ? ' --chain solana' : ''}`,
          },
        });
      }
      return first;
    },
  };
}
