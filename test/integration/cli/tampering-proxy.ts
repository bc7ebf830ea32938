/**
 * A loopback HTTP proxy in front of a test API that plays a compromised API for the CLI's receipt tests
 * (./policy-receipt-verify.test.ts, ./policy-receipt-verify-solana.test.ts): per request it forwards, answers
 * itself, or forwards and rewrites the answer, before the CLI sees it.
 */
import http from 'node:http';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { policyDocumentHash } from '../../../policy/signed-policy.js';

/** What the proxy does with one request: forward it, answer it itself, or forward it and rewrite the answer. */
export type Tamper = (
  method: string,
  url: string,
  body: string,
) => { answer?: unknown; rewrite?: (text: string) => string };

/** A loopback HTTP proxy in front of the API; `tamper` decides per request (nothing by default). */
export async function startTamperingProxy() {
  let target: number | undefined;
  let tamper: Tamper = () => ({});
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const plan = tamper(req.method!, req.url!, body);
        if (plan.answer !== undefined) {
          res.writeHead(200, { 'content-type': 'application/json' });
          return void res.end(JSON.stringify(plan.answer));
        }
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers))
          if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
        const upstream = await fetch(`http://127.0.0.1:${target}${req.url}`, {
          method: req.method,
          headers,
          ...(body === '' ? {} : { body }),
        });
        let text = await upstream.text();
        if (plan.rewrite) text = plan.rewrite(text);
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
        res.end(text);
      })().catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    target: (p: number) => void (target = p),
    set: (t: Tamper) => void (tamper = t),
    reset: () => void (tamper = () => ({})),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Makes the proxy play the API that withholds a tightening: it keeps every signed PUT of a policy from the API (so
 * the signer never sees it) and answers as if it had been applied. `body` is the last document withheld.
 */
export function withholdSignedPolicy(
  proxy: Awaited<ReturnType<typeof startTamperingProxy>>,
  walletId: string,
  authority: string,
): { body: any } {
  const withheld: { body: any } = { body: undefined };
  proxy.set((method, url, body) => {
    if (method !== 'PUT' || !url.endsWith('/policy/signed')) return {};
    withheld.body = JSON.parse(body);
    const policy = walletPolicySchema.parse(withheld.body.policy);
    return {
      answer: {
        wallet_id: walletId,
        policy: withheld.body.policy,
        owner_policy: {
          state: 'owner_signed',
          authority: { kind: 'owner', address: authority },
          version: withheld.body.version,
          policy_hash: policyDocumentHash(policy),
          issued_at: withheld.body.issued_at,
          next_version: withheld.body.version + 1,
        },
      },
    };
  });
  return withheld;
}
