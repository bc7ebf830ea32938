/**
 * `xx status`: the active env on the first line, then the active service (status, suspended, origin
 * verified, payout mode), its endpoints, and for each whether its route answers at the origin. A healthy
 * paid route answers an unpaid request with 402; the probe never pays, never sends a body, follows no
 * redirects and gives up after 3 s. Non-GET routes are probed with HEAD only (a bodyless POST or DELETE to
 * an origin that turns out not to be gated could act), so they may read "unchecked". Without an origin the
 * health column is skipped.
 */
import type { Command } from 'commander';
import type { CliContext } from '../../core/cli-context.js';
import { readEveryPage } from '../../core/read-every-page.js';
import { formatFields, formatTable } from './seller-format.js';
import { endpointPageSchema, sellerViewSchema } from '../../../shared/api-responses/seller-responses.js';
import { act, activeService, sellerPath, type ContextOf, type EndpointView } from './seller-kit.js';

const PROBE_TIMEOUT_MS = 3000;

export interface RouteHealth {
  state: 'healthy' | 'unhealthy' | 'unchecked' | 'skipped';
  url: string | null;
  probe: 'GET' | 'HEAD' | null;
  http_status: number | null;
  detail: string;
}

/** The URL a route is probed at: `{name}` placeholders are kept literally (any segment must be gated). */
function routeUrl(origin: string, path: string): string {
  return new URL(path, origin.endsWith('/') ? origin : `${origin}/`).toString();
}

export async function probeRoute(
  origin: string | null,
  endpoint: Pick<EndpointView, 'method' | 'path'>,
): Promise<RouteHealth> {
  if (!origin)
    return {
      state: 'skipped',
      url: null,
      probe: null,
      http_status: null,
      detail: 'no origin set (xx verify --origin <url>)',
    };
  const url = routeUrl(origin, endpoint.path);
  const probe = endpoint.method === 'GET' ? 'GET' : 'HEAD';
  let res: Response;
  try {
    res = await fetch(url, {
      method: probe,
      redirect: 'manual',
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      headers: { 'user-agent': 'xx-cli-status/1' },
    });
    await res.body?.cancel().catch(() => undefined);
  } catch (err) {
    const timeout = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    return {
      state: 'unhealthy',
      url,
      probe,
      http_status: null,
      detail: timeout ? `no answer within ${PROBE_TIMEOUT_MS / 1000} s` : 'unreachable',
    };
  }
  if (res.status === 402)
    return { state: 'healthy', url, probe, http_status: 402, detail: 'answers 402 Payment Required' };
  if (probe === 'HEAD')
    return {
      state: 'unchecked',
      url,
      probe,
      http_status: res.status,
      detail: `HEAD answered ${res.status}; ${endpoint.method} routes are not probed with their own method`,
    };
  return {
    state: 'unhealthy',
    url,
    probe,
    http_status: res.status,
    detail: `answered ${res.status}, expected 402 (is the x402 middleware in front of this route?)`,
  };
}

async function status(ctx: CliContext): Promise<void> {
  const apiUrl = ctx.apiUrl();
  const envLine = `env: ${ctx.env.name} (${apiUrl})`;
  const { client, service } = await activeService(ctx);
  const [seller, { endpoints }] = await ctx.spin('Checking the service', () =>
    Promise.all([
      client.request('GET', sellerPath(service), { reply: sellerViewSchema }),
      readEveryPage(client, sellerPath(service, '/endpoints'), 'endpoints', { page: endpointPageSchema }),
    ]),
  );
  const health = await ctx.spin('Probing routes', () =>
    Promise.all(endpoints.map((e) => probeRoute(seller.origin, e))),
  );
  const rows = endpoints.map((e, i) => ({ ...e, health: health[i]! }));
  const data = {
    env: { name: ctx.env.name, api_url: apiUrl },
    seller: {
      seller_id: seller.seller_id,
      name: seller.name,
      slug: seller.slug,
      status: seller.status,
      suspended: seller.status === 'suspended',
      origin: seller.origin,
      origin_verified: seller.origin_verified,
      payout_mode: seller.payout_mode,
      banking_state: seller.banking_state,
    },
    endpoint_count: endpoints.length,
    endpoints: rows.map((r) => ({
      endpoint_id: r.endpoint_id,
      slug: r.slug,
      method: r.method,
      path: r.path,
      price: r.price,
      health: r.health,
    })),
  };
  const mark = (h: RouteHealth) => (h.state === 'healthy' ? 'ok' : h.state === 'unhealthy' ? 'FAIL' : h.state);
  const lines = [
    envLine,
    formatFields([
      ['service', `${seller.name} (${seller.slug}, ${seller.seller_id})`],
      ['status', seller.status === 'suspended' ? 'suspended (xx service resume)' : 'active'],
      ['origin', seller.origin ?? 'not set'],
      ['verified', seller.origin_verified ? `yes (${seller.verified_at})` : 'no (xx verify)'],
      ['payout mode', seller.payout_mode],
      ['endpoints', String(endpoints.length)],
    ]),
  ];
  if (rows.length > 0) {
    lines.push(
      '',
      formatTable(
        ['route', 'price_usd', 'health', 'detail'],
        rows.map((r) => [`${r.method} ${r.path}`, r.price, mark(r.health), r.health.detail]),
      ),
    );
  }
  ctx.out(data, lines.join('\n'));
}

export function registerStatusCommand(program: Command, contextOf: ContextOf): void {
  program
    .command('status')
    .description('Env, service status and endpoint health')
    .action(act(contextOf, (ctx) => status(ctx)));
}
