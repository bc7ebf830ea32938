/**
 * Payments of `bench/x402-middleware-bench.ts`: the challenge a server advertises, a `PAYMENT-SIGNATURE` built
 * around it for each pre-signed authorization, the check that two servers ask for the same terms, and the
 * operations that spend a server's payments — each used at most once per server, whatever order the slices
 * run in: one cursor per server, shared by its warm-up (at most a fifth of them) and its timed slices.
 *
 * Limits: exact EVM on BENCH_NETWORK only; an authorization is valid for the requirement's maxTimeoutSeconds
 * from its signing, so a run longer than that would see expired payments (the facilitator stub does not check).
 */
import { BENCH_NETWORK } from './x402-bench-servers.js';
import type { ServerChild } from './x402-bench-children.js';
import { getOnce, type Outcome, type Requester } from './x402-bench-load.js';
import type { SignedAuthorization } from './sign-transfer-authorizations.js';

export interface Challenge {
  x402Version: number;
  resource?: { url: string; description?: string; mimeType?: string };
  accepts: Array<{
    scheme: string;
    network: string;
    amount: string;
    asset: string;
    payTo: string;
    maxTimeoutSeconds: number;
    extra?: { name?: string; version?: string };
  }>;
}

export async function readChallenge(server: ServerChild, paidPath = '/paid'): Promise<Challenge> {
  const res = await getOnce(server.port, paidPath);
  const header = res.headers['payment-required'];
  if (res.status !== 402 || typeof header !== 'string')
    throw new Error(
      `${server.name}: GET ${paidPath} without payment gave HTTP ${res.status} without a PAYMENT-REQUIRED header: ${String(res.body).slice(0, 300)}`,
    );
  const challenge = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as Challenge;
  const exact = challenge.accepts.find((a) => a.scheme === 'exact' && a.network === BENCH_NETWORK);
  if (!exact) throw new Error(`${server.name}: no exact ${BENCH_NETWORK} requirement in ${JSON.stringify(challenge)}`);
  return { ...challenge, accepts: [exact] };
}

/** The `PAYMENT-SIGNATURE` value for `auth`, echoing the server's own requirement as `accepted`. */
export function paymentHeader(challenge: Challenge, auth: SignedAuthorization): string {
  const { signature, ...authorization } = auth;
  const payload = {
    x402Version: 2,
    resource: challenge.resource,
    accepted: challenge.accepts[0],
    payload: { signature, authorization },
  };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
}

export function sameTerms(a: Challenge['accepts'][0], b: Challenge['accepts'][0]): string | undefined {
  const problems: string[] = [];
  if (a.amount !== b.amount) problems.push(`amount ${a.amount} vs ${b.amount}`);
  if (a.asset.toLowerCase() !== b.asset.toLowerCase()) problems.push(`asset ${a.asset} vs ${b.asset}`);
  if (a.payTo.toLowerCase() !== b.payTo.toLowerCase()) problems.push(`payTo ${a.payTo} vs ${b.payTo}`);
  if (a.network !== b.network) problems.push(`network ${a.network} vs ${b.network}`);
  if (a.maxTimeoutSeconds !== b.maxTimeoutSeconds)
    problems.push(`maxTimeoutSeconds ${a.maxTimeoutSeconds} vs ${b.maxTimeoutSeconds}`);
  if (a.extra?.name !== b.extra?.name || a.extra?.version !== b.extra?.version)
    problems.push('EIP-712 domain name/version differ');
  return problems.length ? problems.join('; ') : undefined;
}

/**
 * A server's paid operations over its own payments: `warm` stops at a fifth of them, `timed` at the end; both
 * advance one cursor, so no payment is sent twice to this server. payments[0] is the set-up check's.
 */
export function paidOps(
  get: Requester,
  payments: string[],
  paidPath = '/paid',
): { timed: () => Promise<Outcome>; warm: () => Promise<Outcome> } {
  let next = 1;
  const warmUpLimit = Math.floor(payments.length / 5);
  const op = (limit: number) => (): Promise<Outcome> => {
    if (next >= limit) return Promise.resolve('exhausted');
    return get(paidPath, { 'payment-signature': payments[next++]! }, 200, true);
  };
  return { timed: op(payments.length), warm: op(warmUpLimit) };
}
