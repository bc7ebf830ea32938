/**
 * `xx endpoints {list,add,price,update}`: the active service's priced endpoints (path, price, method,
 * route_prices, path_pattern, capabilities), through the service PAT. Flag values are checked here
 * first so a typo fails with exit 2 naming the flag instead of a round trip; the platform validates again.
 */
import type { Command } from 'commander';
import type { CliContext } from '../../core/cli-context.js';
import { readEveryPage } from '../../core/read-every-page.js';
import { endpointPageSchema, endpointViewSchema } from '../../../shared/api-responses/seller-responses.js';
import { formatFields, formatTable } from './seller-format.js';
import {
  act,
  activeService,
  badArgument,
  collect,
  flagOrPrompt,
  methodArgument,
  parseRoutePrices,
  sellerPath,
  usdArgument,
  type ContextOf,
  type EndpointView,
} from './seller-kit.js';

interface EndpointFlags {
  path?: string;
  price?: string;
  method?: string;
  slug?: string;
  pathPattern?: string;
  routePrice?: string[];
  capability?: string[];
}

/**
 * The flags `add` and `update` share, in the order their help lists them: flags, help under `add`, help under
 * `update` (null: `update` has no such flag), and whether it repeats.
 */
const ENDPOINT_FLAGS: ReadonlyArray<readonly [flags: string, add: string, update: string | null, repeats?: true]> = [
  ['--path <path>', 'route path, e.g. /search', 'route path'],
  ['--price <usd>', 'price per call in USD, e.g. 0.05', 'price per call in USD'],
  ['--method <method>', 'HTTP method (default GET)', 'HTTP method'],
  ['--slug <slug>', 'endpoint slug (default: from method and path)', null],
  [
    '--path-pattern <pattern>',
    'pattern for ledger attribution, e.g. /items/{id}',
    'attribution pattern ("" clears it)',
  ],
  [
    '--route-price <path=usd>',
    'exact-path price override (repeatable; =0 means free)',
    'replaces the route-price overrides (repeatable)',
    true,
  ],
  ['--capability <tag>', 'capability tag (repeatable)', 'replaces the capability tags (repeatable)', true],
];

/** `cmd` with the endpoint flags as `add` or `update` words them. */
function withEndpointFlags(cmd: Command, as: 'add' | 'update'): Command {
  for (const [flags, add, update, repeats] of ENDPOINT_FLAGS) {
    const help = as === 'add' ? add : update;
    if (help === null) continue;
    if (repeats) cmd.option(flags, help, collect);
    else cmd.option(flags, help);
  }
  return cmd;
}

const ENDPOINT_ID = /^ep_[0-9a-f]{24}$/;

function pathFlag(flag: string, raw: string): string {
  if (!raw.startsWith('/')) throw badArgument(flag, `expected an absolute path such as /search, got "${raw}"`);
  return raw;
}

function endpointIdArgument(raw: string): string {
  if (!ENDPOINT_ID.test(raw))
    throw badArgument('<endpoint_id>', `expected an endpoint id (ep_…), got "${raw}"; see \`xx endpoints list\``);
  return raw;
}

function routePricesText(e: EndpointView): string {
  const entries = Object.entries(e.route_prices ?? {});
  return entries.map(([p, usd]) => `${p}=${usd === '' || usd === '0' ? 'free' : usd}`).join(' ');
}

export function describeEndpoint(e: EndpointView): string {
  return formatFields([
    ['endpoint_id', e.endpoint_id],
    ['slug', e.slug],
    ['route', `${e.method} ${e.path}`],
    ['price', `$${e.price}`],
    ['path pattern', e.path_pattern],
    ['route prices', routePricesText(e)],
    ['capabilities', e.capabilities.join(', ')],
  ]);
}

async function listEndpoints(ctx: CliContext): Promise<void> {
  const { client, service } = await activeService(ctx);
  const { endpoints } = await ctx.spin('Loading endpoints', () =>
    readEveryPage(client, sellerPath(service, '/endpoints'), 'endpoints', { page: endpointPageSchema }),
  );
  ctx.out(
    { endpoints },
    formatTable(
      ['endpoint_id', 'slug', 'method', 'path', 'price_usd', 'route_prices'],
      endpoints.map((e) => [e.endpoint_id, e.slug, e.method, e.path, e.price, routePricesText(e)]),
      'No endpoints yet. Add one with `xx endpoints add --path /search --price 0.05`.',
    ),
  );
}

async function addEndpoint(ctx: CliContext, opts: EndpointFlags): Promise<void> {
  const path = pathFlag('--path', await flagOrPrompt(ctx, opts.path, '--path', 'Route path (e.g. /search)'));
  const price = usdArgument(
    '--price',
    await flagOrPrompt(ctx, opts.price, '--price', 'Price per call in USD (e.g. 0.05)'),
  );
  if (opts.slug !== undefined && !/^[a-z0-9][a-z0-9-]{0,62}$/.test(opts.slug))
    throw badArgument('--slug', 'lower-case letters, digits and dashes, up to 63 characters');
  const routePrices = parseRoutePrices(opts.routePrice);
  const body = {
    path,
    price,
    ...(opts.method ? { method: methodArgument(opts.method) } : {}),
    ...(opts.slug ? { slug: opts.slug } : {}),
    ...(opts.pathPattern ? { path_pattern: pathFlag('--path-pattern', opts.pathPattern) } : {}),
    ...(routePrices ? { route_prices: routePrices } : {}),
    ...(opts.capability?.length ? { capabilities: opts.capability } : {}),
  };
  const { client, service } = await activeService(ctx);
  const endpoint = await ctx.spin('Adding the endpoint', () =>
    client.request('POST', sellerPath(service, '/endpoints'), { body, reply: endpointViewSchema }),
  );
  ctx.out(endpoint, `Added ${endpoint.method} ${endpoint.path} at $${endpoint.price}.\n${describeEndpoint(endpoint)}`);
}

async function patchEndpoint(
  ctx: CliContext,
  endpointId: string,
  body: Record<string, unknown>,
  verb: string,
): Promise<void> {
  const { client, service } = await activeService(ctx);
  const endpoint = await ctx.spin('Updating the endpoint', () =>
    client.request('PATCH', sellerPath(service, `/endpoints/${encodeURIComponent(endpointId)}`), {
      body,
      reply: endpointViewSchema,
    }),
  );
  ctx.out(endpoint, `${verb}\n${describeEndpoint(endpoint)}`);
}

async function priceEndpoint(ctx: CliContext, endpointId: string, usd: string): Promise<void> {
  const price = usdArgument('<usd>', usd);
  await patchEndpoint(ctx, endpointIdArgument(endpointId), { price }, `Price set to $${price}.`);
}

async function updateEndpoint(ctx: CliContext, endpointId: string, opts: EndpointFlags): Promise<void> {
  endpointIdArgument(endpointId);
  const routePrices = parseRoutePrices(opts.routePrice);
  const body: Record<string, unknown> = {
    ...(opts.path !== undefined ? { path: pathFlag('--path', opts.path) } : {}),
    ...(opts.price !== undefined ? { price: usdArgument('--price', opts.price) } : {}),
    ...(opts.method !== undefined ? { method: methodArgument(opts.method) } : {}),
    ...(routePrices ? { route_prices: routePrices } : {}),
    ...(opts.capability?.length ? { capabilities: opts.capability } : {}),
  };
  // An empty --path-pattern clears it.
  if (opts.pathPattern !== undefined)
    body.path_pattern = opts.pathPattern === '' ? null : pathFlag('--path-pattern', opts.pathPattern);
  if (Object.keys(body).length === 0)
    throw badArgument(
      '--path/--price/--method/--path-pattern/--route-price/--capability',
      'nothing to update; give at least one of these flags',
    );
  await patchEndpoint(ctx, endpointId, body, 'Updated.');
}

export function registerEndpointCommands(program: Command, contextOf: ContextOf): void {
  const endpoints = program.command('endpoints').description('Priced endpoints of the active service');
  endpoints
    .command('list')
    .description('List endpoints')
    .action(act(contextOf, (ctx) => listEndpoints(ctx)));

  withEndpointFlags(endpoints.command('add').description('Add a priced endpoint'), 'add').action(
    act<EndpointFlags>(contextOf, (ctx, opts) => addEndpoint(ctx, opts)),
  );

  endpoints
    .command('price')
    .description('Change an endpoint’s price')
    .argument('<endpoint_id>', 'endpoint id (ep_…)')
    .argument('<usd>', 'new price in USD')
    .action(act(contextOf, (ctx, _o, [id, usd]) => priceEndpoint(ctx, id!, usd!)));

  withEndpointFlags(
    endpoints
      .command('update')
      .description('Change any of path, price, method, path pattern, route prices, capabilities')
      .argument('<endpoint_id>', 'endpoint id (ep_…)'),
    'update',
  ).action(act<EndpointFlags>(contextOf, (ctx, opts, [id]) => updateEndpoint(ctx, id!, opts)));
}
