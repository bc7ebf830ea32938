/**
 * `xx mcp [--http <host:port> [--allow-remote]] [--profile <name>] [--allow-private-targets]`: Treasury's buyer tools as an MCP server
 * (docs/cli.md, "xx mcp"), on stdio by default — stdout is the protocol, so nothing else is written there —
 * or Streamable HTTP at `http://<host:port>/mcp`. Its bearer is the agent PAT the buyer commands use
 * (--profile, XX_PAT, the active profile, the active agent); with none it exits 1 at start with
 * `missing_bearer` (one JSON object on stderr under --json). The PAT is never shown to the client. The `pay`
 * tool reaches public sellers only, unless --allow-private-targets or XX_MCP_ALLOW_PRIVATE_TARGETS=1 (the
 * sandbox, tests) lets it reach loopback and private addresses too (./seller-fetch.ts).
 */
import type { Command } from 'commander';
// eslint-disable-next-line import-x/no-unresolved -- the SDK's "./*" export maps types to *.js.d.ts, which this resolver cannot follow (tsc can)
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { findBuyerBearer, type BearerFlags } from '../../core/buyer-bearer.js';
import type { CliContext } from '../../core/cli-context.js';
import { CliError, REAUTHENTICATE_RECOVERY } from '../../core/cli-error.js';
import { act, type ContextOf } from '../seller/seller-kit.js';
import { startMcpHttp } from './mcp-http-server.js';
import { parseListenAddress } from './mcp-listen-address.js';
import { createToolContext } from './tool-context.js';
import { buildTreasuryMcpServer } from './treasury-mcp-server.js';

interface McpOptions extends BearerFlags {
  http?: string;
  allowRemote?: boolean;
  allowPrivateTargets?: boolean;
}

/** Resolves when the process is asked to stop (SIGINT, SIGTERM) or `closed` settles. */
function untilStopped(closed?: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const done = () => resolve();
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
    void closed?.then(done);
  });
}

async function mcp(ctx: CliContext, opts: McpOptions): Promise<void> {
  const address = opts.http === undefined ? undefined : parseListenAddress(opts.http, opts.allowRemote === true);
  const bearer = findBuyerBearer(ctx, opts);
  if (!bearer)
    throw new CliError({
      code: 'missing_bearer',
      userMessage:
        'xx mcp has no agent PAT: set XX_PAT, pass --profile <name>, or sign in with `xx login --token -` (the PAT on stdin) / `xx init`.',
      recovery: { ...REAUTHENTICATE_RECOVERY },
    });
  const allowPrivateTargets = opts.allowPrivateTargets === true || process.env.XX_MCP_ALLOW_PRIVATE_TARGETS === '1';
  const tools = createToolContext(bearer, { allowPrivateTargets });
  if (!address) {
    const server = buildTreasuryMcpServer(tools);
    const transport = new StdioServerTransport();
    const closed = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
      process.stdin.once('end', () => resolve());
    });
    await server.connect(transport);
    await untilStopped(closed);
    await server.close().catch(() => undefined);
    return;
  }
  const running = await startMcpHttp(address, () => buildTreasuryMcpServer(tools));
  // The one line a launcher reads: where the server listens (never the bearer).
  if (ctx.json) process.stdout.write(`${JSON.stringify({ url: running.url, transport: 'streamable-http' })}\n`);
  else process.stderr.write(`xx mcp: Streamable HTTP at ${running.url} (Ctrl-C stops)\n`);
  await untilStopped();
  await running.close();
}

export function registerMcpCommand(program: Command, contextOf: ContextOf): void {
  program
    .command('mcp')
    .description(
      "Serve Treasury's buyer tools (discover, list_wallets, get_balance, pay, check_policy, payment_history) over MCP",
    )
    .option(
      '--http <host:port>',
      'Streamable HTTP at http://<host:port>/mcp instead of stdio (loopback only by default)',
    )
    .option('--allow-remote', 'allow --http on a non-loopback address (anyone reaching it spends with the PAT)')
    .option('--profile <name>', 'a credentials profile instead of XX_PAT / the active profile / the active agent')
    .option(
      '--allow-private-targets',
      'let the pay tool reach loopback and private addresses (local sellers; also XX_MCP_ALLOW_PRIVATE_TARGETS=1)',
    )
    .addHelpText(
      'after',
      '\nExample (an MCP client config):\n  {"mcpServers": {"treasury": {"command": "xx", "args": ["mcp"], "env": {"XX_PAT": "xx_pat_…", "XX_API_URL": "https://treasury.example"}}}}',
    )
    .action(act(contextOf, (ctx, opts: McpOptions) => mcp(ctx, opts)));
}
