/**
 * Production mode (`NODE_ENV=production` or `TREASURY_ENV=production`): the settings treasury-api refuses to
 * start with there, checked once at start, before anything is opened. Each refusal names one setting and
 * says what to do (docs/configuration.md, Production mode); main.ts prints it as one line and exits 1.
 *
 * Defends against: a production process on an ephemeral embedded database (DATABASE_URL unset: everything
 * lost at restart); bearer tokens and sign-in messages over plain HTTP (neither TLS files nor an explicit
 * `TREASURY_BEHIND_TLS_PROXY=1`, or a public URL that is not https); sandbox and test switches left on
 * (`TREASURY_VERIFY_ALLOW_PRIVATE`, `XX_ALLOW_LOCAL_ONLY`, `TREASURY_RATE_LIMITS=off`, the pay fault
 * injection `TREASURY_TEST_PAY_FAULT` or a test preload in `--import`/`--require`/NODE_OPTIONS); an operator
 * token a person typed (short, or too few distinct characters to be random); trusted proxies that cover public
 * addresses (every client could then choose its own X-Forwarded-For and escape the per-address limits:
 * ../net/trusted-proxy-breadth.ts has the rule); an upstream in plain http to another host (facilitator,
 * JSON-RPC: forged answers on the path; http only to loopback, ../../shared/plain-http-upstream.ts); Prometheus
 * /metrics on the API's own listener (every tenant's counts to whoever reaches it) unless the operator gave it a
 * listener of its own or said a proxy in front keeps it from the public (./metrics-listener-config.ts).
 * Does not defend: a proxy that claims TLS and does not terminate it; a random-looking token that leaked.
 * Outside production mode nothing here applies (the sandbox and the tests run as before).
 */
import { isPlainHttpOffHost } from '../../shared/plain-http-upstream.js';
import { parseTrustedProxies } from '../net/client-address-key.js';
import { publicTrustedRange } from '../net/trusted-proxy-breadth.js';
import { metricsListenerRefusal } from './metrics-listener-config.js';

export interface ProductionRefusal {
  /** The environment variable (or process option) to change. */
  setting: string;
  /** One sentence: what is wrong and what to do. */
  reason: string;
}

export interface ProcessFacts {
  /** `process.execArgv`: the node options this process was started with. */
  execArgv: readonly string[];
  /** Whether a test preload installed pay fault hooks (src/api/pay/pay-fault-hooks.ts). */
  faultHooksInstalled: boolean;
}

/** True under `NODE_ENV=production` or `TREASURY_ENV=production`. */
export function isProductionMode(env: Readonly<Record<string, string | undefined>>): boolean {
  return env.NODE_ENV === 'production' || env.TREASURY_ENV === 'production';
}

/** Minimum length and estimated entropy (length × log2 of distinct characters) of the operator token. */
export const MIN_OPERATOR_TOKEN_LENGTH = 32;
export const MIN_OPERATOR_TOKEN_BITS = 128;
const PLACEHOLDER_WORDS = ['changeme', 'change-me', 'password', 'example', 'secret', 'admin', 'treasury', 'sandbox'];

/** Why `token` is too weak for production, or undefined when it is not. */
export function operatorTokenWeakness(token: string): string | undefined {
  if (token.length < MIN_OPERATOR_TOKEN_LENGTH)
    return `is ${token.length} characters; production needs at least ${MIN_OPERATOR_TOKEN_LENGTH} random ones (e.g. openssl rand -base64 32)`;
  const lower = token.toLowerCase();
  const word = PLACEHOLDER_WORDS.find((w) => lower.includes(w));
  if (word !== undefined)
    return `contains the placeholder word "${word}"; use a random token (e.g. openssl rand -base64 32)`;
  const bits = token.length * Math.log2(new Set(token).size);
  if (bits < MIN_OPERATOR_TOKEN_BITS)
    return `has too few distinct characters to be random (about ${Math.floor(bits)} bits, ${MIN_OPERATOR_TOKEN_BITS} needed); use e.g. openssl rand -base64 32`;
  return undefined;
}

/** Node options that load test code: a preload from test/ (the pay fault preload among them). */
function testPreloadIn(options: readonly string[]): string | undefined {
  return options.find((o) => /(^|[\\/=])test[\\/]/.test(o) || o.includes('fault-preload'));
}

/** TREASURY_TRUSTED_PROXIES when it trusts a range covering public addresses; a malformed list is left to the config. */
function trustedProxiesRefusal(list: string | undefined): ProductionRefusal | undefined {
  let range: string | undefined;
  try {
    range = publicTrustedRange(parseTrustedProxies(list ?? ''));
  } catch {
    return undefined; // loadAppConfig refuses it, naming the entry
  }
  if (range === undefined) return undefined;
  return {
    setting: 'TREASURY_TRUSTED_PROXIES',
    reason: `trusts ${range}, which covers public addresses: any client could then write its own X-Forwarded-For and escape the per-address limits; name the proxies (addresses, private ranges, or public ranges of /8 (IPv6 /16) or longer)`,
  };
}

const PLAIN_HTTP_REASON = 'must be https in production mode (http only to this machine: localhost, 127.0.0.0/8, ::1)';

/** The first upstream URL (facilitator, JSON-RPC) in plain http to another host; malformed values are left to the config. */
function plainHttpUpstreamRefusal(env: Readonly<Record<string, string | undefined>>): ProductionRefusal | undefined {
  for (const name of ['TREASURY_FACILITATOR_URL', 'TREASURY_SOLANA_RPC_URL'])
    if (env[name] !== undefined && isPlainHttpOffHost(env[name])) return { setting: name, reason: PLAIN_HTTP_REASON };
  let rpcUrls: unknown;
  try {
    rpcUrls = JSON.parse(env.TREASURY_RPC_URLS || '{}');
  } catch {
    return undefined; // loadAppConfig refuses it
  }
  if (typeof rpcUrls !== 'object' || rpcUrls === null) return undefined;
  for (const [network, url] of Object.entries(rpcUrls))
    if (typeof url === 'string' && isPlainHttpOffHost(url))
      return { setting: 'TREASURY_RPC_URLS', reason: `${network}: ${PLAIN_HTTP_REASON}` };
  return undefined;
}

/** The first setting production mode refuses, or undefined when the process may start. */
export function productionRefusal(
  env: Readonly<Record<string, string | undefined>>,
  facts: ProcessFacts,
): ProductionRefusal | undefined {
  if (!isProductionMode(env)) return undefined;
  const set = (name: string) => env[name] !== undefined && env[name] !== '';
  if (!set('DATABASE_URL'))
    return {
      setting: 'DATABASE_URL',
      reason: 'is not set: production needs a PostgreSQL server (the embedded database is for the sandbox only)',
    };
  const certFile = set('TREASURY_TLS_CERT_FILE');
  const keyFile = set('TREASURY_TLS_KEY_FILE');
  if (certFile !== keyFile)
    return {
      setting: certFile ? 'TREASURY_TLS_KEY_FILE' : 'TREASURY_TLS_CERT_FILE',
      reason: 'is not set: TLS needs both TREASURY_TLS_CERT_FILE and TREASURY_TLS_KEY_FILE',
    };
  if (!certFile && env.TREASURY_BEHIND_TLS_PROXY !== '1')
    return {
      setting: 'TREASURY_BEHIND_TLS_PROXY',
      reason:
        'is not 1 and no TLS certificate is configured: set TREASURY_TLS_CERT_FILE and TREASURY_TLS_KEY_FILE, or TREASURY_BEHIND_TLS_PROXY=1 when a proxy in front terminates TLS',
    };
  if (!set('TREASURY_PUBLIC_URL') || !env.TREASURY_PUBLIC_URL!.startsWith('https://'))
    return {
      setting: 'TREASURY_PUBLIC_URL',
      reason: 'must be the https:// origin clients reach the API at (sign-in messages name it)',
    };
  const metrics = metricsListenerRefusal(env);
  if (metrics) return metrics;
  const upstream = plainHttpUpstreamRefusal(env);
  if (upstream) return upstream;
  const proxies = trustedProxiesRefusal(env.TREASURY_TRUSTED_PROXIES);
  if (proxies) return proxies;
  for (const name of ['TREASURY_VERIFY_ALLOW_PRIVATE', 'XX_ALLOW_LOCAL_ONLY'])
    if (set(name) && env[name] !== '0')
      return { setting: name, reason: 'is a sandbox-only switch; unset it in production' };
  for (const name of ['TREASURY_SANDBOX_FAUCET_URL', 'TREASURY_SANDBOX_SOLANA_FAUCET_URL'])
    if (set(name)) return { setting: name, reason: 'names a sandbox faucet; production has none, unset it' };
  if (env.TREASURY_RATE_LIMITS === 'off')
    return { setting: 'TREASURY_RATE_LIMITS', reason: 'is off, which is for benchmarks only; unset it in production' };
  if (set('TREASURY_TEST_PAY_FAULT') || facts.faultHooksInstalled)
    return { setting: 'TREASURY_TEST_PAY_FAULT', reason: 'is test fault injection; unset it in production' };
  const preload = testPreloadIn([...facts.execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)]);
  if (preload !== undefined)
    return {
      setting: 'NODE_OPTIONS',
      reason: `loads test code (${preload.slice(0, 120)}); start node on dist/src/api/main.js without test preloads`,
    };
  const token = env.TREASURY_ADMIN_TOKEN;
  if (token !== undefined && token !== '') {
    const weakness = operatorTokenWeakness(token);
    if (weakness !== undefined) return { setting: 'TREASURY_ADMIN_TOKEN', reason: weakness };
  }
  return undefined;
}
