/**
 * `xx mcp [--http <host:port> [--allow-remote]] [--profile <name>] [--allow-private-targets]`: Treasury's buyer tools as an MCP server
 * (docs/cli.md, "xx mcp"), on stdio by default — stdout is the protocol, so nothing else is written there —
 * or Streamable HTTP at `http://<host:port>/mcp`. Its bearer is the agent PAT the buyer commands use
 * (--profile, XX_PAT, the active profile, the active agent); with none it exits 1 at start with
 * `missing_bearer` (one JSON object on stderr under --json). The PAT is never shown to the client. Over HTTP
 * every request must also carry `Authorization: Bearer <token>`: a random token made at this launch and
 * shown once, to whoever started it (beside the URL on stderr, or as `bearer` in the --json line), or the
 * stable one given in XX_MCP_HTTP_TOKEN, which is checked and never printed back (./mcp-http-bearer.ts). The `pay`
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
import { mcpHttpBearer, MCP_HTTP_TOKEN_VARIABLE, type McpHttpBearer } from './mcp-http-bearer.js';
import { startMcpHttp, type RunningMcpHttp } from './mcp-http-server.js';
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

/** What the user who started `--http` is told: the URL, the bearer (unless they supplied it) and a client config. */
function announce(ctx: CliContext, running: RunningMcpHttp, bearer: McpHttpBearer): void {
  const generated = bearer.source === 'generated';
  // The one line a launcher reads: where the server listens, and this launch's token (never the PAT).
  if (ctx.json) {
    const line = { url: running.url, transport: 'streamable-http', bearer_source: bearer.source };
    process.stdout.write(`${JSON.stringify(generated ? { ...line, bearer: bearer.token } : line)}\n`);
    return;
  }
  const shown = generated ? bearer.token : `<${MCP_HTTP_TOKEN_VARIABLE}>`;
  const config = {
    mcpServers: { treasury: { type: 'http', url: running.url, headers: { Authorization: `Bearer ${shown}` } } },
  };
  process.stderr.write(
    [
      `xx mcp: Streamable HTTP at ${running.url} (Ctrl-C stops)`,
      generated
        ? `xx mcp: every request must carry Authorization: Bearer ${bearer.token} (this launch only; set ${MCP_HTTP_TOKEN_VARIABLE} for a stable one)`
        : `xx mcp: every request must carry Authorization: Bearer <the token in ${MCP_HTTP_TOKEN_VARIABLE}> (not shown)`,
      `xx mcp: an MCP client config: ${JSON.stringify(config)}`,
      '',
    ].join('\n'),
  );
}

async function mcp(ctx: CliContext, opts: McpOptions): Promise<void> {
  const address = opts.http === undefined ? undefined : parseListenAddress(opts.http, opts.allowRemote === true);
  const httpBearer = address && mcpHttpBearer();
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
  if (!address || !httpBearer) {
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
  const running = await startMcpHttp(address, httpBearer.token, () => buildTreasuryMcpServer(tools));
  announce(ctx, running, httpBearer);
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
      'Streamable HTTP at http://<host:port>/mcp instead of stdio (loopback only by default); requests must carry Authorization: Bearer <token>, the token printed at start (new each launch) or XX_MCP_HTTP_TOKEN',
    )
    .option(
      '--allow-remote',
      'allow --http on a non-loopback address (plain HTTP: whoever sees the bearer on the wire spends with the PAT)',
    )
    .option('--profile <name>', 'a credentials profile instead of XX_PAT / the active profile / the active agent')
    .option(
      '--allow-private-targets',
      'let the pay tool reach loopback and private addresses (local sellers; also XX_MCP_ALLOW_PRIVATE_TARGETS=1)',
    )
    .addHelpText(
      'after',
      '\nExample (an MCP client config):\n  {"mcpServers": {"treasury": {"command": "xx", "args": ["mcp"], "env": {"XX_PAT": "xx_pat_…", "XX_API_URL": "https://treasury.example"}}}}' +
        '\nOver --http, with the token it printed at start (or the XX_MCP_HTTP_TOKEN you set, e.g. `openssl rand -hex 32`):\n  {"mcpServers": {"treasury": {"type": "http", "url": "http://127.0.0.1:8765/mcp", "headers": {"Authorization": "Bearer <token>"}}}}',
    )
    .action(act(contextOf, (ctx, opts: McpOptions) => mcp(ctx, opts)));
}
