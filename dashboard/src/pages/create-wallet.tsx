/**
 * Create wallet (/dashboard/wallets/new, the `dashboard_url` of the `create_wallet` recovery): adds a managed
 * wallet to an agent (POST /v1/agents/{id}/wallets; the owner picks the agent, a session from the CLI adds
 * to its own) on a chosen chain, with an optional policy checked as the API checks it, then opens it.
 */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { AgentPage, WalletView } from '../../../src/shared/api-responses/wallet-responses';
import { api, reply } from '../api/client';
import { useSession } from '../api/session';
import { RequireSession } from '../ui/sign-in-panel';
import { paths, to } from '../ui/paths';
import { ErrorBox, Loaded, useLoad } from '../ui/states';
import { policyIssues } from './wallet-policy';
import { CardForm } from '../ui/card-form';
import { TextField } from '../ui/text-field';

const CHAINS = [
  { value: 'base-sepolia', label: 'Base Sepolia (testnet)' },
  { value: 'base', label: 'Base' },
];

function CreateWallet() {
  const session = useSession()!;
  const { route } = useLocation();
  const [agents] = useLoad(async () => {
    if (session.origin === 'pat_exchange') return [{ agent_id: session.agentId, label: 'this agent' }];
    return (await reply<AgentPage>(api.GET('/v1/agents', { params: { query: { limit: 100 } } }))).agents;
  }, [session.token]);
  const [agent, setAgent] = useState('');
  const [label, setLabel] = useState('');
  const [chain, setChain] = useState('base-sepolia');
  const [policy, setPolicy] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const issues = policy.trim() ? policyIssues(policy) : [];
  return (
    <Loaded load={agents} what="agents">
      {(list) => {
        const chosen = agent || list[0]?.agent_id || '';
        return (
          <CardForm
            labelledBy="create-title"
            onSubmit={() => {
              if (issues.length || !chosen) return;
              setBusy(true);
              setError(null);
              const body = {
                ...(label.trim() ? { label: label.trim() } : {}),
                chain,
                ...(policy.trim() ? { policy: JSON.parse(policy) as unknown } : {}),
              };
              reply<WalletView>(
                // The route's body (label, chain, policy) is not in the OpenAPI document yet.
                api.POST('/v1/agents/{id}/wallets', { params: { path: { id: chosen } }, body: body as never }),
              ).then(
                (w) => route(to(paths.wallet(w.id))),
                (err: unknown) => {
                  setError(err);
                  setBusy(false);
                },
              );
            }}
          >
            <h2 id="create-title">New managed wallet</h2>
            <div class="field">
              <label for="cw-agent">Agent</label>
              <select id="cw-agent" value={chosen} onChange={(e) => setAgent((e.target as HTMLSelectElement).value)}>
                {list.map((a) => (
                  <option key={a.agent_id} value={a.agent_id}>
                    {a.label ?? a.agent_id} ({a.agent_id})
                  </option>
                ))}
              </select>
            </div>
            <TextField
              id="cw-label"
              label="Label (optional)"
              value={label}
              onValue={(v) => setLabel(v)}
              maxLength={128}
            />
            <div class="field">
              <label for="cw-chain">Chain</label>
              <select id="cw-chain" value={chain} onChange={(e) => setChain((e.target as HTMLSelectElement).value)}>
                {CHAINS.map((c) => (
                  <option key={c.value} value={c.value}>
                    {c.label}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="cw-policy">Policy (JSON, optional)</label>
              <textarea
                id="cw-policy"
                value={policy}
                placeholder='{"per_tx_cap_usd": "1", "daily_cap_usd": "10"}'
                aria-invalid={issues.length ? 'true' : 'false'}
                aria-describedby="cw-policy-issues"
                onInput={(e) => setPolicy((e.target as HTMLTextAreaElement).value)}
              />
              <div id="cw-policy-issues" class="hint" aria-live="polite">
                {issues.length ? (
                  <ul class="issues">
                    {issues.map((i) => (
                      <li key={i}>{i}</li>
                    ))}
                  </ul>
                ) : (
                  'Without a policy the wallet has no limits until you set one.'
                )}
              </div>
            </div>
            <button type="submit" class="primary" disabled={busy || issues.length > 0 || !chosen}>
              {busy ? 'Creating…' : 'Create wallet'}
            </button>
            {error ? <ErrorBox error={error} /> : null}
          </CardForm>
        );
      }}
    </Loaded>
  );
}

export function CreateWalletPage() {
  return (
    <>
      <h1>Create wallet</h1>
      <RequireSession>{() => <CreateWallet />}</RequireSession>
    </>
  );
}
