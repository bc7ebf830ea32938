/**
 * `npm run bench`'s phase (d): a buyer agent paying through its PAT with a daily cap across the agent's wallets —
 * decided on the day's total the API remembers (read once under the PAT's lock) and group-committed as in (a), the
 * total held to the cap by PostgreSQL (docs/adr/0006). The agent signs in with a fresh key (SIWE, its nonce asked of
 * the API: test/support/sign-in.ts), makes a treasury PAT and an agent PAT capped at $1,000,000 a day, and
 * `patWallets` wallets; each is paid once and 2 s more before the measured seconds.
 *
 * Measured after everything else, so it changes none of it: from here on the load pays with the agent's PAT.
 */
import { signInBody } from '../../test/support/sign-in.js';
import { drive, type DriveResult } from './closed-loop.js';
import { driveEach } from './drive-each.js';
import { BENCH_WALLET_POLICY, type benchPost } from './service-bench-parts.js';
import type { PayLoad } from './pay-bench-load.js';

/** (d)'s result, and the API's metrics just before and after it. */
export interface AgentPatRun {
  result: DriveResult;
  before: string;
  after: string;
}

export async function runAgentPatPhase(o: {
  api: string;
  post: ReturnType<typeof benchPost>;
  load: PayLoad;
  patWallets: number;
  concurrency: number;
  seconds: number;
}): Promise<AgentPatRun> {
  const { api, post, load } = o;
  const scrape = async () => (await fetch(`${api}/metrics`)).text();
  process.stderr.write(
    `• pay (d): one agent's PAT with a daily cap, ${o.patWallets} wallets, ${o.concurrency} concurrent, ${o.seconds} s\n`,
  );
  // A SIWE sign-in of a fresh key, its nonce asked of the API (test/support/sign-in.ts).
  const nonceApi = {
    request: async (method: string, route: string) => {
      const res = await fetch(api + route, { method });
      return { status: res.status, body: await res.json() };
    },
  };
  const init = await fetch(`${api}/v1/identity/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(await signInBody(nonceApi, api)),
  });
  if (init.status !== 200 && init.status !== 201)
    throw new Error(`bench: sign-in failed (${init.status}): ${await init.text()}`);
  const session = ((await init.json()) as { session: string }).session;
  const treasuryPat = (await post('/v1/pats', session, { scope_type: 'treasury' })).body.pat as string;
  const agentPat = (await post('/v1/pats', session, { scope_type: 'agent', daily_cap_usd: '1000000' })).body
    .pat as string;
  const agentWallets: string[] = [];
  for (let i = 0; i < o.patWallets; i++) {
    const made = await post('/v1/wallets', treasuryPat, { policy: BENCH_WALLET_POLICY });
    if (made.status !== 201)
      throw new Error(`bench: agent wallet ${i + 1} answered ${made.status}: ${JSON.stringify(made.body)}`);
    agentWallets.push(made.body.id as string);
  }
  load.useBearer(agentPat);
  load.phase = '(d) warm-up';
  await driveEach(o.concurrency, agentWallets, load.payOnce);
  await drive(o.concurrency, 2, (i) => load.payOnce(agentWallets[i % agentWallets.length]!));
  load.phase = '(d)';
  const before = await scrape();
  const result = await drive(o.concurrency, o.seconds, (i) => load.payOnce(agentWallets[i % agentWallets.length]!));
  return { result, before, after: await scrape() };
}
